// A row's result as the store keeps it (RowResultRecord): TATRA's vote, the zero-shot baseline's
// answer when the job has one, each scored against the row's gold, and the runs as they voted.
import type { TaskDefinition } from '../common/task';
import type { TatraSettings, TatraResult } from '../common/tatra';
import { lenientMathCorrect } from '../engine';
import { isCorrect } from './metrics';
import type { RowResultRecord } from './store';
import type { BaselineResult, RowRun } from './types';

/** What JobManager saves for one finished row: its vote, scores, runs (examples only with scope `input`) and time. */
export function rowRecord(
  task: TaskDefinition,
  scope: TatraSettings['scope'],
  gold: string | null,
  result: TatraResult,
  base: { label: string | null; raw: string } | null,
  ms: number,
): RowResultRecord {
  const runs: RowRun[] = result.runs.map((r) => ({
    run: r.run,
    seed: r.seed,
    paraphrases: r.paraphrases,
    predictions: r.predictions,
    fallback: r.fallback,
    // Scope `input`: each row has its own examples; scope `run`: they live once per job.
    ...(scope === 'input' ? { examples: r.examples } : {}),
  }));
  let lenient: boolean | null = null;
  if (task.kind === 'math' && gold !== null) {
    // The reference code's score on the winning answer: the gold string appears in the raw
    // output of a variant that voted for the winner.
    const raws = result.runs.flatMap((r) => r.predictions).filter((p) => p.label !== null && p.label === result.label);
    lenient = raws.some((p) => lenientMathCorrect(gold, p.raw));
  }
  const baseline: BaselineResult | null = base ? { label: base.label, raw: base.raw, correct: gold === null ? null : isCorrect(task, gold, base.label) } : null;
  return {
    prediction: result.label,
    correct: gold === null ? null : isCorrect(task, gold, result.label),
    lenientCorrect: lenient,
    confidence: result.confidence,
    votes: result.votes,
    tieBreak: result.tieBreak,
    runs,
    baseline,
    stages: result.stages,
    ms,
  };
}
