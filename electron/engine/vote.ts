// Majority vote over all (n+1)·r predictions with the tie-break chain of docs/method.md §9.
import { type TaskDefinition, labelNames } from '../common/task';
import { type TatraResult } from '../common/tatra';

export type TieBreak = TatraResult['tieBreak'];

export interface Vote {
  run: number;
  /** 0 is the original input. */
  variant: number;
  /** Task label or normalised math answer; null is no vote. */
  label: string | null;
}

export interface VoteOptions {
  /** Ordered task labels; empty for math (answers are ordered by first appearance). */
  labels: readonly string[];
  defaultLabel?: string;
  /** Counted and shown, never the winner (SUBJ's "unsure"). */
  abstainLabel?: string;
}

/** A task's vote options: its labels in order (none for math), its default and abstain labels. */
export function taskVoteOptions(task: TaskDefinition): VoteOptions {
  return {
    labels: task.kind === 'math' ? [] : labelNames(task),
    ...(task.defaultLabel !== undefined ? { defaultLabel: task.defaultLabel } : {}),
    ...(task.abstainLabel !== undefined ? { abstainLabel: task.abstainLabel } : {}),
  };
}

export interface VoteOutcome {
  label: string | null;
  /** Winner's share of all valid votes (abstentions included in the total). */
  confidence: number;
  /** Every task label (and the abstain label) present, 0 when it got none; math: every answer seen. */
  votes: Record<string, number>;
  tieBreak: TieBreak;
  /** Labels that shared the top count (one entry when there was no tie). */
  tied: string[];
}

/**
 * Unweighted majority. Ties, in order: the label the original input got in the first run, if it
 * is among the tied; else the tied label the originals got most often across runs (when that is
 * itself a tie, the following rules choose among just those); else the task's default label if it
 * is tied; else the first tied label in label order. The abstain label never wins.
 */
export function tallyVotes(predictions: readonly Vote[], opts: VoteOptions): VoteOutcome {
  // No prototype: a math answer may literally be "constructor" or "__proto__".
  const votes: Record<string, number> = Object.create(null) as Record<string, number>;
  const order: string[] = [];
  for (const l of opts.labels) {
    votes[l] = 0;
    order.push(l);
  }
  if (opts.abstainLabel !== undefined) votes[opts.abstainLabel] = 0;
  let total = 0;
  for (const p of predictions) {
    if (p.label === null) continue;
    if (opts.labels.length > 0 && !Object.hasOwn(votes, p.label)) continue;
    if (!Object.hasOwn(votes, p.label)) {
      votes[p.label] = 0;
      order.push(p.label);
    }
    votes[p.label] = (votes[p.label] ?? 0) + 1;
    total++;
  }
  if (total === 0) return { label: null, confidence: 0, votes, tieBreak: 'none', tied: [] };

  const candidates = order.filter((l) => l !== opts.abstainLabel);
  const top = Math.max(...candidates.map((l) => votes[l] ?? 0));
  let tied = candidates.filter((l) => (votes[l] ?? 0) === top);
  const done = (label: string, tieBreak: TieBreak, allTied: string[]): VoteOutcome => ({
    label,
    confidence: (votes[label] ?? 0) / total,
    votes,
    tieBreak,
    tied: allTied,
  });
  const allTied = tied;
  if (tied.length === 1) return done(tied[0] as string, 'none', allTied);

  const originals = predictions.filter((p) => p.variant === 0 && p.label !== null);
  const firstRun = Math.min(...predictions.map((p) => p.run));
  const firstOriginal = originals.find((p) => p.run === firstRun)?.label ?? null;
  if (firstOriginal !== null && tied.includes(firstOriginal)) return done(firstOriginal, 'first-original', allTied);

  const originalCounts = new Map<string, number>();
  for (const p of originals) if (tied.includes(p.label as string)) originalCounts.set(p.label as string, (originalCounts.get(p.label as string) ?? 0) + 1);
  const bestOriginal = Math.max(0, ...originalCounts.values());
  if (bestOriginal > 0) {
    const leaders = tied.filter((l) => originalCounts.get(l) === bestOriginal);
    if (leaders.length === 1) return done(leaders[0] as string, 'originals-majority', allTied);
    tied = leaders;
  }

  if (opts.defaultLabel !== undefined && tied.includes(opts.defaultLabel)) return done(opts.defaultLabel, 'default-label', allTied);
  return done(tied[0] as string, 'label-order', allTied);
}

/** The first run's vote on the original input: the label a final tie goes to when it is tied (§9). */
export function firstOriginal(votes: readonly Vote[]): string | null {
  let first: Vote | null = null;
  for (const v of votes) if (v.variant === 0 && (first === null || v.run < first.run)) first = v;
  return first?.label ?? null;
}

/**
 * Whether the vote is decided whatever the votes still to come: the leading label (the abstain
 * label never leads) has more votes than the runner-up plus every vote to come. Strictly more, so
 * even if every remaining vote went to the runner-up the leader would still win outright: no tie,
 * so no tie-break rule can change the winner either. `votes` as tallyVotes counts them.
 */
export function voteDecided(votes: Readonly<Record<string, number>>, votesToCome: number, opts: Partial<VoteOptions>): boolean {
  let leader = 0;
  let runnerUp = 0;
  for (const [label, count] of Object.entries(votes)) {
    if (label === opts.abstainLabel) continue;
    if (count > leader) {
      runnerUp = leader;
      leader = count;
    } else if (count > runnerUp) runnerUp = count;
  }
  return leader > runnerUp + votesToCome;
}

/**
 * The runs of each wave. Without early stop, one wave of every run (most parallel). With the exact
 * rule, first the fewest runs that could decide the vote alone (more than half of r), then half of
 * what is left each time, so most work still runs side by side and little is paid past the point
 * of decision. The confident rule can stop long before half of r, so it looks after every fifth
 * of r (each wave still a batch of runs decoded side by side), and the first fifth goes in
 * doubling waves of 1, 1, 2, 4, … runs: most inputs are sure after a run or two, and a first
 * wave of a fifth would spend the rest of it (docs/method.md §10 gives the trade and its figures).
 */
export function runWaves(r: number, earlyStop: boolean | 'exact' | 'confident'): number[][] {
  const all = Array.from({ length: r }, (_, j) => j);
  if (earlyStop === false) return [all];
  const waves: number[][] = [];
  if (earlyStop === 'confident') {
    const size = Math.max(1, Math.ceil(r / 5));
    let start = 0;
    // The first fifth: each wave as many runs as cast so far (one to begin with).
    while (start < Math.min(size, r)) {
      const next = Math.min(Math.max(1, start), size - start);
      waves.push(all.slice(start, start + next));
      start += next;
    }
    for (; start < r; start += size) waves.push(all.slice(start, start + size));
    return waves;
  }
  let next = Math.floor(r / 2) + 1;
  let start = 0;
  while (start < r) {
    waves.push(all.slice(start, start + next));
    start += next;
    next = Math.ceil((r - start) / 2);
  }
  return waves;
}
