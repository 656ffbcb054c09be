// Creating an evaluation job: the spec validated (settings, limit, concurrency, label map), the
// models recorded, and the data set imported into the store (streamed, in batched transactions;
// the job no longer needs the file afterwards). JobManager.create announces the result.
import { UserError } from '../common/errors';
import { parseModelPair, type ModelSpec } from '../common/model-spec';
import { checkRowsInFlight, defaultRowsInFlight } from '../common/settings';
import { answerLabels, type TaskDefinition } from '../common/task';
import { TatraSettings } from '../common/tatra';
import { openDataset, shownName } from './dataset';
import { importRows } from './import';
import type { JobStore } from './store';
import { checkJobBudget } from './usage';
import type { ColumnMapping, JobSpec, ModelRef } from './types';

/** What creating a job reads: the store, and how the manager resolves tasks and describes models. */
export interface CreateJobDeps {
  store: JobStore;
  resolveTask: (idOrPath: string) => Promise<TaskDefinition>;
  inspectModel: (model: ModelSpec) => Promise<ModelRef>;
  /** Rows in flight when the spec does not say: the base of defaultRowsInFlight. */
  defaultConcurrency: number;
}

/** Validates the spec, records the job (status `queued`) and imports its rows; returns its id. */
export async function createJob(deps: CreateJobDeps, spec: JobSpec): Promise<string> {
  const parsed = TatraSettings.safeParse(spec.settings);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UserError(`invalid settings: ${issue ? `${issue.path.join('.')}: ${issue.message}` : 'unknown problem'}`, 'bad_option');
  }
  const settings = parsed.data;
  const task = typeof spec.task === 'string' ? await deps.resolveTask(spec.task) : spec.task;
  if (spec.limit !== undefined && (!Number.isInteger(spec.limit) || spec.limit < 1)) throw new UserError(`limit must be a whole number ≥ 1, got ${spec.limit}`, 'bad_option');
  // The job's models as it names them; what it records is each one's text.
  const models = parseModelPair({ generator: spec.generatorPath, evaluator: spec.evaluatorPath });
  const concurrency = spec.concurrency ?? defaultRowsInFlight(models.generator, models.evaluator, deps.defaultConcurrency);
  checkRowsInFlight(concurrency, [models.generator, models.evaluator]);
  const [generator, evaluator] = await Promise.all([deps.inspectModel(models.generator), deps.inspectModel(models.evaluator)]);

  const dsOpts = {
    ...(spec.dataset.format ? { format: spec.dataset.format } : {}),
    ...(spec.dataset.delimiter ? { delimiter: spec.dataset.delimiter } : {}),
    ...(spec.dataset.allowRagged ? { allowRagged: true } : {}),
    ...(spec.signal ? { signal: spec.signal } : {}),
  };
  const ds = spec.dataset.opened ?? (await openDataset(spec.dataset.path, dsOpts));
  const mapping: ColumnMapping = { ...spec.dataset.mapping };
  const labelCol = mapping.labelColumn ?? null;
  const valid = new Set(answerLabels(task));
  // No map given for a labelled task: the import reads the gold values as they are, counts them,
  // and the map is suggested from the counts (exact, case-insensitive, numeric index, prefix)
  // once they are all known: the same pass over the file as the rows and the fingerprint.
  const suggest = task.kind !== 'math' && labelCol !== null && !mapping.labelMap;
  if (task.kind !== 'math' && labelCol !== null && mapping.labelMap) {
    for (const [from, to] of Object.entries(mapping.labelMap)) {
      if (!valid.has(to)) throw new UserError(`label map "${shownName(from, 40)}=${shownName(to, 40)}": "${shownName(to, 40)}" is not a label of task ${task.id} (${[...valid].join(', ')})`, 'bad_option');
    }
  }
  // With a map, gold values it does not list still count when they name a label in any case
  // (goldLabelResolver); without one, they are imported as they are and mapped below.
  const explicitMap = task.kind !== 'math' && labelCol !== null && mapping.labelMap !== undefined;
  const reader = ds.read(mapping, { ...(spec.dataset.allowRagged ? { allowRagged: true } : {}), ...(spec.signal ? { signal: spec.signal } : {}), ...(explicitMap ? { labels: [...valid] } : {}) });
  const id = deps.store.createJob({
    name: spec.name ?? `${task.id} on ${spec.dataset.path.split(/[\\/]/).pop() ?? spec.dataset.path}`,
    task,
    settings,
    generator,
    evaluator,
    // The fingerprint is known once the rows are read (it hashes the bytes they came from).
    dataset: { path: spec.dataset.path, fingerprint: '', format: ds.format, mapping, stats: reader.stats },
    limit: spec.limit ?? null,
    baseline: spec.baseline ?? false,
    concurrency,
    budget: spec.budget ? checkJobBudget(spec.budget) : null,
  });
  await importRows(deps.store, id, reader, { task, mapping, labels: [...valid], suggest, explicitMap, dataPath: spec.dataset.path, ...(spec.limit !== undefined ? { limit: spec.limit } : {}) });
  return id;
}
