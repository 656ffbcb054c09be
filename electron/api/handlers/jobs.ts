// Evaluation jobs over the jobs layer's JobManager: preview and upload data, start / pause /
// resume / cancel, history, rows, metrics, export. Maps the manager's shapes onto the contract's.
import { mkdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { DataPreview, JobMetrics as ApiJobMetrics, jobsMethods } from '../../common/contract/jobs';
import { UserError } from '../../common/errors';
import type { TaskDefinition } from '../../common/task';
import { parseModelPair } from '../../common/model-spec';
import { previewDataset, pricedBudget, scanDataset, suggestLabelMapping } from '../../jobs';
import type { JobManager, JobMetrics, JobProgress, JobRow } from '../../jobs';
import type { DomainHandlers, HandlerGroup, HostDeps } from '../deps';
import { uploadDestination } from '../../web/file-name';

export function metricsPayload(jobId: string, m: JobMetrics): ApiJobMetrics {
  return {
    jobId,
    scored: m.evaluated,
    accuracy: m.math ? m.math.strictAccuracy : m.accuracy,
    macroF1: m.macroF1,
    perRunAccuracy: m.perRunAccuracy,
    accuracyAfterRuns: m.accuracyAfterRuns,
    perLabel: m.perLabel.map((l) => ({ label: l.label, precision: l.precision, recall: l.recall, f1: l.f1, support: l.support })),
    confusion: { labels: m.labels, predicted: m.predicted, matrix: m.confusion },
    confidenceHistogram: m.confidenceHistogram,
    calibration: m.calibration,
    selective: m.selective,
    answered: m.answered,
    lenientAccuracy: m.math ? m.math.lenientGoldInOutputAccuracy : null,
    baselineAccuracy: m.baseline ? m.baseline.accuracy : null,
    baselineMacroF1: m.baseline ? m.baseline.macroF1 : null,
    intervals: m.intervals ?? null,
  };
}

function rowPayload(r: JobRow) {
  return {
    index: r.index,
    input: r.input,
    status: r.status,
    error: r.error,
    gold: r.gold,
    prediction: r.prediction,
    correct: r.correct,
    confidence: r.confidence ?? 0,
    votes: r.votes ?? {},
    ms: r.ms ?? 0,
  };
}

/** Streams the manager's events as the contract's `job.progress` / `job.status`. */
export function forwardJobEvents(manager: JobManager, emit: HostDeps['emit']): () => void {
  return manager.onAny((e) => {
    if (e.type === 'progress') emit('job.progress', e.progress);
    else if (e.type === 'status') emit('job.status', { jobId: e.jobId, status: e.status, error: e.error });
  });
}

type JobsHandlers = DomainHandlers<typeof jobsMethods>;

/** The job manager, opened on first use (api/services.ts). */
type ManagerOf = () => Promise<JobManager>;

export function createJobsHandlers(deps: HostDeps): HandlerGroup<typeof jobsMethods> {
  const lastProgress = new Map<string, JobProgress>();
  let listening = false;
  const manager = async (): Promise<JobManager> => {
    const m = deps.services.jobs();
    if (!listening) {
      listening = true;
      m.on('progress', (e) => lastProgress.set(e.progress.jobId, e.progress));
    }
    return m;
  };
  return { handlers: { ...dataHandlers(deps), ...runHandlers(deps, manager), ...historyHandlers(deps, manager, lastProgress) } };
}

/** A data file before a job: its preview (columns, counts, gold values) and an upload from the page. */
function dataHandlers(deps: HostDeps): Pick<JobsHandlers, 'jobs.preview' | 'jobs.upload'> {
  return {
    'jobs.preview': async ({ path, taskId, inputColumn, goldColumn, sampleRows }): Promise<DataPreview> => {
      const p = await previewDataset(path, { maxRows: sampleRows ?? 20 });
      const input = inputColumn && p.columns.includes(inputColumn) ? inputColumn : (p.suggestedTextColumn ?? p.columns[0] ?? null);
      const gold = goldColumn === null ? null : goldColumn && p.columns.includes(goldColumn) ? goldColumn : (p.suggestedLabelColumn ?? null);
      if (!input) throw new UserError(`${path} has no columns`, 'dataset_empty');
      // The whole file is scanned (streamed) for exact counts and every gold value.
      const scan = await scanDataset(path, { textColumn: input, labelColumn: gold });
      const task = taskId ? await taskToSuggestFor(deps, taskId) : undefined;
      const suggestion = task && task.kind !== 'math' ? suggestLabelMapping(scan.goldValueCounts, task) : null;
      const goldValues = Object.entries(scan.goldValueCounts)
        .sort((a, b) => b[1] - a[1])
        .map(([value, count]) => ({ value, count, suggested: suggestion?.map[value] ?? null }));
      return {
        path,
        format: p.format,
        columns: p.columns,
        sample: p.rows,
        rowCount: scan.rows,
        emptyInputs: scan.skippedEmpty,
        inputColumn: input,
        goldColumn: gold,
        goldValues,
      };
    },
    'jobs.upload': async ({ name, content }) => {
      const path = await uploadDestination(join(deps.dataDir, 'uploads'), name);
      await writeFile(path, content, { flag: 'wx' });
      return { path, bytes: Buffer.byteLength(content) };
    },
  };
}

/**
 * The task whose labels a preview suggests a mapping to: none when the id names no task (the page
 * may preview a file before its task is saved); any other failure (the tasks folder unreadable) is
 * said, not read as "no task".
 */
async function taskToSuggestFor(deps: HostDeps, taskId: string): Promise<TaskDefinition | undefined> {
  try {
    return (await deps.services.tasks.find(taskId)).task;
  } catch (e) {
    if (e instanceof UserError && e.code === 'task_unknown') return undefined;
    throw e;
  }
}

/** A job started, paused, resumed and cancelled. */
function runHandlers(deps: HostDeps, manager: ManagerOf): Pick<JobsHandlers, 'jobs.start' | 'jobs.pause' | 'jobs.resume' | 'jobs.cancel'> {
  return {
    'jobs.start': async (input) => {
      const task = (await deps.services.tasks.find(input.taskId)).task;
      const m = await manager();
      const labelMap = Object.keys(input.labelMap).length > 0 ? input.labelMap : undefined;
      const created = await m.create({
        task,
        settings: input.settings,
        generatorPath: input.generator,
        evaluatorPath: input.evaluator,
        dataset: { path: input.dataPath, mapping: { textColumn: input.inputColumn, labelColumn: input.goldColumn, ...(labelMap ? { labelMap } : {}) } },
        ...(input.limit !== undefined ? { limit: input.limit } : {}),
        baseline: input.baseline,
        ...(input.name ? { name: input.name } : {}),
        ...(input.budget ? { budget: await pricedBudget(input.budget, parseModelPair(input), { price: input.price, lookup: deps.services.remotes }) } : {}),
      });
      return m.summary(await m.start(created.id));
    },
    'jobs.pause': async ({ jobId }) => {
      const m = await manager();
      return m.summary(await m.pause(jobId));
    },
    'jobs.resume': async ({ jobId, acceptModelChange, budget }) => {
      const m = await manager();
      const job = m.get(jobId);
      // A new budget replaces the job's, counted with the prices it had (a resume may raise it).
      const next = budget ? { ...budget, ...(job.budget?.prices ? { prices: job.budget.prices } : {}) } : undefined;
      return m.summary(await m.resume(jobId, { acceptModelChange: acceptModelChange === true, ...(next ? { budget: next } : {}) }));
    },
    'jobs.cancel': async ({ jobId }) => {
      const m = await manager();
      return m.summary(await m.cancel(jobId));
    },
  };
}

/** The jobs stored: the list, one job with its last progress, its rows, metrics and export, and its removal. */
function historyHandlers(
  deps: HostDeps,
  manager: ManagerOf,
  lastProgress: ReadonlyMap<string, JobProgress>,
): Pick<JobsHandlers, 'jobs.list' | 'jobs.get' | 'jobs.rows' | 'jobs.row' | 'jobs.metrics' | 'jobs.export' | 'jobs.delete'> {
  return {
    'jobs.list': async () => {
      const m = await manager();
      return m.list().map((job) => m.summary(job));
    },
    'jobs.get': async ({ jobId }) => {
      const m = await manager();
      const job = m.get(jobId);
      return { ...m.summary(job), progress: lastProgress.get(job.id) ?? null };
    },
    'jobs.rows': async ({ jobId, offset, limit, filter, sort }) => {
      const page = (await manager()).rows(jobId, { offset, limit, onlyWrong: filter === 'wrong', sort, runs: false });
      return { total: page.total, rows: page.rows.map(rowPayload) };
    },
    'jobs.row': async ({ jobId, index }) => {
      const m = await manager();
      const row = m.row(jobId, index);
      if (!row) throw new UserError(`job ${jobId} has no row ${index}`, 'row_unknown');
      const examples = new Map(m.runExamples(jobId).map((r) => [r.run, r.examples]));
      return {
        ...rowPayload(row),
        runs: (row.runs ?? []).map((r) => ({ run: r.run, seed: r.seed, examples: examples.get(r.run) ?? [], paraphrases: r.paraphrases, predictions: r.predictions })),
        baseline: row.baseline ? row.baseline.label : null,
      };
    },
    'jobs.metrics': async ({ jobId, minConfidence }) => {
      const m = await manager();
      const id = m.get(jobId).id;
      return metricsPayload(id, m.metrics(id, minConfidence !== undefined ? { minConfidence } : {}));
    },
    'jobs.export': async ({ jobId, format, minConfidence }) => {
      const m = await manager();
      const job = m.get(jobId);
      const dir = join(deps.dataDir, 'exports');
      await mkdir(dir, { recursive: true });
      const stamp = new Date().toISOString().replace(/[:.]/g, '-');
      const filename = `${job.task.id}-${job.id.slice(0, 8)}-${stamp}.${format}`;
      const path = await m.export(job.id, format, join(dir, filename), undefined, minConfidence !== undefined ? { minConfidence } : {});
      return { path, filename, bytes: (await stat(path)).size };
    },
    'jobs.delete': async ({ jobId }) => {
      await (await manager()).delete(jobId);
      return { deleted: true };
    },
  };
}
