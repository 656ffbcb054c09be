// A finished job in a real job store, its rows classified by a scripted backend whose votes
// differ from variant to variant (so rows end at many confidences, some right and some wrong):
// for tests of what is read from a job's rows (metric counts, the review queue, exports).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { JobManager, plainModelRef, type BackendProvider, type JobStore } from '../../electron/jobs';
import type { TatraSettings } from '../../electron/common/tatra';
import { ScriptedBackend, politeScript } from './scripted-backend';

/** A vote that depends on the text voted on (the original or a paraphrase), as a weak model's would. */
export function mixedAnswer(candidate: string): string {
  let h = 0;
  for (const ch of candidate) h = (Math.imul(h, 31) + ch.charCodeAt(0)) >>> 0;
  const leaning = /good|fine|great/.test(candidate) ? 1 : 0;
  return (h % 5 < 2 ? 1 - leaning : leaning) === 1 ? 'positive' : 'negative';
}

export interface ScriptedJobOptions {
  rows: number;
  /** Folder for the data file. */
  dir: string;
  /** Without a gold column (an unlabelled file). */
  unlabelled?: boolean;
  settings?: TatraSettings;
  /** Another column the file has beside text and label. */
  extraColumn?: boolean;
}

/** The CSV the job reads: text, label (unless unlabelled), and a `source` column when asked. */
export function writeScriptedData(opts: ScriptedJobOptions): string {
  const path = join(opts.dir, `scripted-${opts.rows}${opts.unlabelled ? '-u' : ''}${opts.extraColumn ? '-x' : ''}.csv`);
  const head = ['text', ...(opts.unlabelled ? [] : ['label']), ...(opts.extraColumn ? ['source'] : [])];
  const lines = Array.from({ length: opts.rows }, (_, i) => {
    const text = `"${i % 3 === 0 ? 'a good film' : i % 3 === 1 ? 'a dull film' : 'a fine, long film'} number ${i}"`;
    return [text, ...(opts.unlabelled ? [] : [i % 2 ? 'negative' : 'positive']), ...(opts.extraColumn ? [`site ${i % 4}`] : [])].join(',');
  });
  writeFileSync(path, `${head.join(',')}\n${lines.join('\n')}\n`);
  return path;
}

/** Runs an sst2 job to its end on a scripted backend; returns its id and the manager that ran it. */
export async function runScriptedJob(store: JobStore, opts: ScriptedJobOptions): Promise<{ id: string; manager: JobManager }> {
  const backend = new ScriptedBackend(politeScript({ answer: mixedAnswer }), { id: 'scripted', contextSize: 8192 });
  const provider: BackendProvider = { acquire: async () => ({ backend, release: async () => undefined }) };
  const manager = new JobManager({ store, backends: provider, inspectModel: plainModelRef });
  const job = await manager.create({
    task: 'sst2',
    settings: opts.settings ?? { n: 3, k: 2, r: 2, seed: 3, scope: 'run' },
    generatorPath: 'g.gguf',
    evaluatorPath: 'e.gguf',
    dataset: { path: writeScriptedData(opts), mapping: { textColumn: 'text', labelColumn: opts.unlabelled ? null : 'label' } },
    concurrency: 4,
  });
  await manager.start(job.id);
  const end = await manager.wait(job.id);
  if (end.status !== 'done') throw new Error(`the scripted job ended ${end.status}: ${end.error ?? ''}`);
  return { id: job.id, manager };
}
