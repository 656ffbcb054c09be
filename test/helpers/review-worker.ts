// A process that reviews a job as fast as it can until it is killed: single decisions and undos
// on rows IMPORT_ROWS and up (each one's own transaction), and every few of them an import of a
// file that gives rows 0..IMPORT_ROWS-1 all one label (another than the import before: every row
// changes, so each import that commits writes exactly IMPORT_ROWS entries). It prints a line
// after each commit, so the test that kills it knows what was committed:
//   D <clientId> <index> <label or ->   a decision (- a skip)
//   U <logId>                           an undo
//   i <n> <label>                       import n begins (its file is read and checked)
//   w <n>                               import n's decisions are being written (one transaction)
//   I <n>                               import n committed
//
//   node --import tsx test/helpers/review-worker.ts <dataDir> <jobId> <seed>   (the test runs it bundled)
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { JobReview, openJobStore } from '../../electron/jobs';
import { seededRandom } from '../../electron/engine/rng';
import { readDecisionFile } from '../../electron/jobs/review-import';

export const IMPORT_ROWS = 3000;
const LABELS = ['negative', 'positive'];

const [dataDir, jobId, seedText] = process.argv.slice(2) as [string, string, string];
const store = openJobStore(dataDir);
const review = new JobReview(store);
const total = review.job(jobId).rowsTotal;
const rand = seededRandom(Number(seedText));
const say = (line: string) => process.stdout.write(`${line}\n`);

// Where the imports left off, so each new one changes every row.
let imports = (store.db.prepare(`SELECT COUNT(*) AS n FROM review_log WHERE job_id = ? AND queue = 'import'`).get(jobId) as { n: number }).n / IMPORT_ROWS;
/** The decision just made, which an undo may take back (it is its row's latest). */
let last: number | null = null;
for (let step = 0; ; step++) {
  if (step % 25 === 24) {
    const n = imports;
    const label = LABELS[n % 2]!;
    const file = join(dataDir, `import-${process.pid}-${n}.csv`);
    writeFileSync(file, `index,label\n${Array.from({ length: IMPORT_ROWS }, (_, i) => `${i},${label}`).join('\n')}\n`);
    say(`i ${n} ${label}`);
    // What JobReview.importFile does, in its two steps, so the test can kill it inside the second.
    const decisions = await readDecisionFile(review.job(jobId), file);
    say(`w ${n}`);
    store.reviews.decideAll(jobId, decisions);
    say(`I ${n}`);
    imports++;
    continue;
  }
  if (last !== null && rand() < 0.15) {
    review.undo(jobId, last);
    say(`U ${last}`);
    last = null;
    continue;
  }
  const index = IMPORT_ROWS + Math.floor(rand() * (total - IMPORT_ROWS));
  const label = rand() < 0.2 ? null : LABELS[Math.floor(rand() * 2)]!;
  const clientId = `${process.pid}-${step}`;
  last = review.decide(jobId, { index, label, queue: 'uncertain', clientId }).decision.logId;
  say(`D ${clientId} ${index} ${label ?? '-'}`);
}
