// The one set of TATRA run-settings fields (n, k, r, seed, example scope) that Classify, Evaluate
// and Compare share. Bounds, defaults and wording come from electron/common/settings.ts, the same
// place the zod schema and the CLI read them, so the form cannot accept what the API rejects.
// A view adds its own fields (row limit, …) as children, in the same row.
import type { ReactNode } from 'react';
import { INT_SETTING_NAMES, INT_SETTINGS, SCOPE_SETTING, SCOPES, evaluatorCalls } from '../../../electron/common/settings';
import type { ExampleScope, TatraSettings } from '../../../electron/common/tatra';
import { NumberField } from './Common';

export function RunSettingsFields(props: { value: TatraSettings; onChange(v: TatraSettings): void; testIdPrefix: string; children?: ReactNode }) {
  const { value, onChange, testIdPrefix } = props;
  return (
    <div className="row" style={{ alignItems: 'flex-start', flexWrap: 'wrap' }} data-testid={`${testIdPrefix}-settings`}>
      {INT_SETTING_NAMES.map((name) => {
        const s = INT_SETTINGS[name];
        return <NumberField key={name} label={s.label} value={value[name]} min={s.min} max={s.max} onChange={(v) => onChange({ ...value, [name]: v })} testId={`${testIdPrefix}-${name}`} />;
      })}
      <label className="field">
        <span>{SCOPE_SETTING.label}</span>
        <select value={value.scope} onChange={(e) => onChange({ ...value, scope: e.target.value as ExampleScope })} style={{ width: 190 }} data-testid={`${testIdPrefix}-scope`}>
          {SCOPES.map((scope) => (
            <option key={scope} value={scope}>
              {SCOPE_SETTING.choices[scope]}
            </option>
          ))}
        </select>
      </label>
      {props.children}
      <span className="field-hint" style={{ alignSelf: 'center', maxWidth: 260 }} data-testid={`${testIdPrefix}-calls`}>
        {evaluatorCalls(value)} evaluator calls per input. The paper's trade-off is n=5, k=8; its tables use n=10, k=16, r=15.
      </span>
    </div>
  );
}
