// @vitest-environment jsdom
// A comparison's footnote names the pairs tied for best and says what that means once: the page's
// note and the CLI's report each say "tied for best" once for the names, never again as a label
// of the explanation after them (docs/method.md §16).
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, render, screen } from '@testing-library/react';
import { formatComparison } from '../../../electron/cli/commands/compare';
import type { ComparisonPair, ComparisonResult } from '../../../electron/common/contract/comparisons';
import { pendingPair } from '../../../electron/experiments';
import { pairsVersusBest } from '../../../electron/experiments/compare-stats';
import { comparePage } from '../../../renderer/src/views/experiment/compare';

afterEach(cleanup);

const outcomes = (right: number, rows = 200): boolean[] => Array.from({ length: rows }, (_, i) => i < right);
const rights: Record<string, number> = { a: 170, b: 166, c: 140, d: 120 };
const pair = (generator: string, evaluator: string, jobId: string): ComparisonPair => ({ ...pendingPair({ generator, evaluator }), jobId, status: 'done', rowsDone: 200, rowsTotal: 200, accuracy: rights[jobId]! / 200 });
// A 170 and B 166 of 200 right (tied), C 140 and D 120 (told apart).
const pairs = pairsVersusBest('cmp', [pair('/g1', '/e1', 'a'), pair('/g1', '/e2', 'b'), pair('/g2', '/e1', 'c'), pair('/g2', '/e2', 'd')], (id) => outcomes(rights[id]!));
const result = {
  id: 'cmp',
  kind: 'compare',
  status: 'done',
  error: null,
  warnings: [],
  race: null,
  spec: { taskId: 'sst2', dataPath: '/d.csv', generators: ['/g1', '/g2'], evaluators: ['/e1', '/e2'], settings: { n: 1, k: 2, r: 1, seed: 1, scope: 'run' } },
  pairs,
} as unknown as ComparisonResult;

const count = (text: string, what: RegExp) => (text.match(what) ?? []).length;

describe("a comparison's tied-for-best footnote", () => {
  it('on the page names the tied pairs after "Tied for best" once, then what it means', () => {
    const Result = comparePage.Result;
    render(<Result result={result as never} />);
    const note = screen.getByTestId('compare-tied').textContent ?? '';
    expect(note).toMatch(/^Tied for best ★: g1 → e1, g1 → e2 \(2 pairs not told apart from the best pair at 95 %/);
    expect(count(note, /tied for best/gi)).toBe(1);
    expect(note).toContain("Accuracy intervals: 95 % Wilson; macro-F1: 95 % percentile bootstrap over rows; differences: points against the best, Tango's paired 95 % interval.");
  });

  it("draws each pair's accuracy with its Wilson interval, and its text table says so", () => {
    const Result = comparePage.Result;
    render(<Result result={result as never} />);
    const table = screen.getByTestId('compare-chart-text');
    expect(table.querySelector('caption')?.textContent).toBe('Accuracy by generator, one bar per evaluator; error bars: 95 % Wilson score interval');
    // g1 → e1: 170 of 200 right, Wilson [79.4, 89.3] (by hand: centre 0.8434, half-width 0.0495).
    expect([...table.querySelectorAll('tbody tr')].map((r) => r.textContent)).toEqual(['g185.0% [79.4, 89.3]83.0% [77.2, 87.6]', 'g270.0% [63.3, 75.9]60.0% [53.1, 66.5]']);
  });

  it('in the CLI names them once and says what it means on the same line', () => {
    const text = formatComparison(result);
    expect(text).toContain("tied for best (*): g1 → e1, g1 → e2: not told apart from the best pair at 95 % (exact McNemar on the rows both scored, Holm's correction over the pairs compared)");
    expect(count(text, /tied for best:/gi)).toBe(0);
    // The names' line and the matrix's legend ("* tied for best").
    expect(count(text, /tied for best/gi)).toBe(2);
  });
});
