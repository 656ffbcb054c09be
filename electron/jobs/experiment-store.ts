// Long experiments in the job database (tables `experiments` and `experiment_jobs`, schema v6 and v8
// in migrations.ts): sweeps and comparisons alike. A row holds the experiment's spec (everything a resume
// needs, fixed at creation), its status and owner (claimed as a job is: claims.ts); each cell of
// its grid (a sweep's [n, k, seed], a comparison's [generator, evaluator]) names the job that runs it.
import type { StoredJobStatus } from '../common/contract/jobs';
import type { ExperimentKind } from '../common/contract/experiments';
import type { Budget, Price } from '../common/plan';
import { newStoreId, type JobStore } from './store';
import { WorkClaims } from './claims';

/** What the store records, a job's stored words (one vocabulary for every kind of work); `interrupted` is worked out from the owner's liveness. */
export type StoredExperimentStatus = StoredJobStatus;

/**
 * What an experiment's jobs together stop before exceeding, and the price every model counts with
 * when one was given (else each job's share is priced by its remote entries' own prices, as a job
 * alone is: usage.ts pricedBudget).
 */
export interface ExperimentBudget extends Budget {
  price?: Price;
}

export interface StoredExperiment<Spec> {
  id: string;
  kind: ExperimentKind;
  name: string;
  /** ISO timestamps; `updated` is also the heartbeat other machines read. */
  created: string;
  updated: string;
  status: StoredExperimentStatus;
  spec: Spec;
  error: string | null;
  /** Who runs it ("host:pid", jobs/owner.ts), or null. */
  owner: string | null;
  /** What its jobs together stop before exceeding; null: none. A resume may raise it. */
  budget: ExperimentBudget | null;
  /** `budget`: it last stopped because its budget would have been exceeded. */
  stoppedBy: 'budget' | null;
}

/** The columns as StoredExperiment's fields: SQL renames them, so only the spec needs reading. */
// (generator_calls, evaluator_calls and tokens are no longer written: the jobs' usage counts them.)
const FIELDS = `id, kind, name, created, updated, status, spec_json, error, owner, budget_json, stopped_by AS stoppedBy`;

type ExperimentDbRow = Omit<StoredExperiment<unknown>, 'spec' | 'budget'> & { spec_json: string; budget_json: string | null };

/** An id's first letter says its kind (comparisons recorded before experiments shared a table have none). */
const ID_PREFIX: Record<ExperimentKind, string> = { sweep: 's', compare: 'c' };

export class ExperimentStore<Spec> {
  /** Who runs each experiment of this kind: claim, heartbeat, release (claims.ts, the same as a job's). */
  readonly claims: WorkClaims;

  constructor(
    private readonly jobStore: JobStore,
    readonly kind: ExperimentKind,
  ) {
    this.claims = new WorkClaims(jobStore.db, { table: 'experiments', kind, stoppable: ['queued', 'paused'] });
  }

  private get db() {
    return this.jobStore.db;
  }

  private toExperiment({ spec_json, budget_json, ...r }: ExperimentDbRow): StoredExperiment<Spec> {
    return { ...r, spec: JSON.parse(spec_json) as Spec, budget: budget_json ? (JSON.parse(budget_json) as ExperimentBudget) : null, stoppedBy: r.stoppedBy === 'budget' ? 'budget' : null };
  }

  /** Sets (or, with null, removes) the experiment's budget: a resume may raise it. */
  setBudget(id: string, budget: ExperimentBudget | null): void {
    this.db.prepare(`UPDATE experiments SET budget_json = ? WHERE id = ?`).run(budget ? JSON.stringify(budget) : null, id);
  }

  create(name: string, spec: Spec): string {
    const id = newStoreId(ID_PREFIX[this.kind]);
    const now = new Date().toISOString();
    this.db
      .prepare(`INSERT INTO experiments (id, kind, name, created, updated, status, spec_json) VALUES (?, ?, ?, ?, ?, 'queued', ?)`)
      .run(id, this.kind, name, now, now, JSON.stringify(spec));
    return id;
  }

  /** Removes an experiment (its jobs stay in the job history). */
  delete(id: string): void {
    this.db.prepare(`DELETE FROM experiments WHERE id = ? AND kind = ?`).run(id, this.kind);
  }

  get(id: string): StoredExperiment<Spec> | null {
    const r = this.db.prepare(`SELECT ${FIELDS} FROM experiments WHERE id = ? AND kind = ?`).get(id, this.kind) as ExperimentDbRow | undefined;
    return r ? this.toExperiment(r) : null;
  }

  /** Accepts a unique prefix of an id too. */
  findId(idOrPrefix: string): string | null {
    return this.jobStore.findId('experiments', idOrPrefix, { kind: this.kind });
  }

  /** Newest first. */
  list(): StoredExperiment<Spec>[] {
    return (this.db.prepare(`SELECT ${FIELDS} FROM experiments WHERE kind = ? ORDER BY created DESC, id DESC`).all(this.kind) as ExperimentDbRow[]).map((r) => this.toExperiment(r));
  }

  jobOf(id: string, cell: string): string | null {
    const r = this.db.prepare(`SELECT job_id FROM experiment_jobs WHERE experiment_id = ? AND cell = ?`).get(id, cell) as { job_id: string } | undefined;
    return r?.job_id ?? null;
  }

  setJob(id: string, cell: string, jobId: string): void {
    this.db.prepare(`INSERT OR REPLACE INTO experiment_jobs (experiment_id, cell, job_id) VALUES (?, ?, ?)`).run(id, cell, jobId);
  }

  /** Cell → job id, for every cell that has a job. */
  jobs(id: string): Map<string, string> {
    const rows = this.db.prepare(`SELECT cell, job_id FROM experiment_jobs WHERE experiment_id = ?`).all(id) as { cell: string; job_id: string }[];
    return new Map(rows.map((r) => [r.cell, r.job_id]));
  }
}
