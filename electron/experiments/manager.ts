// One kind of experiment as every face uses it: create (checked, then recorded), start and resume
// (with a budget for all its jobs together, priced one way for every kind), pause, cancel, wait,
// its summary, the result so far, its export, its plan, and its progress events. What is the
// kind's own comes from its definition (kind.ts); the rest is the same for every kind.
import { EventEmitter } from 'node:events';
import { writeFile } from 'node:fs/promises';
import type { ExperimentHead } from '../common/contract/experiment-progress';
import type { ExperimentKind, ExperimentProgressEvent } from '../common/contract/experiments';
import { parseModelPair } from '../common/model-spec';
import type { Budget, CostPlan, Price } from '../common/plan';
import type { ExperimentBudget, StoredExperiment } from '../jobs/experiment-store';
import type { Planner } from '../jobs/planner';
import { checkJobBudget, pricedBudget, sumUsage } from '../jobs/usage';
import { ExperimentRunner, type ExperimentRunnerOptions } from './experiment';
import type { CellState, ExperimentKindDefinition, PlanOptions, ResultOf, SummaryOf } from './kind';

/** A budget for all of an experiment's jobs together, and the price every model counts with (default: remote entries' own prices). */
export interface BudgetChange {
  /** A new budget (a resume may raise it); null removes it; absent keeps the one it has. */
  budget?: Budget | null;
  price?: Price;
}

export interface ExperimentManagerOptions<K extends ExperimentKind, Spec, Cell> extends ExperimentRunnerOptions<Spec, Cell> {
  definition: ExperimentKindDefinition<K, Spec, Cell>;
}

export class ExperimentManager<K extends ExperimentKind, Spec, Cell> {
  readonly kind: K;
  private readonly def: ExperimentKindDefinition<K, Spec, Cell>;
  private readonly runner: ExperimentRunner<Spec, Cell>;
  private readonly lookup: ExperimentRunnerOptions<Spec, Cell>['lookup'];
  private readonly emitter = new EventEmitter();

  constructor(opts: ExperimentManagerOptions<K, Spec, Cell>) {
    this.def = opts.definition;
    this.kind = opts.definition.kind;
    this.lookup = opts.lookup;
    this.runner = new ExperimentRunner(opts);
    this.runner.onChange((id) => {
      const exp = this.runner.store.get(id);
      if (exp) this.emitter.emit('progress', { kind: this.kind, id: exp.id, status: this.runner.status(exp), progress: this.runner.progress(this.runner.cellStates(exp), exp.id) } satisfies ExperimentProgressEvent);
    });
  }

  /**
   * Checks the input and records the experiment, with its budget; nothing runs until `start`.
   * Bad input (models, data set, columns, a budget in money with nothing to price it) is one
   * UserError, before anything is recorded.
   */
  async create(input: unknown, opts: BudgetChange = {}): Promise<SummaryOf<K>> {
    const { name, spec } = await this.def.create(input);
    const budget = opts.budget ? await this.priced(spec, opts.budget, opts.price) : null;
    const { id } = this.runner.create(name, spec);
    if (budget) this.runner.store.setBudget(id, budget);
    // A kind whose failed job stops it creates its first job now: a model file that is not a
    // GGUF, a data file that cannot be read or a column that is not there fail here, not later.
    if (this.def.onJobFailed === 'stop') await this.runner.prepare(id);
    return this.summary(id);
  }

  /** Starts (or resumes) it in this process; its jobs run in the background (`wait`). */
  async start(idOrPrefix: string, opts: BudgetChange = {}): Promise<SummaryOf<K>> {
    const exp = this.runner.find(idOrPrefix);
    // A new budget keeps the price it had unless given one.
    const budget = opts.budget ? await this.priced(exp.spec, opts.budget, opts.price ?? exp.budget?.price) : opts.budget;
    return this.summaryOf(this.runner.start(exp.id, budget !== undefined ? { budget } : {}));
  }

  resume(id: string, opts: BudgetChange = {}): Promise<SummaryOf<K>> {
    return this.start(id, opts);
  }

  async wait(id: string): Promise<SummaryOf<K>> {
    return this.summaryOf(await this.runner.wait(id));
  }

