// A budget for a run: the job (or every job of a sweep together) stops cleanly before exceeding
// this many model calls, tokens (prompt and completion) or US dollars, paused and resumable with a
// larger one. The same words as the CLI's --budget: calls=N, tokens=N, usd=X.
import { useState } from 'react';
import { type Budget, parseBudget } from '../../../electron/common/plan';

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
