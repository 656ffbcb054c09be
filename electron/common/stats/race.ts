// Racing (docs/method.md §16): pairings run the same rows in rounds, and one is dropped once it is
// worse than another still in the race at 95 % under a test that may look after every round
// without inflating its error.
//
// The test is a test by betting (Shafer 2021; Waudby-Smith & Ramdas 2023). For each ordered pair
// (i, j), a wealth that starts at 1 bets on "j is better than i" at each row both scored:
// K ← K·(1 + λ·(x_j − x_i)), x the row's outcome in [0, 1] (right or wrong; a sweep setting's mean
// over its seeds), λ ∈ [0, ½] chosen from the rows before (so it is predictable). If i is not
// worse than j, the expected factor is at most 1 whatever λ was, K is a nonnegative
// supermartingale, and by Ville's inequality it ever reaches 1/a with probability at most a, however
// often it is looked at. With m pairings the truly best can be dropped only by one of the m − 1
// others, so each pair's test runs at a = α/(m − 1): the best is dropped with probability at
// most α in all (a union bound). The rows must come in an order that does not depend on their
// outcomes (a seeded shuffle of the data set), as a sample of the inputs the pairings will meet.
//
// Written here: the betting test is a few lines that no npm package we found offers (the
// published code is Python and R).

export const RACE_ALPHA = 0.05;
/** The most λ may bet of the wealth: with outcomes in [0, 1] a factor never falls below ½. */
const MAX_BET = 0.5;

/** Rows per round: 5 % of the rows, at least 20 (a round is what every pairing still in runs before the race looks). */
export function roundRows(totalRows: number): number {
  return Math.max(20, Math.ceil(totalRows / 20));
}

export interface RaceEntrant {
  key: string;
  /** Positions of the race order it has finished (scored or not). */
  rowsRun: number;
  /** By position in the race order: 0..1 (1 right), null or absent where the row has no score (no gold, failed). */
  outcomes: ReadonlyArray<number | null | undefined>;
}

export interface RaceDrop {
  /** Rows of the race order it had run when it was dropped (the end of a round). */
  afterRows: number;
  round: number;
  /** The pairing it was shown worse than. */
  by: string;
  /** The betting wealth against it (at least (m − 1)/α). */
  evidence: number;
  /** Its accuracy minus that pairing's, on the rows both scored by then. */
  difference: number;
}

export interface RaceStanding {
  key: string;
  dropped: RaceDrop | null;
}

export interface RaceState {
  /** Rounds every pairing still in has finished. */
  rounds: number;
  /** Rows of the race order those rounds cover. */
  rowsDecided: number;
  standings: RaceStanding[];
  /** Keys still in the race, in the order given. */
  alive: string[];
  /** The wealth a pair's test must reach to drop: (m − 1)/α. */
  threshold: number;
}

interface Bet {
  logWealth: number;
  sum: number;
  sumSquares: number;
  /** Outcome sums of both on the rows both scored, for the difference shown with a drop. */
  rows: number;
  diff: number;
}

const newBet = (): Bet => ({ logWealth: 0, sum: 0, sumSquares: 0, rows: 0, diff: 0 });

/**
 * One row of the bet that j is better than i: λ = Σd / (Σd² + 1) over the rows before, clipped to
 * [0, ½] (a growth-rate-adaptive bet, regularised by one pseudo-row).
 */
function betOn(bet: Bet, d: number): void {
  const lambda = Math.min(MAX_BET, Math.max(0, bet.sum / (bet.sumSquares + 1)));
  bet.logWealth += Math.log1p(lambda * d);
  bet.sum += d;
  bet.sumSquares += d * d;
  bet.rows++;
  bet.diff += d;
}

/**
 * Replays the race from the outcomes recorded so far: the same outcomes give the same drops, so a
 * race stopped or killed resumes where it was by calling this again. A round is decided once every
 * pairing still in has run it; the leader on the rows so far is never dropped.
 */
export function replayRace(entrants: readonly RaceEntrant[], totalRows: number, options: { alpha?: number; roundRows?: number } = {}): RaceState {
  const alpha = options.alpha ?? RACE_ALPHA;
  const perRound = options.roundRows ?? roundRows(totalRows);
  const m = entrants.length;
  const threshold = m <= 1 ? Infinity : (m - 1) / alpha;
  const bets = entrants.map(() => entrants.map(newBet));
  const alive = new Set(entrants.map((_, i) => i));
  const standings: RaceStanding[] = entrants.map((e) => ({ key: e.key, dropped: null }));
  const right = new Float64Array(m);
  const scored = new Float64Array(m);
  let rounds = 0;
  let rowsDecided = 0;
  while (rowsDecided < totalRows) {
    const end = Math.min(totalRows, rowsDecided + perRound);
    if ([...alive].some((i) => entrants[i]!.rowsRun < end)) break;
    for (let t = rowsDecided; t < end; t++) {
      for (const i of alive) {
        const xi = entrants[i]!.outcomes[t];
        if (xi === null || xi === undefined) continue;
        right[i]! += xi;
        scored[i]!++;
        for (const j of alive) {
          const xj = entrants[j]!.outcomes[t];
          if (j !== i && xj !== null && xj !== undefined) betOn(bets[i]![j]!, xj - xi);
        }
      }
    }
    rowsDecided = end;
    rounds++;
    // After the last round every pairing still in has run every row: a drop would save nothing, and
    // the verdict on them is the paired comparison's (tied for best), not the race's.
    if (alive.size <= 1 || end >= totalRows) continue;
    const leader = [...alive].reduce((b, i) => (accuracy(right, scored, i) > accuracy(right, scored, b) ? i : b));
    const drops: Array<[number, RaceDrop]> = [];
    for (const i of alive) {
      if (i === leader) continue;
      let by = -1;
      for (const j of alive) if (j !== i && (by < 0 || bets[i]![j]!.logWealth > bets[i]![by]!.logWealth)) by = j;
      const bet = bets[i]![by]!;
      if (bet.logWealth >= Math.log(threshold)) {
        drops.push([i, { afterRows: end, round: rounds, by: entrants[by]!.key, evidence: Math.exp(bet.logWealth), difference: -bet.diff / bet.rows }]);
      }
    }
    for (const [i, drop] of drops) {
      standings[i]!.dropped = drop;
      alive.delete(i);
    }
  }
  return { rounds, rowsDecided, standings, alive: entrants.flatMap((e, i) => (alive.has(i) ? [e.key] : [])), threshold };
}

function accuracy(right: Float64Array, scored: Float64Array, i: number): number {
  return scored[i]! === 0 ? 0 : right[i]! / scored[i]!;
}
