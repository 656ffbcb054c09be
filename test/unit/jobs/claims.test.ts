// Claimed work (jobs/claims.ts), once for both kinds: a job and an experiment are claimed, beaten,
// released and stopped by the same code, so each case below runs on both. Two processes are two
// owner strings on one real SQLite file; liveness is owner.ts ownerLive where the case is about a
// heartbeat, and a stated answer where it is about a claim.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openJobStore, type JobStore } from '../../../electron/jobs/store';
import { ExperimentStore } from '../../../electron/jobs/experiment-store';
import { HEARTBEAT_MS, ownerLive } from '../../../electron/jobs/owner';
import type { WorkClaims } from '../../../electron/jobs/claims';
import { storePausedJob } from '../../helpers/stored-job';

let dir: string;
let store: JobStore;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tatra-claims-'));
  store = openJobStore(dir);
});
afterEach(() => {
  store.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Kind {
  table: 'jobs' | 'experiments';
  claims: () => WorkClaims;
  /** A new piece of work of this kind, stored and not running. */
  make: () => Promise<string>;
}

const KINDS: Kind[] = [
  { table: 'jobs', claims: () => store.claims, make: () => storePausedJob(store, { name: 'job', rows: 2, input: (i) => `row ${i}` }) },
  {
    table: 'experiments',
    claims: () => new ExperimentStore<{ cells: number }>(store, 'sweep').claims,
    make: async () => new ExperimentStore<{ cells: number }>(store, 'sweep').create('sweep', { cells: 1 }),
  },
];

const live = () => true;
const dead = () => false;

function row(kind: Kind, id: string): { status: string; owner: string | null; updated: string; error: string | null } {
  return store.db.prepare(`SELECT status, owner, updated, error FROM ${kind.table} WHERE id = ?`).get(id) as never;
}

function setRow(kind: Kind, id: string, values: { status?: string; owner?: string | null; updated?: string }): void {
  const current = row(kind, id);
  store.db
    .prepare(`UPDATE ${kind.table} SET status = ?, owner = ?, updated = ? WHERE id = ?`)
    .run(values.status ?? current.status, values.owner === undefined ? current.owner : values.owner, values.updated ?? current.updated, id);
}

describe.each(KINDS)('claimed work: $table', (kind) => {
  it('a claim by a live process is refused; the first claimant keeps it', async () => {
    const id = await kind.make();
    expect(kind.claims().claim(id, 'a:1', dead)).toEqual({ claimed: true });
    expect(row(kind, id)).toMatchObject({ status: 'running', owner: 'a:1' });
    expect(kind.claims().claim(id, 'b:2', live)).toEqual({ claimed: false, reason: 'running' });
    expect(row(kind, id)).toMatchObject({ status: 'running', owner: 'a:1' });
    // The owner itself claiming again (a resume in the same process) is not refused.
    expect(kind.claims().claim(id, 'a:1', live)).toEqual({ claimed: true });
  });

  it("a dead owner's work is taken over, and the dead owner's last words change nothing", async () => {
    const id = await kind.make();
    kind.claims().claim(id, 'a:1', dead);
    expect(kind.claims().claim(id, 'b:2', dead)).toEqual({ claimed: true });
    expect(row(kind, id)).toMatchObject({ status: 'running', owner: 'b:2' });
    // a comes back (it was only slow): its heartbeat and its outcome touch nothing b holds.
    const before = row(kind, id).updated;
    kind.claims().beat(id, 'a:1');
    expect(kind.claims().release(id, 'a:1', 'failed', 'a lost it')).toBe(false);
    expect(row(kind, id)).toMatchObject({ status: 'running', owner: 'b:2', updated: before, error: null });
    expect(kind.claims().release(id, 'b:2', 'paused', null, 'budget')).toBe(true);
    expect(row(kind, id)).toMatchObject({ status: 'paused', owner: null });
    expect(store.db.prepare(`SELECT stopped_by AS s FROM ${kind.table} WHERE id = ?`).get(id)).toEqual({ s: 'budget' });
  });

  it('a heartbeat lost: another machine whose owner stopped beating for three beats is taken over', async () => {
    const id = await kind.make();
    const other = 'another-machine:4242';
    kind.claims().claim(id, other, dead);
    // Beating: its row is fresh, so the owner reads live and a claim from here is refused.
    setRow(kind, id, { updated: new Date(Date.now() - 10 * HEARTBEAT_MS).toISOString() });
    kind.claims().beat(id, other);
    expect(Date.now() - Date.parse(row(kind, id).updated)).toBeLessThan(3 * HEARTBEAT_MS);
    expect(kind.claims().claim(id, 'here:1', ownerLive)).toEqual({ claimed: false, reason: 'running' });
    // Silent for three beats: that machine's process is gone, and the work is this one's.
    setRow(kind, id, { updated: new Date(Date.now() - 3 * HEARTBEAT_MS - 1000).toISOString() });
    expect(kind.claims().claim(id, 'here:1', ownerLive)).toEqual({ claimed: true });
    expect(kind.claims().owner(id)).toMatchObject({ owner: 'here:1' });
  });

  it('done work and work that is not there are refused', async () => {
    const id = await kind.make();
    kind.claims().claim(id, 'a:1', dead);
    kind.claims().release(id, 'a:1', 'done', null);
    expect(kind.claims().claim(id, 'b:2', dead)).toEqual({ claimed: false, reason: 'done' });
    expect(kind.claims().claim('nothing', 'b:2', dead)).toEqual({ claimed: false, reason: 'unknown' });
    expect(kind.claims().owner(id)).toBeNull();
  });

  it("a stop from here pauses work its dead owner left running, unless another process claimed it first", async () => {
    const id = await kind.make();
    kind.claims().claim(id, 'dead:1', dead);
    kind.claims().stopAbandoned(id, 'dead:1', 'paused');
    expect(row(kind, id)).toMatchObject({ status: 'paused', owner: null });
    // Read dead, then claimed by b before the stop is written: b's run is left alone.
    kind.claims().claim(id, 'dead:1', dead);
    kind.claims().claim(id, 'b:2', dead);
    kind.claims().stopAbandoned(id, 'dead:1', 'cancelled');
    expect(row(kind, id)).toMatchObject({ status: 'running', owner: 'b:2' });
  });
});

describe('what each kind lets a stop from here replace', () => {
  it('a failed job can be cancelled; a failed experiment keeps its outcome', async () => {
    const [jobs, experiments] = KINDS as [Kind, Kind];
    const job = await jobs.make();
    const exp = await experiments.make();
    for (const kind of [jobs, experiments]) {
      const id = kind === jobs ? job : exp;
      kind.claims().claim(id, 'a:1', dead);
      kind.claims().release(id, 'a:1', 'failed', 'it broke');
      kind.claims().stopAbandoned(id, null, 'cancelled');
    }
    expect(row(jobs, job)).toMatchObject({ status: 'cancelled', error: 'it broke' });
    expect(row(experiments, exp)).toMatchObject({ status: 'failed', error: 'it broke' });
  });

  it('a job whose data set was never fully imported cannot be claimed', async () => {
    const id = await KINDS[0]!.make();
    store.db.prepare(`UPDATE jobs SET imported = 0 WHERE id = ?`).run(id);
    expect(store.claims.claim(id, 'a:1', dead)).toEqual({ claimed: false, reason: 'unimported' });
  });

  it("an experiment store claims only its own kind's rows", async () => {
    const sweep = await KINDS[1]!.make();
    expect(new ExperimentStore(store, 'compare').claims.claim(sweep, 'a:1', dead)).toEqual({ claimed: false, reason: 'unknown' });
  });
});
