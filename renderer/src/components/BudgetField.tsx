// A budget for a run: the job (or every job of a sweep or a comparison together) stops cleanly
// before exceeding this many model calls, tokens (prompt and completion) or US dollars, paused and
// resumable with a larger one. The same words as the CLI's --budget: calls=N, tokens=N, usd=X.
import { useState } from 'react';
import { type Budget, type Usage, formatBudget, parseBudget } from '../../../electron/common/plan';

/** The field's text, what it parses to (undefined: none given), and its problem in words. */
export function useBudget(): { text: string; setText: (t: string) => void; budget: Budget | undefined; problem: string | null } {
  const [text, setText] = useState('');
  const parsed = text.trim() === '' ? undefined : parseBudget(text);
  return { text, setText, budget: typeof parsed === 'string' ? undefined : parsed, problem: typeof parsed === 'string' ? parsed : null };
}

export function BudgetField({ state, testId, placeholder = 'Budget, e.g. calls=5000' }: { state: ReturnType<typeof useBudget>; testId: string; placeholder?: string }) {
  return (
    <label className="field" style={{ maxWidth: 220 }} title="Stop cleanly before exceeding this many model calls, tokens (prompt and completion) or US dollars: calls=N, tokens=N or usd=X. The run pauses and can be resumed with a larger budget.">
      <span className="sr-only">Budget</span>
      <input type="text" value={state.text} onChange={(e) => state.setText(e.target.value)} placeholder={placeholder} aria-invalid={state.problem !== null} data-testid={testId} />
      {state.problem ? <span className="field-error">{state.problem}</span> : null}
    </label>
  );
}

/**
 * Said on a job, a sweep or a comparison its budget paused: what it was, what was spent, and a
 * larger budget to resume with (one banner for the three kinds of long work).
 */
export function BudgetStopBanner({ budget, usage, noun, onResume, testIdPrefix }: { budget: Budget | null; usage: Usage | null; noun: string; onResume(budget: Budget): void; testIdPrefix: string }) {
  const [text, setText] = useState('');
  const next = text.trim() === '' ? null : parseBudget(text);
  const problem = typeof next === 'string' ? next : null;
  return (
    <div className="banner warn" data-testid={`${testIdPrefix}-budget-stop`}>
      Paused: the next {noun} would have exceeded its budget ({budget ? formatBudget(budget) : '–'}). Spent so far: {usage ? `${usage.calls.total.toLocaleString()} model calls, ${(usage.tokens.prompt + usage.tokens.completion).toLocaleString()} tokens` : '–'}.{' '}
      <label className="field inline">
        <span className="sr-only">New budget</span>
        <input type="text" value={text} onChange={(e) => setText(e.target.value)} placeholder="a larger budget, e.g. calls=5000" aria-invalid={problem !== null} data-testid={`${testIdPrefix}-budget-new`} />
      </label>{' '}
      <button className="btn small primary" disabled={next === null || problem !== null} onClick={() => (next && typeof next !== 'string' ? onResume(next) : undefined)} data-testid={`${testIdPrefix}-budget-resume`}>
        Resume with it
      </button>
      {problem ? <span className="field-error"> {problem}</span> : null}
    </div>
  );
}
