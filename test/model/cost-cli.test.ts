// Knowing the cost before paying it, end to end on the tiny synthetic model through the CLI (run in
// this process, tatraInProcess; the unreadable budget through the built one, exit code and all):
// `--dry-run --json` against what `eval` and `sweep` then really make, a budget that stops a job
// and a resume that raises it, and the confident early-stop rule recorded by classify.
//
// What a plan can know: every call (minus the evaluations a repeated paraphrase saves, which only
// the generated text decides: counted here from the stored rows), and the tokens of every prompt
// whose text exists before the run (example and paraphrase prompts; evaluator prompts once the
// generator's outputs are in the cache). Text not generated yet is estimated, so a fresh plan's
// evaluator prompts and completions are not compared exactly; a plan over cached generator
// outputs is, in every figure.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CostPlan, Usage } from '../../electron/common/plan';
import type { TatraResult } from '../../electron/common/tatra';
import { tinyModelBPath, tinyModelPath } from '../helpers/models';
import { lastJson as json, queryJobDb as query, keepModelsBetweenRuns, releaseInProcessRuns, storedJobRows, tatraCli, tatraInProcess as cli } from '../helpers/tatra-cli';

const dir = mkdtempSync(join(tmpdir(), 'tatra-cost-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
beforeAll(keepModelsBetweenRuns);
afterAll(releaseInProcessRuns);

let model: string;
let data: string;
beforeAll(async () => {
  model = await tinyModelPath();
  data = join(dir, 'reviews.csv');
  const texts = ['a warm, funny film', 'dull and slow', 'superb acting', 'makes no sense', 'a delight from start to finish', 'a tedious mess'];
  writeFileSync(data, 'review,sentiment\n' + texts.map((t, i) => `"${t}",${i % 2 === 0 ? 'pos' : 'neg'}\n`).join(''));
});

/** What eval and jobs resume print with --json: the job as jobs.get answers it, and its metrics. */
interface EvalOut {
  job: { id: string; status: string; stoppedBy: string | null; rowsDone: number; rowsTotal: number; budget: unknown; usage: Usage };
}

/** Evaluations the run saved because a paraphrase repeated another candidate of its run (read from the stored rows). */
function repeatedCandidates(dataDir: string, jobId: string): number {
  let repeated = 0;
  for (const row of storedJobRows(dataDir, jobId).filter((r) => r.status === 'done')) {
    for (const run of row.runs!) {
      const candidates = [row.input.trim(), ...run.paraphrases];
      repeated += candidates.length - new Set(candidates).size;
    }
  }
  return repeated;
}

const n = (c: CostPlan['calls']['total']) => (typeof c === 'number' ? c : Number.NaN);

describe('a dry run foresees what eval makes', () => {
  const dataDir = () => join(dir, 'eval');
  const args = () => ['eval', '--task', 'sst2', '--data', data, '--label-map', 'pos=positive,neg=negative', '--model', model, '-n', '2', '-k', '2', '-r', '2', '--seed', '3', '--threads', '1', '--data-dir', dataDir()];

  it('calls per stage exactly, prompt tokens of the known prompts exactly; over cached generator outputs every figure', async () => {
    const { plan } = json<{ plan: CostPlan }>((await cli([...args(), '--dry-run', '--json'])).stdout);
    // Nothing ran: no job was created.
    expect(query(dataDir(), 'SELECT id FROM jobs')).toEqual([]);
    // 2 runs × 2 label calls; 6 rows × 2 runs paraphrases; 6 × 2 × 3 evaluations.
    expect(plan.calls).toEqual({ examples: 4, paraphrases: 12, evaluations: 36, total: 52 });
    expect(plan.stages.examples.promptCounted).toBe(true);
    expect(plan.stages.evaluations.promptCounted).toBe(false);
    expect(plan.tokensBasis).toMatch(/own tokenizer/);

    const run = json<EvalOut>((await cli([...args(), '--json'])).stdout);
    expect(run.job.status).toBe('done');
    const u = run.job.usage;
    const repeated = repeatedCandidates(dataDir(), run.job.id);
    expect(u.calls).toEqual({ examples: 4, paraphrases: 12, evaluations: 36 - repeated, total: 52 - repeated });
    expect(u.stages!.examples.prompt).toBe(plan.stages.examples.prompt);
    expect(u.stages!.paraphrases.prompt).toBe(plan.stages.paraphrases.prompt);
    expect(u.tokens.prompt).toBe(u.stages!.examples.prompt + u.stages!.paraphrases.prompt + u.stages!.evaluations.prompt);

    // The same job again reads every example and paraphrase from the cache: the plan knows every
    // evaluator prompt, and its lengths and speed come from the job just run.
    const again = json<{ plan: CostPlan }>((await cli([...args(), '--dry-run', '--json'])).stdout).plan;
    expect(again.calls).toEqual({ examples: 0, paraphrases: 0, evaluations: 36 - repeated, total: 36 - repeated });
    expect(again.stages.evaluations.promptCounted).toBe(true);
    expect(again.basis).toContain(run.job.id);
    // Timed from that job (the first plan had no speed to go on); on the tiny model it may be
    // under a second, so tenths are kept there.
    expect(plan.seconds).toBeNull();
    expect(again.seconds).toBeGreaterThan(0);
    const second = json<EvalOut>((await cli([...args(), '--json'])).stdout);
    expect(second.job.usage.calls).toEqual(again.calls);
    expect(second.job.usage.tokens).toEqual(again.tokens);

    // Another evaluator on the same generator outputs (a pairing comparison's case): exact too.
    const other = await tinyModelBPath();
    const pair = [...args().filter((a, i, all) => a !== '--model' && all[i - 1] !== '--model'), '--generator', model, '--evaluator', other];
    const planned = json<{ plan: CostPlan }>((await cli([...pair, '--dry-run', '--json'])).stdout).plan;
    const made = json<EvalOut>((await cli([...pair, '--json'])).stdout);
    expect(made.job.usage.calls).toEqual(planned.calls);
    expect(made.job.usage.tokens).toEqual(planned.tokens);
  });
});

describe('a dry run foresees what sweep makes', () => {
  it('calls per stage exactly (shared examples, paraphrases and evaluations), prompt tokens of the known prompts exactly', async () => {
    const dataDir = join(dir, 'sweep');
    const args = ['sweep', '--task', 'sst2', '--data', data, '--label-map', 'pos=positive,neg=negative', '--model', model, '-n', '0,2', '-k', '0,2', '-r', '1,2', '--seeds', '1', '--limit', '4', '--threads', '1', '--data-dir', dataDir];
    const { plan } = json<{ plan: CostPlan }>((await cli([...args, '--dry-run', '--json'])).stdout);
    expect(query(dataDir, 'SELECT id FROM experiments')).toEqual([]);
    // Examples once per (k, seed, run): k=2 → 2 runs × 2 labels; paraphrases once per (n, run, row):
    // n=2 → 2 × 4; evaluations: the original under a run's examples is shared by every n.
    expect(plan.calls.examples).toBe(4);
    expect(plan.calls.paraphrases).toBe(8);
    // k=0: the original is the same prompt in both runs (1 per row) + n=2: 2 runs × 2 paraphrases;
    // k=2: 2 runs' originals + n=2: 2 × 2 → per row 1 + 4 + 2 + 4 = 11.
    expect(plan.calls.evaluations).toBe(4 * 11);

    const swept = json<{ sharing: { generatorCalls: { made: number }; evaluatorCalls: { made: number } } }>((await cli([...args, '--json'])).stdout);
    const jobs = query<{ id: string; usage_json: string }>(dataDir, 'SELECT id, usage_json FROM jobs');
    expect(jobs).toHaveLength(4);
    const usages = jobs.map((j) => JSON.parse(j.usage_json) as Usage);
    const sum = (pick: (u: Usage) => number) => usages.reduce((a, u) => a + pick(u), 0);
    const repeated = jobs.reduce((a, j) => a + repeatedCandidates(dataDir, j.id), 0);
    expect(sum((u) => u.calls.examples)).toBe(n(plan.calls.examples));
    expect(sum((u) => u.calls.paraphrases)).toBe(n(plan.calls.paraphrases));
    // A repeated paraphrase is evaluated once; the sweep's store may also answer it from another job.
    expect(sum((u) => u.calls.evaluations)).toBeLessThanOrEqual(n(plan.calls.evaluations));
    expect(sum((u) => u.calls.evaluations)).toBeGreaterThanOrEqual(n(plan.calls.evaluations) - repeated);
    expect(sum((u) => u.stages!.examples.prompt)).toBe(plan.stages.examples.prompt);
    expect(sum((u) => u.stages!.paraphrases.prompt)).toBe(plan.stages.paraphrases.prompt);
    // The calls the sweep says it made are its jobs' meters, summed (usage is counted once, by the meter).
    expect(swept.sharing.generatorCalls.made).toBe(sum((u) => u.calls.examples + u.calls.paraphrases));
    expect(swept.sharing.evaluatorCalls.made).toBe(sum((u) => u.calls.evaluations));
  });
});

describe('a budget that holds', () => {
  it('--budget calls=N stops before N, a resume may raise it, and the rows equal a run without a budget', async () => {
    const common = ['--task', 'sst2', '--data', data, '--label-map', 'pos=positive,neg=negative', '--model', model, '-n', '1', '-k', '2', '-r', '2', '--seed', '7', '--threads', '1', '--json'];
    const budgeted = join(dir, 'budget');
    // 4 example calls, then each row makes 2 paraphrase calls and 4 evaluations at most: 4 + 3 × 6 = 22.
    const stopped = json<EvalOut>((await cli(['eval', ...common, '--budget', 'calls=25', '--data-dir', budgeted])).stdout);
    expect(stopped.job).toMatchObject({ status: 'paused', stoppedBy: 'budget' });
    expect(stopped.job.usage.calls.total).toBeLessThanOrEqual(25);
    expect(stopped.job.rowsDone).toBe(3);
    const id = stopped.job.id;
    // No row half-counted: every stored row is whole, and the rest were never started.
    expect(query(budgeted, "SELECT idx FROM job_rows WHERE job_id = ? AND status != 'pending' ORDER BY idx", id)).toEqual([{ idx: 0 }, { idx: 1 }, { idx: 2 }]);

    // Resumed within the same budget: nothing more fits.
    const still = json<EvalOut>((await cli(['jobs', 'resume', id, '--threads', '1', '--json', '--data-dir', budgeted])).stdout);
    expect(still.job).toMatchObject({ status: 'paused', stoppedBy: 'budget' });
    expect(still.job.rowsDone).toBe(3);
    expect(still.job.usage).toEqual(stopped.job.usage);

    const done = json<EvalOut>((await cli(['jobs', 'resume', id, '--threads', '1', '--json', '--budget', 'calls=1000', '--data-dir', budgeted])).stdout);
    expect(done.job).toMatchObject({ status: 'done', stoppedBy: null });
    expect(done.job.usage.calls.total).toBeLessThanOrEqual(4 + 6 * 6);

    const plain = join(dir, 'nobudget');
    const free = json<EvalOut>((await cli(['eval', ...common, '--data-dir', plain])).stdout);
    const rows = (d: string, jobId: string) => query(d, 'SELECT idx, prediction, confidence, votes_json, runs_json FROM job_rows WHERE job_id = ? ORDER BY idx', jobId);
    expect(rows(budgeted, id)).toEqual(rows(plain, free.job.id));
    expect(done.job.usage.calls).toEqual(free.job.usage.calls);
  });

  it('a budget that cannot be read is one line and exit 2', async () => {
    const err = await tatraCli(['eval', '--task', 'sst2', '--data', data, '--model', model, '--budget', 'calls=lots', '--data-dir', join(dir, 'bad')]).catch((e: { code: number; stderr: string }) => e);
    expect(err).toMatchObject({ code: 2 });
    expect((err as { stderr: string }).stderr.trim()).toBe('tatra: --budget: a budget is calls=N, tokens=N or usd=X (e.g. calls=50000, tokens=2e7, usd=12), got "calls=lots"');
  });
});

describe('an experiment budget and plan through the CLI', () => {
  it("sweep --budget holds for its jobs together, paused stopped by it; a resume with a larger one finishes it", async () => {
    const dataDir = join(dir, 'sweep-budget');
    // Job n=0: 2 example calls + 4 evaluations; job n=1 (the same examples and originals, shared):
    // 4 paraphrase calls + 4 evaluations. With 8 calls the second job has 2 left: no row fits.
    const args = ['sweep', '--task', 'sst2', '--data', data, '--label-map', 'pos=positive,neg=negative', '--model', model, '-n', '0,1', '-k', '2', '-r', '1', '--seeds', '1', '--limit', '4', '--threads', '1', '--data-dir', dataDir, '--json'];
    await cli([...args, '--budget', 'calls=8']);
    const [exp] = query<{ id: string; status: string; stopped_by: string | null }>(dataDir, 'SELECT id, status, stopped_by FROM experiments');
    expect(exp).toMatchObject({ status: 'paused', stopped_by: 'budget' });
    const spent = () => query<{ usage_json: string }>(dataDir, 'SELECT usage_json FROM jobs').reduce((a, j) => a + (JSON.parse(j.usage_json) as Usage).calls.total, 0);
    expect(spent()).toBeLessThanOrEqual(8);
    await cli(['sweep', 'resume', exp!.id, '--threads', '1', '--data-dir', dataDir, '--json', '--budget', 'calls=1000']);
    expect(query(dataDir, 'SELECT status, stopped_by FROM experiments')).toEqual([{ status: 'done', stopped_by: null }]);
    expect(spent()).toBeGreaterThan(8);
  });

  it('compare --dry-run --json prints the plan of every pair and starts nothing', async () => {
    const dataDir = join(dir, 'compare-plan');
    const other = await tinyModelBPath();
    const { plan } = json<{ plan: CostPlan }>(
      (await cli(['compare', '--task', 'sst2', '--data', data, '--label-map', 'pos=positive,neg=negative', '--generators', model, '--evaluators', `${model},${other}`, '-n', '1', '-k', '2', '-r', '1', '--limit', '4', '--threads', '1', '--data-dir', dataDir, '--dry-run', '--detect', '5', '--json'])).stdout,
    );
    // With no job on the file, the power line rests on the assumed 20 % disagreement (docs/method.md §16):
    // 4 rows tell nothing apart, and 5 points need 626 rows (Connor's formula by hand).
    expect(plan.power).toMatchObject({ rows: 4, disagreement: 0.2, detectable: null, target: 0.05, rowsNeeded: 626 });
    expect(plan.power!.basis).toMatch(/^assumed/);
    // One generator: its 2 example and 4 paraphrase calls serve both evaluators; each evaluates 4 × 2.
    expect(plan.calls).toEqual({ examples: 2, paraphrases: 4, evaluations: 16, total: 22 });
    expect(query(dataDir, 'SELECT id FROM experiments')).toEqual([]);
  });
});

describe('confident early stop through the CLI', () => {
  it('records the rule that stopped it beside decidedEarly and votesCast', async () => {
    const base = ['classify', '--task', 'sst2', '--model', model, '-n', '2', '-k', '2', '-r', '10', '--seed', '1', '--threads', '1', '--json'];
    const [sure, exact] = await Promise.all([cli([...base, '--early-stop', 'confident:0.9', 'a fine film']), cli([...base, '--early-stop', 'exact', 'a fine film'])]).then((rs) => rs.map((r) => json<TatraResult>(r.stdout)));
    expect(sure!.earlyStop).toMatchObject({ rule: 'confident', p: 0.9 });
    expect(exact!.earlyStop).toMatchObject({ rule: 'exact', p: 1 });
    expect(sure!.votesCast).toBe(sure!.runs.length * 3);
    if (sure!.decidedEarly) expect(sure!.earlyStop!.risk).toBeLessThanOrEqual(0.1);
    // Each run's output is its own whatever the waves: the runs made are the same runs.
    const made = Math.min(sure!.runs.length, exact!.runs.length);
    expect(sure!.runs.slice(0, made)).toEqual(exact!.runs.slice(0, made));
  });

  it('a value of --early-stop that is no rule is the text to classify, with the exact rule on', async () => {
    const base = ['classify', '--task', 'mr', '--model', model, '-n', '1', '-k', '2', '-r', '2', '--seed', '1', '--threads', '1', '--json'];
    const quoted = json<TatraResult>((await cli([...base, '--early-stop', 'an unforgettable film'])).stdout);
    expect(quoted.input).toBe('an unforgettable film');
    expect(quoted.earlyStop).toMatchObject({ rule: 'exact', p: 1 });
    // Unquoted: the option took the first word, the rest are the argument's.
    const words = json<TatraResult>((await cli([...base, '--early-stop', 'an', 'unforgettable', 'film'])).stdout);
    expect(words.input).toBe('an unforgettable film');
    // A malformed rule is still an error, not text.
    await expect(cli([...base, '--early-stop', 'confident:2', 'a film'])).rejects.toMatchObject({ stderr: expect.stringContaining('--early-stop confident:P needs P between') });
  });
});
