// Tasks on disk: the built-in files in tasks/, user tasks in the data folder, and a task given as
// a path. Every file goes through the one zod schema (common/task.ts) and becomes one readable
// line when bad, never a stack trace. Kept out of the engine, which takes tasks as data.
import { readFile, readdir, writeFile, mkdir, rename } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join, resolve, basename, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { TaskDefinition, formatZodError, parseTaskJson } from '../common/task';
import { UserError } from '../common/errors';

/** tasks/ next to the code: walks up from this file (sources, dist/ bundle or packaged app) to the first folder holding one. */
export function defaultTasksDir(): string {
  if (process.env.TATRA_APP_ROOT) return join(resolve(process.env.TATRA_APP_ROOT), 'tasks');
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i++) {
    const candidate = join(dir, 'tasks');
    if (existsSync(join(candidate, 'sst2.json'))) return candidate;
    dir = dirname(dir);
  }
  return join(process.cwd(), 'tasks');
}

async function jsonFiles(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).filter((f) => f.endsWith('.json')).sort();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
}

/** The eleven shipped tasks (or whatever `dir` holds); a broken built-in file is a bug, so it throws. */
export async function loadBuiltInTasks(dir: string = defaultTasksDir()): Promise<TaskDefinition[]> {
  const files = await jsonFiles(dir);
  const tasks: TaskDefinition[] = [];
  for (const f of files) tasks.push(parseTaskJson(await readFile(join(dir, f), 'utf8'), `tasks/${f}`));
  return tasks;
}

/** User tasks in `dir`; invalid files are reported, not thrown, so one bad file hides nothing else. */
export async function loadUserTasks(dir: string): Promise<{ tasks: TaskDefinition[]; invalid: { file: string; error: string }[] }> {
  const tasks: TaskDefinition[] = [];
  const invalid: { file: string; error: string }[] = [];
  for (const f of await jsonFiles(dir)) {
    try {
      tasks.push(parseTaskJson(await readFile(join(dir, f), 'utf8'), f));
    } catch (e) {
      invalid.push({ file: f, error: e instanceof Error ? e.message : String(e) });
    }
  }
  return { tasks, invalid };
}

/** Writes a user task as `<dir>/<id>.json` (validated first; written to a temp file and renamed, so a crash never leaves half a file). */
export async function saveUserTask(dir: string, task: unknown): Promise<TaskDefinition> {
  const parsed = TaskDefinition.safeParse(task);
  if (!parsed.success) throw new UserError(`not a valid task: ${formatZodError(parsed.error)}`, 'task_invalid');
  await mkdir(dir, { recursive: true });
  const file = join(dir, `${parsed.data.id}.json`);
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(parsed.data, null, 2)}\n`, 'utf8');
  await rename(tmp, file);
  return parsed.data;
}

function looksLikePath(s: string): boolean {
  return s.endsWith('.json') || s.includes('/') || s.includes('\\');
}

/**
 * A task by id (user tasks shadow nothing: built-in ids win) or by path to a task file.
 * Unknown id: UserError `task_unknown` listing the known ids.
 */
export async function resolveTask(idOrPath: string, opts: { userDir?: string; builtInDir?: string } = {}): Promise<TaskDefinition> {
  const ref = idOrPath.trim();
  if (ref === '') throw new UserError('no task given', 'task_unknown');
  if (looksLikePath(ref)) {
    let text: string;
    try {
      text = await readFile(ref, 'utf8');
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      throw new UserError(code === 'ENOENT' ? `task file not found: ${ref}` : `cannot read task file ${ref}: ${(e as Error).message}`, code === 'ENOENT' ? 'task_unknown' : 'task_invalid');
    }
    return parseTaskJson(text, basename(ref));
  }
  const builtIn = await loadBuiltInTasks(opts.builtInDir);
  const found = builtIn.find((t) => t.id === ref);
  if (found) return found;
  const user = opts.userDir ? (await loadUserTasks(opts.userDir)).tasks : [];
  const mine = user.find((t) => t.id === ref);
  if (mine) return mine;
  const known = [...builtIn, ...user].map((t) => t.id);
  throw new UserError(`unknown task "${ref}"; known tasks: ${known.join(', ') || '(none)'}`, 'task_unknown');
}
