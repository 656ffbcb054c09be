// `tatra compare`: the paper's cross-model study on your data. Every (generator, evaluator) pair
// runs as an evaluation job (kept in the job history); evaluators sharing a generator see the same
// cached examples and paraphrases. Prints the pair table and the generator × evaluator matrix.
import { resolve } from 'node:path';
import { type Command } from 'commander';
import { UserError } from '../../common/errors';
import { comparisonMatrix, modelLabel, type ComparisonRecord } from '../../common/contract/models';
import { runComparison } from '../../models';
import { CONCURRENCY, ROW_LIMIT } from '../../common/settings';
import { type TatraSettingsCliOptions, addRuntimeOptions, addTatraSettingsOptions, intOption, parseLabelMap, tatraSettingsFrom } from '../options';
import { withCliServices } from '../session';
import { duration, err, interruptSignal, out, outJson, pct as percent, table } from '../ui';

interface CompareCliOptions extends TatraSettingsCliOptions {
  task: string;
  data: string;
  generators: string;
  evaluators: string;
  limit?: number;
  textCol?: string;
  labelCol?: string;
  labelMap?: string;
  threads?: number;
  contextSize?: number;
  concurrency: number;
  dataDir?: string;
  json?: boolean;
}

/** Accuracy in a column headed "%". */
function pct(v: number | null): string {
  return percent(v, { unit: '' });
}

/** Short, unique names for the models (file names; the path's folder when two share a name). */
function names(paths: string[]): Map<string, string> {
  const m = new Map<string, string>();
  for (const p of paths) {
    const base = modelLabel(p);
    const clash = paths.some((q) => q !== p && modelLabel(q) === base);
    m.set(p, clash ? p : base);
  }
  return m;
}

export function formatComparison(rec: ComparisonRecord): string {
  const all = [...new Set([...rec.spec.generators, ...rec.spec.evaluators])];
  const n = names(all);
  const out: string[] = [];
  const s = rec.spec.settings;
  out.push(`comparison ${rec.id}  [${rec.status}]  task ${rec.spec.task}  n=${s.n} k=${s.k} r=${s.r} seed=${s.seed} scope=${s.scope}${rec.spec.limit ? `  limit ${rec.spec.limit}` : ''}`);
  if (rec.error) out.push(`  error: ${rec.error}`);
  for (const w of rec.warnings) out.push(`  warning: ${w}`);
  out.push('');
  out.push(
    table(
      [
        ['generator', 'evaluator', 'accuracy %', 'macro-F1', 'rows', 'time', 'tokens', 'job'],
        ...rec.pairs.map((p) => [
          n.get(p.generator)!,
          n.get(p.evaluator)!,
          pct(p.accuracy),
          p.macroF1 === null ? '—' : p.macroF1.toFixed(3),
          `${p.rowsDone}/${p.rows}`,
          duration(p.ms),
          p.tokens.toLocaleString('en-US'),
          p.status === 'done' ? (p.jobId?.slice(0, 8) ?? '') : `${p.status}${p.error ? `: ${p.error}` : ''}`,
        ]),
      ],
      (c) => c >= 2 && c <= 6,
    ),
  );
  out.push('');
  out.push('  accuracy % (rows: generator, columns: evaluator)');
  const m = comparisonMatrix(rec);
  out.push(
    table(
      [['', ...rec.spec.evaluators.map((e) => n.get(e)!)], ...rec.spec.generators.map((g, i) => [n.get(g)!, ...m[i]!.map(pct)])],
      (c) => c > 0,
    ),
  );
  return out.join('\n');
}

function splitList(v: string, flag: string): string[] {
  const items = v.split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (items.length === 0) throw new UserError(`${flag} needs at least one GGUF file`, 'bad_option');
  return items.map((p) => resolve(p));
}

export function registerCompare(program: Command): void {
  const cmd = program
    .command('compare')
    .description('compare generator × evaluator pairs on one task and data set (each pair is an evaluation job)')
    .requiredOption('--task <id|file>', 'task id or task JSON file')
    .requiredOption('--data <file>', 'CSV, TSV or JSONL file with gold labels')
    .requiredOption('--generators <a.gguf,b.gguf>', 'comma-separated generator models')
    .requiredOption('--evaluators <a.gguf,b.gguf>', 'comma-separated evaluator models');
  addRuntimeOptions(addTatraSettingsOptions(cmd))
    .option(ROW_LIMIT.flags, 'only the first N rows', intOption(ROW_LIMIT.flag, ROW_LIMIT.min, ROW_LIMIT.max))
    .option('--text-col <column>', 'column holding the input (default: guessed)')
    .option('--label-col <column>', 'column holding the gold label (default: guessed)')
    .option('--label-map <a=b,...>', 'gold value → task label (default: suggested)')
    .option(CONCURRENCY.flags, CONCURRENCY.help, intOption(CONCURRENCY.flag, CONCURRENCY.min, CONCURRENCY.maxRemote), CONCURRENCY.default)
    .option('--data-dir <dir>', 'data folder holding the job database')
    .option('--json', 'print the comparison record as JSON')
    .action(async (opts: CompareCliOptions) => {
      const settings = tatraSettingsFrom(opts);
      const generators = splitList(opts.generators, '--generators');
      const evaluators = splitList(opts.evaluators, '--evaluators');
      await withCliServices(opts, async (services) => {
        const { signal, off } = interruptSignal();
        const lastStatus = new Map<string, string>();
        try {
          const rec = await runComparison(
            {
              task: opts.task,
              dataset: resolve(opts.data),
              generators,
              evaluators,
              settings,
              ...(opts.limit !== undefined ? { limit: opts.limit } : {}),
              ...(opts.textCol ? { textColumn: opts.textCol } : {}),
              ...(opts.labelCol ? { labelColumn: opts.labelCol } : {}),
              ...(opts.labelMap ? { labelMap: parseLabelMap(opts.labelMap) } : {}),
            },
            {
              jobs: services.jobs(),
              pool: services.pool,
              store: services.comparisons(),
              signal,
              concurrency: opts.concurrency,
              onProgress: (r) => {
                if (opts.json) return;
                r.pairs.forEach((p, i) => {
                  const key = `${i}`;
                  const line = p.status === 'running' ? 'running' : p.status;
                  if (lastStatus.get(key) === line) return;
                  lastStatus.set(key, line);
                  if (p.status === 'pending') return;
                  const tail = p.status === 'done' ? `  accuracy ${pct(p.accuracy)}%  ${duration(p.ms)}` : p.error ? `  ${p.error}` : '';
                  err(`[${i + 1}/${r.pairs.length}] ${modelLabel(p.generator)} → ${modelLabel(p.evaluator)}: ${line}${tail}`);
                });
              },
            },
          );
          if (opts.json) outJson(rec);
          else out(formatComparison(rec));
          if (rec.status === 'error') process.exitCode = 1;
          if (rec.status === 'cancelled') process.exitCode = 130;
        } finally {
          off();
        }
      });
    });
}
