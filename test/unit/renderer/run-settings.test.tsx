// @vitest-environment jsdom
// The run settings are defined once (electron/common/settings.ts): the zod schema, the CLI options
// and the one settings component that Classify, Evaluate and Compare render all take their bounds
// from there. Each face is checked against that one definition, field by field.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { Command } from 'commander';
import { INT_SETTING_NAMES, INT_SETTINGS, ROW_LIMIT, SCOPES } from '../../../electron/common/settings';
import { DEFAULT_SETTINGS, TatraSettings } from '../../../electron/common/tatra';
import { JobStartInput } from '../../../electron/common/contract/jobs';
import { addTatraSettingsOptions, tatraSettingsFrom, type TatraSettingsCliOptions } from '../../../electron/cli/options';
import { UserError } from '../../../electron/common/errors';
import { createApiClient, setApi } from '../../../renderer/src/api/client';
import { unknownMethodTransport } from '../../helpers/unknown-transport';
import { ClassifyView } from '../../../renderer/src/views/ClassifyView';
import { ExperimentView } from '../../../renderer/src/views/experiment/ExperimentView';
import { EvaluateView } from '../../../renderer/src/views/EvaluateView';

// Every call fails as unknown: the views render their empty forms, which is all this test reads.
const transport = unknownMethodTransport;

beforeAll(() => setApi(createApiClient(transport)));
afterEach(cleanup);
afterAll(() => setApi(null));

describe('run settings: one definition', () => {
  it('the schema accepts exactly each field’s bounds and the defaults', () => {
    expect(TatraSettings.parse(DEFAULT_SETTINGS)).toEqual(DEFAULT_SETTINGS);
    for (const name of INT_SETTING_NAMES) {
      const { min, max } = INT_SETTINGS[name];
      expect(TatraSettings.safeParse({ ...DEFAULT_SETTINGS, [name]: min }).success, `${name}=${min}`).toBe(true);
      expect(TatraSettings.safeParse({ ...DEFAULT_SETTINGS, [name]: max }).success, `${name}=${max}`).toBe(true);
      expect(TatraSettings.safeParse({ ...DEFAULT_SETTINGS, [name]: min - 1 }).success, `${name}=${min - 1}`).toBe(false);
      expect(TatraSettings.safeParse({ ...DEFAULT_SETTINGS, [name]: max + 1 }).success, `${name}=${max + 1}`).toBe(false);
    }
    const start = { taskId: 'sst2', dataPath: '/d.csv', inputColumn: 'text', generator: 'g', evaluator: 'e', settings: DEFAULT_SETTINGS };
    expect(JobStartInput.safeParse({ ...start, limit: ROW_LIMIT.max }).success).toBe(true);
    expect(JobStartInput.safeParse({ ...start, limit: ROW_LIMIT.max + 1 }).success).toBe(false);
  });

  it('the CLI takes the same bounds and defaults, and names the flag when out of range', () => {
    const parse = (args: string[]) => tatraSettingsFrom(addTatraSettingsOptions(new Command()).exitOverride().parse(args, { from: 'user' }).opts<TatraSettingsCliOptions>());
    expect(parse([])).toEqual(DEFAULT_SETTINGS);
    for (const name of INT_SETTING_NAMES) {
      const { min, max, flag } = INT_SETTINGS[name];
      expect(parse([flag, String(max)])[name]).toBe(max);
      expect(parse([flag, String(min)])[name]).toBe(min);
      expect(() => parse([flag, String(max + 1)])).toThrow(new UserError(`${flag} must be between ${min} and ${max}, got ${max + 1}`, 'bad_option'));
    }
    expect(parse(['--scope', 'input']).scope).toBe('input');
    expect(() => parse(['--scope', 'row'])).toThrow(/--scope must be run or input, got "row"/);
  });

  it.each([
    ['classify', () => <ClassifyView />],
    ['eval', () => <EvaluateView />],
    ['compare', () => <ExperimentView kind="compare" />],
  ])('the %s view shows every setting with the shared bounds', (prefix, view) => {
    render(view());
    for (const name of INT_SETTING_NAMES) {
      const input = screen.getByTestId(`${prefix}-${name}`);
      expect(input.getAttribute('min'), `${prefix}-${name} min`).toBe(String(INT_SETTINGS[name].min));
      expect(input.getAttribute('max'), `${prefix}-${name} max`).toBe(String(INT_SETTINGS[name].max));
    }
    const scope = screen.getByTestId(`${prefix}-scope`) as HTMLSelectElement;
    expect([...scope.options].map((o) => o.value)).toEqual([...SCOPES]);
    // The bounds are shown before they are hit; out of range is flagged once the field is left
    // (not while typing), as the API would reject it.
    const r = screen.getByTestId(`${prefix}-r`);
    expect(r.parentElement?.textContent).toContain(`${INT_SETTINGS.r.min}–${INT_SETTINGS.r.max}`);
    fireEvent.change(r, { target: { value: String(INT_SETTINGS.r.max + 1) } });
    expect(r.getAttribute('aria-invalid')).toBe('false');
    fireEvent.blur(r);
    expect(r.getAttribute('aria-invalid')).toBe('true');
    expect(r.parentElement?.textContent).toContain(`must be ${INT_SETTINGS.r.min}–${INT_SETTINGS.r.max}`);
    fireEvent.change(screen.getByTestId(`${prefix}-n`), { target: { value: '2' } });
    expect(screen.getByTestId(`${prefix}-calls`).textContent).toMatch(new RegExp(`^${3 * DEFAULT_SETTINGS.r} evaluator calls per input`));
  });
});
