// Decisions made elsewhere (a spreadsheet, another tool), brought into a job's review: a CSV, TSV
// or JSONL file of `index` (the row's index, as `tatra jobs show --rows` and the exports number
// rows, from 0) and `label`. The whole file is read and checked before anything is written, and
// then written in one transaction: a bad file (an unknown row or label, a row twice) is refused in
// one line naming its line and imports nothing; a good one imports every row or, on a crash, none.
import { basename } from 'node:path';
import { UserError } from '../common/errors';
import { answerLabels } from '../common/task';
import { own } from '../common/records';
import { readRecords, shownName } from './dataset';
import type { NewDecision } from './review-store';
import type { JobInfo } from './types';

/** The label a file's value names: a task label in any case (its own spelling kept), a math answer as it is. */
function labelResolver(job: JobInfo): (value: string) => string | null {
  if (job.task.kind === 'math') return (v) => (v.length > 0 && v.length <= 1000 ? v : null);
  const labels = answerLabels(job.task);
  const byLower = new Map(labels.map((l) => [l.toLowerCase(), l]));
  return (v) => byLower.get(v.toLowerCase()) ?? null;
}

/** Reads and checks every decision of `path` for `job`; nothing is written here. */
export async function readDecisionFile(job: JobInfo, path: string, signal?: AbortSignal): Promise<NewDecision[]> {
  const name = basename(path);
  const records = await readRecords(path, signal ? { signal } : {});
  const resolve = labelResolver(job);
  const seen = new Map<number, number>();
  const out: NewDecision[] = [];
  const refuse = (line: number, why: string) => new UserError(`${name}: line ${line}: ${why}; nothing was imported`, 'review_import');
  for await (const { line, values } of records) {
    const rawIndex = own(values, 'index');
    const rawLabel = own(values, 'label');
    if (rawIndex === undefined || rawLabel === undefined) throw refuse(line, 'a decision needs the columns "index" (the row, from 0) and "label"');
    const text = rawIndex.trim();
    const index = /^\d{1,9}$/.test(text) ? Number(text) : NaN;
    if (!Number.isInteger(index) || index >= job.rowsTotal) {
      throw refuse(line, `"${shownName(text, 40)}" is not a row of job ${job.id} (its rows are 0 to ${job.rowsTotal - 1})`);
    }
    const label = resolve(rawLabel.trim());
    if (label === null) {
      const known = job.task.kind === 'math' ? 'an answer of at most 1,000 characters' : answerLabels(job.task).join(', ');
      throw refuse(line, `"${shownName(rawLabel.trim(), 40)}" is not a label of task ${job.task.id} (${known})`);
    }
    const first = seen.get(index);
    if (first !== undefined) throw refuse(line, `row ${index} was already given a label on line ${first}`);
    seen.set(index, line);
    out.push({ index, label, queue: 'import' });
  }
  if (out.length === 0) throw new UserError(`${name} holds no decision (columns "index" and "label")`, 'review_import');
  return out;
}
