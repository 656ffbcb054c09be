// Pure bookkeeping for a live classify run: folds the engine's events, in order, into what the
// Classify view draws (per run: examples by label, paraphrases, predictions as they arrive) and
// the running vote. No React, no API: unit-tested on its own.
import type { Example, ParaphraseFallback, Prediction, TatraEvent, TatraResult } from '../../../electron/common/tatra';

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
  /** What the engine is doing now, for the status line. */
  text: string;
  /** 0..1 over every step: examples per label and run, paraphrases per run, predictions. */
  fraction: number;
}

/** Where a run stands: the engine writes all runs' examples, then paraphrases, then evaluates. */
export function liveStage(state: LiveState, n: number, r: number, labelCount: number): LiveStage {
  const exampleCalls = Math.max(1, labelCount) * r;
  let examples = 0;
  let paraphrases = 0;
  let predictions = 0;
  for (const run of state.runs) {
    examples += Object.keys(run.examplesByLabel).length;
    if (run.paraphrases) paraphrases++;
    for (const p of run.predictions) if (p) predictions++;
  }
  const expected = (n + 1) * r;
  const fraction = (Math.min(examples, exampleCalls) + paraphrases + predictions) / (exampleCalls + r + expected);
  if (state.result) return { text: 'Done', fraction: 1 };
  if (state.runs.length === 0) return { text: 'Loading models…', fraction: 0 };
  if (examples < exampleCalls) return { text: `Writing examples (${examples} of ${exampleCalls} calls)`, fraction };
  if (paraphrases < r) return { text: `Writing paraphrases (${paraphrases} of ${r} runs)`, fraction };
  return { text: `Evaluating (${predictions} of ${expected} predictions)`, fraction };
}

/** The label that leads the running vote (ties: label order), or null before the first vote. */
export function leader(votes: Record<string, number>, labels: readonly string[]): string | null {
  let best: string | null = null;
  for (const l of [...labels, ...Object.keys(votes).filter((k) => !labels.includes(k))]) {
    if ((votes[l] ?? 0) > 0 && (best === null || (votes[l] ?? 0) > (votes[best] ?? 0))) best = l;
  }
  return best;
}
