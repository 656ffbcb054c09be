// The CLI's output against hostile readers and data, on a real job database with 60,000 rows
// (written through the store, no model needed): a pipe closed early (`| head -1`), Ctrl-C in the
// middle of an export, and terminal escape sequences in data-set cells.
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, watch, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { openJobStore } from '../../electron/jobs';
import { storePausedJob } from '../helpers/stored-job';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const dir = mkdtempSync(join(tmpdir(), 'tatra-cli-out-'));
const dataDir = join(dir, 'data');
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let jobId = '';
const ROWS = 60_000;
const HOSTILE = 'evil \x1b]0;pwned\x07title \x1b[2Jclear \x9b31mred \x1b]8;;http://x\x1b\\link';

beforeAll(async () => {
  const store = openJobStore(dataDir);
  try {
    const filler = 'a long and winding review of a film that goes on and on '.repeat(8);
    jobId = await storePausedJob(store, { name: 'hostile \x1b[31mname', rows: ROWS, input: (i) => (i === 0 ? HOSTILE : `${filler}${i}`) });
  } finally {
    store.close();
  }
});

function tatra(args: string[], data = dataDir) {
  return spawn(process.execPath, [join(repoRoot, 'bin', 'tatra.js'), ...args, '--data-dir', data], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
}

function ended(child: ReturnType<typeof tatra>): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((res) => child.on('close', (code, signal) => res({ code, signal, stderr })));
}

it('`jobs show --rows 2000 | head -1`: the closed pipe ends the output quietly (exit 0, no stack trace)', async () => {
  const child = tatra(['jobs', 'show', jobId, '--rows', '2000']);
  const end = ended(child);
  await new Promise<void>((res) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes('\n')) {
        // What `head -1` does after its line: close the reading end.
        child.stdout!.destroy();
        res();
      }
    });
  });
  const r = await end;
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
});

it('`jobs show --rows` and `jobs list` print escape sequences from cells as visible text', async () => {
  const child = tatra(['jobs', 'show', jobId, '--rows', '1']);
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  const r = await ended(child);
  expect(r.code, r.stderr).toBe(0);
  // eslint-disable-next-line no-control-regex
  expect(out).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
  expect(out).toContain('evil \\u001b]0;pwned\\u0007title \\u001b[2Jclear \\u009b31mred');
  expect(out).toContain('hostile \\u001b[31mname');
  const list = tatra(['jobs', 'list']);
  let listed = '';
  list.stdout!.on('data', (d: Buffer) => (listed += d.toString()));
  expect((await ended(list)).code).toBe(0);
  expect(listed).toContain('hostile \\u001b[31mname');
  expect(listed).not.toContain('\x1b');
});

it.runIf(process.platform !== 'win32')('SIGINT in the middle of `jobs export` removes <out>.partial (exit 130, one line)', async () => {
  const out = join(dir, 'export.csv');
  // Freeze the process as soon as it writes its partial file (watched from before it starts), so
  // the signal surely lands mid-export.
  const partial = `${out}.partial`;
  const watcher = watch(dir);
  const child = tatra(['jobs', 'export', jobId, '--out', out]);
  const end = ended(child);
  const caught = await new Promise<boolean>((resolve) => {
    watcher.on('change', (_type: string, file: string | null) => {
      if (file !== basename(partial) || !existsSync(partial)) return;
      child.kill('SIGSTOP');
      if (existsSync(partial) && !existsSync(out)) {
        watcher.close();
        resolve(true);
      } else child.kill('SIGCONT');
    });
    void end.then(() => {
      watcher.close();
      resolve(false);
    });
  });
  expect(caught, 'the export finished before it could be interrupted').toBe(true);
  child.kill('SIGINT');
  child.kill('SIGCONT');
  const r = await end;
  expect(r.code).toBe(130);
  expect(r.stderr).toBe('tatra: cancelled\n');
  expect(readdirSync(dir).filter((f) => f.startsWith('export'))).toEqual([]);
});

it.each([
  ['an export into a missing folder', () => tatra(['jobs', 'export', jobId, '--out', join(dir, 'nowhere', 'x.csv')]), /^tatra: cannot export to .*nowhere\/x\.csv: the folder .*nowhere does not exist$/],
  ['an export onto a folder', () => tatra(['jobs', 'export', jobId, '--out', dir]), /^tatra: .* is a folder; give a file name to export to$/],
  ['a data folder that is a file', () => tatra(['jobs', 'list'], join(dir, 'plain-file')), /^tatra: cannot use the data folder .*plain-file: something else already exists there$/],
  ['a data folder under a file', () => tatra(['jobs', 'list'], join(dir, 'plain-file', 'sub')), /^tatra: cannot use the data folder .*plain-file\/sub: a part of the path is a file, not a folder$/],
])('an environment problem is one line naming the path and the cause: %s', async (_name, run, message) => {
  writeFileSync(join(dir, 'plain-file'), 'x');
  const r = await ended(run());
  expect(r.code).toBe(2);
  expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(message)]);
});

// Root writes anywhere, so only an ordinary user can see a read-only folder refuse.
it.runIf(process.getuid?.() !== 0)('a read-only data folder is one line naming the database and the cause', async () => {
  const ro = join(dir, 'read-only');
  mkdirSync(ro);
  chmodSync(ro, 0o555);
  try {
    const r = await ended(tatra(['jobs', 'list'], ro));
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toMatch(/^tatra: cannot use the job database .*read-only\/tatra\.db: (the database file cannot be opened|the database is read-only|permission denied)/);
  } finally {
    chmodSync(ro, 0o755);
  }
});
