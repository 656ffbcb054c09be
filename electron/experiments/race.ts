// Racing on the experiments' runner (docs/method.md §16, racing): a raced experiment runs its
// cells' jobs in rounds over the same rows, in a seeded shuffle of the data set (the race order),
// and after each round drops the pairings (a sweep: the (n, k) settings, all their seeds) shown
// worse than another still in at 95 % by common/stats/race.ts. Nothing of the race is stored but
// the rows: it is replayed from the rows every cell has finished (`raceOf`), so a race paused,
// stopped or killed resumes to the same decisions.
import type { RaceDrop, RaceSummary } from '../common/contract/experiment-progress';
import { replayRace, roundRows, seededRng, seedOf, type RaceEntrant } from '../common/stats';
import { rowOutcomes, type RowOutcome } from '../jobs/row-outcomes';
import type { JobStore } from '../jobs/store';
import type { CellState } from './kind';

/** Race position → row index: a seeded shuffle of a job's rows, the same for every cell and on every resume. */
export function raceOrder(experimentId: string, rows: number): number[] {
  const rng = seededRng(seedOf('race', experimentId));
  const order = Array.from({ length: rows }, (_, i) => i);
  for (let i = rows - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return order;
}

/** A cell as the race reads it: the pairing (setting) it runs for, and its job's rows (null before its job exists). */
export interface RacedCell {
  entrant: string;
  rows: readonly RowOutcome[] | null;
}

export interface Race {
  summary: RaceSummary;
  /** Drops by entrant. */
  drops: ReadonlyMap<string, RaceDrop>;
  /** Entrants still in. */
  alive: ReadonlySet<string>;
  /** The rows (indexes) the next round runs every cell still in on: the race order up to its end; empty once decided. */
  nextRows: ReadonlySet<number>;
}

/** An entrant's outcomes by race position (the mean over its cells where every one scored the row) and the rows all its cells have run. */
function entrantOf(key: string, cells: readonly RacedCell[], position: Int32Array, rows: number): RaceEntrant {
  const sums = new Float64Array(rows);
  const scored = new Int32Array(rows);
  let rowsRun = rows;
  for (const cell of cells) {
    const finished = new Uint8Array(rows);
    for (const r of cell.rows ?? []) {
      if (r.index >= rows) continue;
      const t = position[r.index]!;
      if (r.finished) finished[t] = 1;
      if (r.correct !== null) {
        sums[t]! += r.correct ? 1 : 0;
        scored[t]!++;
      }
    }
    let run = 0;
    while (run < rows && finished[run] === 1) run++;
    rowsRun = Math.min(rowsRun, run);
  }
  const outcomes = Array.from({ length: rows }, (_, t) => (scored[t] === cells.length ? sums[t]! / cells.length : null));
  return { key, rowsRun, outcomes };
}

/**
 * The race as the rows stand: its drops, who is still in, and the rows of the next round. `rows`:
 * each job's rows (every cell's job reads the same rows); `name`: an entrant as a reason says it.
 */
export function raceOf(experimentId: string, rows: number, cells: readonly RacedCell[], name: (entrant: string) => string): Race {
  const order = raceOrder(experimentId, rows);
  const position = new Int32Array(rows);
  order.forEach((index, t) => (position[index] = t));
  const keys = [...new Set(cells.map((c) => c.entrant))];
  const entrants = keys.map((key) => entrantOf(key, cells.filter((c) => c.entrant === key), position, rows));
  const perRound = roundRows(rows);
  const state = replayRace(entrants, rows, { roundRows: perRound });
  const drops = new Map<string, RaceDrop>();
  for (const s of state.standings) {
    if (!s.dropped) continue;
    const by = name(s.dropped.by);
    drops.set(s.key, { afterRows: s.dropped.afterRows, by, difference: s.dropped.difference, reason: `worse than ${by} at 95 % after ${s.dropped.afterRows} rows` });
  }
  // One left in the race runs the rest at once: there is no one to race.
  const end = state.rowsDecided >= rows ? 0 : state.alive.length <= 1 ? rows : Math.min(rows, state.rowsDecided + perRound);
  return {
    summary: { roundRows: perRound, rounds: state.rounds, rowsDecided: state.rowsDecided, alive: state.alive.length, dropped: drops.size },
    drops,
    alive: new Set(state.alive),
    nextRows: new Set(order.slice(0, end)),
  };
}

/** Each raced experiment's race as its rows last stood: replayed again only when a cell finished a row. */
export class Races {
  private readonly seen = new Map<string, { rows: string; race: Race }>();

  constructor(private readonly store: JobStore) {}

  /** The race of an experiment as its cells were last read (`cells`), if any. */
  get(id: string): Race | undefined {
    return this.seen.get(id)?.race;
  }

  /** The cells with their drops. A cell whose job failed is out of the race, not dropped. */
  cells<Cell>(id: string, states: readonly CellState<Cell>[], entrant: (cell: Cell) => { key: string; name: string }): CellState<Cell>[] {
    const rows = states.find((s) => s.job)?.job?.rowsTotal;
    if (rows === undefined) return [...states];
    const running = states.filter((s) => s.job?.status !== 'failed');
    const signature = JSON.stringify(running.map((s) => [s.job?.id, s.job?.rowsDone, s.job?.rowsFailed]));
    let seen = this.seen.get(id);
    if (seen?.rows !== signature) {
      const names = new Map(states.map((s) => [entrant(s.cell).key, entrant(s.cell).name]));
      const cells = running.map((s) => ({ entrant: entrant(s.cell).key, rows: s.job ? rowOutcomes(this.store, s.job.id) : null }));
      seen = { rows: signature, race: raceOf(id, rows, cells, (key) => names.get(key) ?? key) };
      this.seen.set(id, seen);
    }
    const { drops } = seen.race;
    return states.map((s) => ({ ...s, dropped: drops.get(entrant(s.cell).key) ?? null }));
  }
}
