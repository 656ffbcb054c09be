// Sweeps in the job database (tables `sweeps` and `sweep_jobs`, schema v3 in store.ts): the spec,
// the status, which job holds each (n, k, seed), and the calls the sweep really made.
import { randomBytes } from 'node:crypto';
import type { SweepGrid } from '../common/contract/sweeps';
import type { TaskDefinition } from '../common/task';
import type { JobStore } from './store';
import type { ColumnMapping } from './types';

export type StoredSweepStatus = 'queued' | 'running' | 'paused' | 'cancelled' | 'done' | 'failed';

export type SweepClaim = { claimed: true } | { claimed: false; reason: 'unknown' | 'done' | 'running' };

/** Everything a resume needs, fixed when the sweep is created. */
export interface StoredSweepSpec {
  task: TaskDefinition;
  dataPath: string;
  mapping: ColumnMapping;
  generatorPath: string;
  evaluatorPath: string;
  grid: SweepGrid;
  limit: number | null;
  concurrency: number;
}

export interface StoredSweep {
  id: string;
  name: string;
  created: string;
  updated: string;
  status: StoredSweepStatus;
  spec: StoredSweepSpec;
  error: string | null;
  owner: string | null;
  generatorCalls: number;
  evaluatorCalls: number;
  /** Tokens of the calls made. */
  tokens: number;
}

/** The columns as StoredSweep's fields: SQL renames them, so only the spec needs reading. */
const SWEEP_FIELDS = `id, name, created, updated, status, spec_json, error, owner,
  generator_calls AS generatorCalls, evaluator_calls AS evaluatorCalls, tokens`;

type SweepDbRow = Omit<StoredSweep, 'spec'> & { spec_json: string };

function toSweep({ spec_json, ...r }: SweepDbRow): StoredSweep {
  return { ...r, spec: JSON.parse(spec_json) as StoredSweepSpec };
}

export class SweepStore {
  constructor(private readonly jobStore: JobStore) {}

  private get db() {
    return this.jobStore.db;
  }

  create(name: string, spec: StoredSweepSpec): string {
    // Sortable by creation time, short enough to type in `tatra sweep resume <id>`.
    const id = `s${Date.now().toString(36)}-${randomBytes(3).toString('hex')}`;
    const now = new Date().toISOString();
    this.db
      .prepare(`INSERT INTO sweeps (id, name, created, updated, status, spec_json) VALUES (?, ?, ?, ?, 'queued', ?)`)
      .run(id, name, now, now, JSON.stringify(spec));
    return id;
  }

  get(id: string): StoredSweep | null {
    const r = this.db.prepare(`SELECT ${SWEEP_FIELDS} FROM sweeps WHERE id = ?`).get(id) as SweepDbRow | undefined;
    return r ? toSweep(r) : null;
  }

  /** Accepts a unique prefix of an id too. */
  findId(idOrPrefix: string): string | null {
    return this.jobStore.findId('sweeps', idOrPrefix);
  }

  list(): StoredSweep[] {
    return (this.db.prepare(`SELECT ${SWEEP_FIELDS} FROM sweeps ORDER BY created DESC, id DESC`).all() as SweepDbRow[]).map(toSweep);
  }

  /**
   * Makes `owner` the sweep's runner, atomically across processes: one UPDATE whose WHERE admits
   * only a sweep nobody live runs, so SQLite's write lock covers reading the owner and replacing
   * it, and of two processes resuming at once the second finds the first one's claim.
   * `ownerLive` (owner, updated) tells whether a recorded owner still runs.
   */
  claim(id: string, owner: string, ownerLive: (owner: string, updated: string) => boolean): SweepClaim {
    this.db.function('tatra_owner_live', { deterministic: false }, (o: unknown, updated: unknown) => (ownerLive(String(o), String(updated)) ? 1 : 0));
    const claimed = this.db
      .prepare(
        `UPDATE sweeps SET status = 'running', error = NULL, owner = ?, updated = ?
         WHERE id = ? AND status != 'done' AND (status != 'running' OR owner IS NULL OR NOT tatra_owner_live(owner, updated))`,
      )
      .run(owner, new Date().toISOString(), id);
    if (claimed.changes === 1) return { claimed: true };
    const now = this.get(id);
    return { claimed: false, reason: !now ? 'unknown' : now.status === 'done' ? 'done' : 'running' };
  }

  /** The runner's heartbeat: `updated` is how other machines tell a live sweep from a dead one. */
  beat(id: string, owner: string): void {
    this.db.prepare(`UPDATE sweeps SET updated = ? WHERE id = ? AND owner = ?`).run(new Date().toISOString(), id, owner);
  }

  /**
   * The runner's last word: the final status, and the sweep given up, only while `owner` still
   * holds it (a process that lost the sweep never overwrites the status of the one running it).
   */
  release(id: string, owner: string, status: StoredSweepStatus, error: string | null): boolean {
    return this.db.prepare(`UPDATE sweeps SET status = ?, error = ?, owner = NULL, updated = ? WHERE id = ? AND owner = ?`).run(status, error, new Date().toISOString(), id, owner).changes === 1;
  }

  /** A sweep whose runner died (`owner`), marked paused; not if another process claimed it meanwhile. */
  pauseAbandoned(id: string, owner: string | null): void {
    this.db.prepare(`UPDATE sweeps SET status = 'paused', owner = NULL, updated = ? WHERE id = ? AND status = 'running' AND owner IS ?`).run(new Date().toISOString(), id, owner);
  }

  /** Counted as each batch of calls returns, so a kill loses only calls whose answers were lost too. */
  addCalls(id: string, role: 'generator' | 'evaluator', calls: number, tokens: number): void {
    const column = role === 'generator' ? 'generator_calls' : 'evaluator_calls';
    this.db.prepare(`UPDATE sweeps SET ${column} = ${column} + ?, tokens = tokens + ?, updated = ? WHERE id = ?`).run(calls, tokens, new Date().toISOString(), id);
  }

  jobOf(id: string, n: number, k: number, seed: number): string | null {
    const r = this.db.prepare(`SELECT job_id FROM sweep_jobs WHERE sweep_id = ? AND n = ? AND k = ? AND seed = ?`).get(id, n, k, seed) as { job_id: string } | undefined;
    return r?.job_id ?? null;
  }

  setJob(id: string, n: number, k: number, seed: number, jobId: string): void {
    this.db.prepare(`INSERT OR REPLACE INTO sweep_jobs (sweep_id, n, k, seed, job_id) VALUES (?, ?, ?, ?, ?)`).run(id, n, k, seed, jobId);
  }

  jobs(id: string): { n: number; k: number; seed: number; jobId: string }[] {
    return (this.db.prepare(`SELECT n, k, seed, job_id FROM sweep_jobs WHERE sweep_id = ?`).all(id) as { n: number; k: number; seed: number; job_id: string }[]).map(
      (r) => ({ n: r.n, k: r.k, seed: r.seed, jobId: r.job_id }),
    );
  }
}
