// Every kind of experiment, registered once: the one place the API handler, the CLI and the
// services reach sweeps and comparisons through. An id names its experiment whatever its kind;
// start takes `{kind, spec}`; everything else takes the id. A new kind is a definition (kind.ts)
// and one line in KINDS.
import type { ExperimentKind, ExperimentProgressEvent, ExperimentResult, ExperimentStartInput, ExperimentSummary } from '../common/contract/experiments';
import type { CostPlan } from '../common/plan';
import { UserError } from '../common/errors';
import type { TaskDefinition } from '../common/task';
import type { JobManager } from '../jobs/manager';
import type { Planner } from '../jobs/planner';
import type { JobStore } from '../jobs/store';
import type { RemoteLookup } from '../remote';
import type { BackendProvider } from '../jobs/types';
import { comparisonKind } from './compare';
import type { ExperimentKindDefinition, PlanOptions } from './kind';
import { ExperimentManager, type BudgetChange } from './manager';
import { sweepKind } from './sweep';

export interface ExperimentsOptions {
  jobs: JobManager;
  store: JobStore;
  /** Given, held models are leased from it so they stay loaded between jobs. */
  pool?: BackendProvider;
  /** Remote entries' prices, for budgets in money. */
  lookup?: RemoteLookup;
  /** Prices each cell still to run, for an experiment's time left (experiment-eta.ts). */
  planner?: () => Planner;
  /** Resolves a spec's task (an id, or a file where the face allows it) when an experiment is created or planned. */
  resolveTask(idOrPath: string): Promise<TaskDefinition>;
}

/** Each kind's definition, made once for the services it runs on. */
const KINDS = {
  sweep: sweepKind,
  compare: comparisonKind,
} satisfies { [K in ExperimentKind]: (opts: ExperimentsOptions) => ExperimentKindDefinition<K, unknown, unknown> };

type ManagerOf<D> = D extends ExperimentKindDefinition<infer K, infer Spec, infer Cell> ? ExperimentManager<K, Spec, Cell> : never;
/** Each kind's manager, typed as its kind. */
export type ExperimentManagers = { [K in ExperimentKind]: ManagerOf<ReturnType<(typeof KINDS)[K]>> };
type AnyManager = ExperimentManagers[ExperimentKind];

export class Experiments {
  private readonly managers: ExperimentManagers;

  constructor(opts: ExperimentsOptions) {
    this.managers = {
      sweep: new ExperimentManager({ ...opts, definition: KINDS.sweep(opts) }),
      compare: new ExperimentManager({ ...opts, definition: KINDS.compare(opts) }),
    };
  }

  /** One kind's manager, typed as that kind (what the CLI's `tatra sweep` and `tatra compare` use). */
  of<K extends ExperimentKind>(kind: K): ExperimentManagers[K] {
    return this.managers[kind];
  }

  /** The manager of the experiment an id (or unique id prefix) names: each kind is asked, since comparisons recorded before experiments shared a table have no kind letter. */
  find(id: string): AnyManager {
    const found = this.all().filter((m) => m.has(id));
    if (found[0] !== undefined && found.length === 1) return found[0];
    if (found.length === 0) throw new UserError(`no experiment "${id}"`, 'experiment_unknown');
    throw new UserError(`"${id}" starts the ids of a sweep and a comparison: give more of it`, 'bad_option');
  }

  /** Creates an experiment with its budget and starts it in the background; bad input answers this call. */
  async start(input: ExperimentStartInput): Promise<ExperimentSummary> {
    const manager: AnyManager = this.of(input.kind);
    const { budget, price } = input.spec;
    const { id } = await manager.create(input.spec, { ...(budget ? { budget } : {}), ...(price ? { price } : {}) });
    return manager.start(id);
  }

  resume(id: string, opts: BudgetChange = {}): Promise<ExperimentSummary> {
    return this.find(id).resume(id, opts);
  }

  pause(id: string): Promise<ExperimentSummary> {
    return this.find(id).pause(id);
  }

  cancel(id: string): Promise<ExperimentSummary> {
    return this.find(id).cancel(id);
  }

  get(id: string): ExperimentResult {
    return this.find(id).get(id);
  }

  summary(id: string): ExperimentSummary {
    return this.find(id).summary(id);
  }

  /** Newest first; `kind` lists one kind only. */
  list(kind?: ExperimentKind): ExperimentSummary[] {
    const all = (kind ? [this.of(kind)] : this.all()).flatMap((m): ExperimentSummary[] => m.list());
    return all.sort((a, b) => b.createdAt - a.createdAt);
  }

  plan(kind: ExperimentKind, input: unknown, planner: Planner, opts: PlanOptions = {}): Promise<CostPlan> {
    return this.of(kind).plan(input, planner, opts);
  }

  /** Progress of every experiment running in this process; returns the unsubscribe function. */
  onProgress(listener: (event: ExperimentProgressEvent) => void): () => void {
    const offs = this.all().map((m) => m.onProgress(listener));
    return () => offs.forEach((off) => off());
  }

  /** Pauses every experiment running in this process (resumable); every kind is tried, failures are thrown together. */
  async dispose(): Promise<void> {
    const failures = (await Promise.allSettled(this.all().map((m) => m.dispose()))).flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
    if (failures.length > 0) throw failures.length === 1 ? failures[0] : new AggregateError(failures, `${failures.length} kinds of experiment failed to pause`);
  }

  private all(): AnyManager[] {
    return Object.values(this.managers);
  }
}