  /** Stops after pausing the running job (its finished rows stay); resumable. */
  async pause(id: string): Promise<SummaryOf<K>> {
    return this.summaryOf(await this.runner.pause(id));
  }

  /** Stops after cancelling the running job; still resumable explicitly. */
  async cancel(id: string): Promise<SummaryOf<K>> {
    return this.summaryOf(await this.runner.cancel(id));
  }

  /** One line of the history, by id or unique id prefix; UserError `<kind>_unknown` otherwise. */
  summary(id: string): SummaryOf<K> {
    return this.summaryOf(this.runner.find(id));
  }

  /** Newest first. */
  list(): SummaryOf<K>[] {
    return this.runner.list().map((exp) => this.summaryOf(exp));
  }

  /** Everything so far: its summary and the kind's result (a sweep's points over the seeds done, a comparison's pairs). */
  get(id: string): ResultOf<K> {
    const exp = this.runner.find(id);
    const states = this.runner.cellStates(exp);
    const summary = this.summaryOf(exp, states);
    return { ...summary, ...this.def.result(exp, states, summary.status) } as ResultOf<K>;
  }

  /** CSV (one line per point or pair) or JSON (the result, as `get` gives it) at outPath; returns the path written. */
  async export(id: string, format: 'csv' | 'json', outPath: string): Promise<string> {
    const result = this.get(id);
    await writeFile(outPath, format === 'csv' ? this.def.csv(result) : `${JSON.stringify(result, null, 2)}\n`);
    return outPath;
  }

  /** What a start with this input would cost, before anything runs. */
  plan(input: unknown, planner: Planner, opts: PlanOptions = {}): Promise<CostPlan> {
    return this.def.plan(input, planner, opts);
  }

  /** Whether an id (or unique id prefix) names an experiment of this kind. */
  has(idOrPrefix: string): boolean {
    return this.runner.store.findId(idOrPrefix) !== null;
  }

  /** Progress of any experiment of this kind in this process; returns the unsubscribe function. */
  onProgress(listener: (event: ExperimentProgressEvent) => void): () => void {
    this.emitter.on('progress', listener);
    return () => this.emitter.off('progress', listener);
  }

  /** Its budget as stored (with the price it counts with), or null. */
  budgetOf(id: string): ExperimentBudget | null {
    return this.runner.find(id).budget;
  }

  /** Whether this process runs it now. */
  isRunningHere(id: string): boolean {
    return this.runner.isRunningHere(this.runner.find(id).id);
  }

  /** Pauses every experiment of this kind running in this process (resumable). */
  dispose(): Promise<void> {
    return this.runner.dispose();
  }

  private summaryOf(exp: StoredExperiment<Spec>, states: readonly CellState<Cell>[] = this.runner.cellStates(exp)): SummaryOf<K> {
    const status = this.runner.status(exp);
    const head: ExperimentHead = {
      id: exp.id,
      name: exp.name,
      status,
      race: this.runner.race(exp, states),
      createdAt: Date.parse(exp.created),
      updatedAt: Date.parse(exp.updated),
      error: exp.error,
      progress: this.runner.progress(states, exp.id),
      usage: sumUsage(states.flatMap((st) => (st.job ? [st.job.usage] : []))),
      budget: exp.budget ? { kind: exp.budget.kind, limit: exp.budget.limit } : null,
      stoppedBy: status === 'paused' ? exp.stoppedBy : null,
    };
    return { kind: this.kind, ...head, ...this.def.summary(exp) } as SummaryOf<K>;
  }

  /**
   * The budget as stored: the limit and the price given for every model. Each job's share is
   * priced when it starts as a job alone is (jobs/usage.ts pricedBudget: the price given, else a
   * remote entry's own); a budget in money is refused now when a cell's models have no price.
   */
  private async priced(spec: Spec, budget: Budget, price: Price | undefined): Promise<ExperimentBudget> {
    if (budget.kind === 'usd') {
      const pairs = new Map(this.def.cells(spec).map((cell) => this.def.models(spec, cell)).map((m) => [`${m.generator}\n${m.evaluator}`, m]));
      for (const models of pairs.values()) checkJobBudget(await pricedBudget(budget, parseModelPair(models), { price, lookup: this.lookup }));
    }
    return { kind: budget.kind, limit: budget.limit, ...(price ? { price } : {}) };
  }
}
