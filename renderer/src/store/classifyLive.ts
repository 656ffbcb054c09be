// Pure bookkeeping for a live classify run: folds the engine's events, in order, into what the
// Classify view draws (per run: examples by label, paraphrases, predictions as they arrive) and
// the running vote. No React, no API: unit-tested on its own.
import { callsPerRun, exampleCallsPerRun } from '../../../electron/common/calls';
import type { TaskDefinition } from '../../../electron/common/task';
import type { Example, ParaphraseFallback, Prediction, TatraEvent, TatraResult, TatraSettings } from '../../../electron/common/tatra';

export interface LiveRun {
  run: number;
  seed: number;
  /** Examples grouped by the label they were requested for ("" for math tasks). */
  examplesByLabel: Record<string, Example[]>;
  examplesCached: boolean;
  paraphrases: string[] | null;
  fallback: ParaphraseFallback | null;
  /** Indexed by variant (0 = original); holes until a prediction arrives. */
  predictions: (Prediction | undefined)[];
}

export interface LiveState {
  runs: LiveRun[];
  result: TatraResult | null;
  /** Events applied so far (a reloaded page replays the stored ones, then follows live). */
  applied: number;
}

export function emptyLive(): LiveState {
  return { runs: [], result: null, applied: 0 };
}

function withRun(state: LiveState, run: number, update: (r: LiveRun) => LiveRun): LiveRun[] {
  const runs = state.runs.slice();
  let i = runs.findIndex((r) => r.run === run);
  if (i < 0) {
    runs.push({ run, seed: 0, examplesByLabel: {}, examplesCached: false, paraphrases: null, fallback: null, predictions: [] });
    runs.sort((a, b) => a.run - b.run);
    i = runs.findIndex((r) => r.run === run);
  }
  runs[i] = update(runs[i]!);
  return runs;
}

export function applyEvent(state: LiveState, event: TatraEvent): LiveState {
  const applied = state.applied + 1;
  switch (event.type) {
    case 'run-start':
      return { ...state, applied, runs: withRun(state, event.run, (r) => ({ ...r, seed: event.seed })) };
    case 'examples':
      return {
        ...state,
        applied,
        runs: withRun(state, event.run, (r) => ({
          ...r,
          examplesCached: r.examplesCached || event.cached,
          // One examples event per run and label: replacing (not appending) keeps a replay idempotent.
          examplesByLabel: { ...r.examplesByLabel, [event.label ?? '']: event.examples },
        })),
      };
    case 'paraphrases':
      return { ...state, applied, runs: withRun(state, event.run, (r) => ({ ...r, paraphrases: event.paraphrases, fallback: event.fallback })) };
    case 'prediction':
      return {
        ...state,
        applied,
        runs: withRun(state, event.run, (r) => {
          const predictions = r.predictions.slice();
          predictions[event.prediction.variant] = event.prediction;
          return { ...r, predictions };
        }),
      };
    case 'done':
      return { ...state, applied, result: event.result };
  }
}

/** Valid votes per label so far; every given label present (0 when none). */
export function liveVotes(state: LiveState, labels: readonly string[]): Record<string, number> {
  if (state.result) return { ...Object.fromEntries(labels.map((l) => [l, 0])), ...state.result.votes };
  const votes: Record<string, number> = Object.fromEntries(labels.map((l) => [l, 0]));
  for (const run of state.runs) {
    for (const p of run.predictions) {
      if (p?.label != null) votes[p.label] = (votes[p.label] ?? 0) + 1;
    }
  }
  return votes;
}

/** Predictions received so far and how many the run will make in all, (n+1)·r. */
export function liveCounts(state: LiveState, n: number, r: number): { received: number; expected: number } {
  let received = 0;
  for (const run of state.runs) for (const p of run.predictions) if (p) received++;
  return { received, expected: (n + 1) * r };
}

export interface LiveStage {
  /** What the engine is doing, for the status line and its live region: changes only between stages. */
  text: string;
  /** Model calls made (or answered from a cache) and planned: the count moves from the first call. */
  calls: { done: number; total: number };
  /** calls.done / calls.total; 1 once done. */
  fraction: number;
}

/**
 * Where a run stands, in model calls (common/calls.ts): each examples event is one call, each
 * run's paraphrases one (when n > 0), each prediction one. The engine writes a wave's examples and
 * paraphrases side by side, then evaluates, so the stage names whichever are still outstanding.
 */
export function liveStage(state: LiveState, settings: Pick<TatraSettings, 'n' | 'k' | 'r'>, task: Pick<TaskDefinition, 'kind' | 'labels'>): LiveStage {
  const perRunExamples = exampleCallsPerRun(task, settings.k);
  const total = settings.r * callsPerRun(task, settings, false);
  let examples = 0;
  let paraphrases = 0;
  let predictions = 0;
  let examplesOwed = false;
  let paraphrasesOwed = false;
  for (const run of state.runs) {
    const made = Math.min(perRunExamples, Object.keys(run.examplesByLabel).length);
    examples += made;
    if (made < perRunExamples) examplesOwed = true;
    if (run.paraphrases) paraphrases += settings.n > 0 ? 1 : 0;
    else if (settings.n > 0) paraphrasesOwed = true;
    for (const p of run.predictions) if (p) predictions++;
  }
  const done = Math.min(total, examples + paraphrases + predictions);
  const calls = { done: state.result ? total : done, total };
  if (state.result) return { text: 'Done', calls, fraction: 1 };
  const fraction = total > 0 ? done / total : 0;
  if (state.runs.length === 0) return { text: 'Loading models…', calls, fraction };
  const text = examplesOwed && paraphrasesOwed ? 'Writing examples and paraphrases' : examplesOwed ? 'Writing examples' : paraphrasesOwed ? 'Writing paraphrases' : 'Evaluating';
  return { text, calls, fraction };
}

/** The label that leads the running vote (ties: label order), or null before the first vote. */
export function leader(votes: Record<string, number>, labels: readonly string[]): string | null {
  let best: string | null = null;
  for (const l of [...labels, ...Object.keys(votes).filter((k) => !labels.includes(k))]) {
    if ((votes[l] ?? 0) > 0 && (best === null || (votes[l] ?? 0) > (votes[best] ?? 0))) best = l;
  }
  return best;
}
