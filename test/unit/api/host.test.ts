import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createApiHost, type ApiHost } from '../../../electron/api/host';
import { apiMethods } from '../../../electron/common/contract';

let dir: string;
let host: ApiHost;
const logs: string[] = [];

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tatra-host-'));
  logs.length = 0;
  host = await createApiHost({ dataDir: dir, threads: 1, mode: 'test', log: (l) => logs.push(l) });
});
afterEach(async () => {
  await host.dispose();
  rmSync(dir, { recursive: true, force: true });
});

const myTask = {
  id: 'my-spam',
  name: 'Spam or not',
  kind: 'classification',
  labels: [
    { name: 'ham', style: ['friendly'], topics: ['family'] },
    { name: 'spam', style: ['pushy'], topics: ['prizes'] },
  ],
  instruction: 'Say whether the message is spam or ham.',
  inputName: 'Message',
  preserve: 'whether it is spam',
  evaluatorMaxTokens: 4,
};

describe('ApiHost', () => {
  it('refuses an unknown method with a clear error', async () => {
    const r = await host.invoke('tasks.destroyEverything', {});
    expect(r).toEqual({ ok: false, error: { code: 'unknown_method', message: 'unknown method "tasks.destroyEverything"' } });
  });

  it('validates input against the contract before any handler runs', async () => {
    const r = await host.invoke('tasks.get', { id: 42 });
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.error.code).toBe('invalid_input');
      // Plain words naming the field, never a schema path or the method.
      expect(r.error.message).toBe('The id must be text');
    }
    const bad = await host.invoke('classify.start', { taskId: 'sst2', input: '   ', generator: 'a.gguf', evaluator: 'a.gguf', settings: { n: -1, k: 8, r: 1, seed: 1, scope: 'run' } });
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.error.message).toBe('The input: type an input to classify; Paraphrases n must be at least 0');
    const long = await host.invoke('classify.start', { taskId: 'sst2', input: 'word '.repeat(5000), generator: 'a.gguf', evaluator: 'a.gguf', settings: { n: 1, k: 8, r: 1, seed: 1, scope: 'run' } });
    expect(long).toEqual({ ok: false, error: { code: 'invalid_input', message: 'The input is too long: 25,000 characters; at most 20,000' } });
  });

  it('lists the eleven built-in tasks, saves a user task and lists it after them', async () => {
    const before = await host.invoke('tasks.list', {});
    expect(before.ok).toBe(true);
    const list = (before as { value: { source: string; task: { id: string } }[] }).value;
    expect(list.filter((e) => e.source === 'builtin').map((e) => e.task.id)).toContain('sst2');
    expect(list.filter((e) => e.source === 'builtin')).toHaveLength(11);

    const saved = await host.invoke('tasks.save', { task: myTask });
    expect(saved).toMatchObject({ ok: true, value: { source: 'user', task: { id: 'my-spam', description: '' } } });
    const onDisk = JSON.parse(readFileSync(join(dir, 'tasks', 'my-spam.json'), 'utf8')) as { id: string };
    expect(onDisk.id).toBe('my-spam');

    const after = (await host.invoke('tasks.list', undefined)) as { ok: true; value: { source: string; task: { id: string } }[] };
    expect(after.value.at(-1)).toMatchObject({ source: 'user', task: { id: 'my-spam' } });
    expect(await host.invoke('tasks.delete', { id: 'my-spam' })).toEqual({ ok: true, value: { deleted: true } });
  });

  it('turns UserErrors into their code and message', async () => {
    const r = await host.invoke('tasks.save', { task: { ...myTask, id: 'sst2' } });
    expect(r).toMatchObject({ ok: false, error: { code: 'task_reserved' } });
    const unknown = await host.invoke('tasks.get', { id: 'nope' });
    expect(unknown).toEqual({ ok: false, error: { code: 'task_unknown', message: 'unknown task "nope"' } });
    const path = await host.invoke('tasks.get', { id: '../../etc/passwd' });
    expect(path).toMatchObject({ ok: false, error: { code: 'task_unknown' } });
  });

  it('rejects an invalid task as typed with the schema message', async () => {
    const r = await host.invoke('tasks.save', { task: { ...myTask, labels: [{ name: 'only' }] } });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.message).toContain('at least two labels');
  });

  it('merges settings, persists them and streams settings.changed', async () => {
    const seen: [string, unknown][] = [];
    const off = host.subscribe((e, p) => seen.push([e, p]));
    const r = await host.invoke('settings.set', { theme: 'dark', tatra: { n: 2, k: 4, r: 1, seed: 7, scope: 'input' } });
    expect(r).toMatchObject({ ok: true, value: { theme: 'dark', generator: null, tatra: { n: 2, seed: 7 } } });
    off();
    expect(seen).toHaveLength(1);
    expect(seen[0]![0]).toBe('settings.changed');
    await host.dispose();
    host = await createApiHost({ dataDir: dir, threads: 1, mode: 'test' });
    expect(await host.invoke('settings.get', {})).toMatchObject({ ok: true, value: { theme: 'dark', tatra: { scope: 'input' } } });
    const info = await host.invoke('app.info', {});
    expect(info).toMatchObject({ ok: true, value: { mode: 'test', threads: 1, dataDir: dir } });
  });

  it('implements every method of the contract (none answers not_available)', async () => {
    const missing: string[] = [];
    for (const name of Object.keys(apiMethods)) {
      // A deliberately wrong input: validation answers before any work is done.
      const r = await host.invoke(name, { __bogus: Symbol.for('x').toString(), jobId: 42, runId: 42, id: 42, path: 42, source: 42, task: 42, taskId: 42 });
      if (!r.ok && r.error.code === 'not_available') missing.push(name);
    }
    expect(missing).toEqual([]);
  });

  it("previews a file for a task id that names no task without a suggestion, and says why when the tasks folder cannot be read", async () => {
    const data = join(dir, 'mail.csv');
    writeFileSync(data, 'text,label\nwin a prize,spam\nsee you at dinner,ham\n');
    const unknown = await host.invoke('jobs.preview', { path: data, taskId: 'no-such-task' });
    expect(unknown.ok).toBe(true);
    if (unknown.ok) expect((unknown.value as { goldValues: { suggested: string | null }[] }).goldValues.map((g) => g.suggested)).toEqual([null, null]);
    // The user tasks folder is a file: reading it fails, and the preview says so.
    writeFileSync(join(dir, 'tasks'), '');
    const unreadable = await host.invoke('jobs.preview', { path: data, taskId: 'no-such-task' });
    expect(unreadable.ok).toBe(false);
    if (!unreadable.ok) expect(unreadable.error).toEqual({ code: 'environment', message: `cannot use ${join(dir, 'tasks')}: a part of the path is a file, not a folder` });
  });

  it('answers disposed after dispose', async () => {
    await host.dispose();
    expect(await host.invoke('tasks.list', {})).toMatchObject({ ok: false, error: { code: 'disposed' } });
  });
});
