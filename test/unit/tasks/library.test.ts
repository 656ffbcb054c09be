import { mkdtemp, writeFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadBuiltInTasks, loadUserTasks, resolveTask, saveUserTask } from '../../../electron/tasks';
import { UserError } from '../../../electron/common/errors';
import { labelNames } from '../../../electron/common/task';

const tasksDir = join(import.meta.dirname, '../../../tasks');
const scratch = await mkdtemp(join(tmpdir(), 'tatra-tasks-'));
afterAll(() => rm(scratch, { recursive: true, force: true }));

describe('built-in tasks', () => {
  it('every task file validates and the eleven of docs/method.md §15 are there', async () => {
    const tasks = await loadBuiltInTasks(tasksDir);
    expect(tasks.map((t) => t.id).sort()).toEqual(['cr', 'deepmath', 'gsm8k', 'math500', 'medqa', 'mr', 'news', 'sst2', 'sst5', 'subj', 'trec']);
  });

  it('labels, defaults, limits and topic pools follow the paper (docs/method.md §15)', async () => {
    const byId = new Map((await loadBuiltInTasks(tasksDir)).map((t) => [t.id, t]));
    const t = (id: string) => byId.get(id)!;
    expect(labelNames(t('sst2'))).toEqual(['negative', 'positive']);
    expect(labelNames(t('sst5'))).toEqual(['terrible', 'bad', 'okay', 'good', 'great']);
    expect(t('sst5').defaultLabel).toBe('okay');
    expect(labelNames(t('news'))).toEqual(['World', 'Sports', 'Business', 'Tech']);
    expect(t('trec').defaultLabel).toBe('Entity');
    expect(t('subj').abstainLabel).toBe('unsure');
    expect(labelNames(t('medqa'))).toEqual(['A', 'B', 'C', 'D', 'E']);
    expect(t('medqa').kind).toBe('multiple_choice');
    const limits = Object.fromEntries([...byId.values()].map((x) => [x.id, x.evaluatorMaxTokens]));
    expect(limits).toEqual({ cr: 4, deepmath: 128, gsm8k: 512, math500: 256, medqa: 8, mr: 4, news: 4, sst2: 4, sst5: 4, subj: 4, trec: 4 });
    expect(t('sst2').topics).toHaveLength(15);
    expect(t('cr').labels[0]!.topics).toContain('shipping issues');
    expect(t('gsm8k').topics).toEqual(['arithmetic', 'algebra', 'word problems', 'percentages', 'ratios']);
    expect(t('gsm8k').answerFormat).toBe('integer');
    for (const task of byId.values()) if (task.kind !== 'math') expect(task.labels.every((l) => l.style.length > 0)).toBe(true);
  });
});

describe('resolveTask', () => {
  it('finds a built-in task by id', async () => {
    expect((await resolveTask('trec', { builtInDir: tasksDir })).inputName).toBe('Question');
  });

  it('an unknown id is a task_unknown UserError listing the known ids', async () => {
    const err = await resolveTask('nope', { builtInDir: tasksDir }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UserError);
    expect((err as UserError).code).toBe('task_unknown');
    expect((err as UserError).message).toMatch(/unknown task "nope".*sst2.*trec/);
  });

  it('a bad task file gives one readable line naming the fields', async () => {
    const file = join(scratch, 'bad.json');
    await writeFile(file, JSON.stringify({ id: 'Bad Id', name: 'x', kind: 'classification', labels: [{ name: 'a"b' }], instruction: 'i', inputName: 'Sentence', preserve: 'p', evaluatorMaxTokens: 4 }));
    const err = (await resolveTask(file).catch((e: unknown) => e)) as UserError;
    expect(err).toBeInstanceOf(UserError);
    expect(err.message).not.toContain('\n');
    // Fields by name, as a person reads them (common/plain-errors.ts), not as schema paths.
    expect(err.message).toMatch(/The id: lower-case letters/);
    expect(err.message).toMatch(/Label 1's name: a label is one line without double quotes/);
  });

  it('a file that is not JSON says so', async () => {
    const file = join(scratch, 'broken.json');
    await writeFile(file, '{ not json');
    await expect(resolveTask(file)).rejects.toThrow(/not valid JSON/);
  });

  it('user tasks round-trip and invalid ones are listed, not thrown', async () => {
    const dir = join(scratch, 'user');
    const sst2 = await resolveTask('sst2', { builtInDir: tasksDir });
    await saveUserTask(dir, { ...sst2, id: 'my-task', name: 'Mine' });
    await writeFile(join(dir, 'junk.json'), '[]');
    const { tasks, invalid } = await loadUserTasks(dir);
    expect(tasks.map((t) => t.id)).toEqual(['my-task']);
    expect(invalid).toHaveLength(1);
    expect(invalid[0]!.file).toBe('junk.json');
    expect((await resolveTask('my-task', { userDir: dir, builtInDir: tasksDir })).name).toBe('Mine');
    await expect(saveUserTask(dir, { id: 'x' })).rejects.toBeInstanceOf(UserError);
  });
});
