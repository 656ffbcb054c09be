// The tasks of one data folder: the built-in ones (tasks/ beside the code) and the user's own
// (<dataDir>/tasks/<id>.json). One lookup for every face, so listing, finding and saving a task
// work the same from the CLI, the app and `tatra serve`; built-in ids are reserved, so a user
// file can never shadow one.
import { unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { TaskEntry } from '../common/contract/tasks';
import { UserError } from '../common/errors';
import type { TaskDefinition } from '../common/task';
import { loadBuiltInTasks, loadUserTasks, resolveTask, saveUserTask } from './library';

export interface TaskFolderOptions {
  /**
   * Whether `resolve` also takes the path of a task file. The CLI: yes (the user names their own
   * files). A face that serves a page: never, a path there would let the page read server files.
   */
  allowPaths?: boolean;
}

export interface TaskFolder {
  /** `<dataDir>/tasks`: where the user's own tasks are saved. */
  readonly userDir: string;
  /** Every task, built-in first, then the user's (minus any that reuse a built-in id), each in id order. */
  list(): Promise<TaskEntry[]>;
  /** A task by id, built-in first; UserError `task_unknown` otherwise (never a path). */
  find(id: string): Promise<TaskEntry>;
  /** A task by id, or by file path where the folder allows paths: what a job or a sweep names. */
  resolve(idOrPath: string): Promise<TaskDefinition>;
  /** Creates or replaces a user task (a built-in id is refused, `task_reserved`). */
  save(task: TaskDefinition): Promise<TaskEntry>;
  /** Deletes a user task; false when there was no file. Built-in tasks cannot be deleted. */
  delete(id: string): Promise<boolean>;
}

/** Where the user's own tasks live in a data folder. */
export function userTasksDir(dataDir: string): string {
  return join(dataDir, 'tasks');
}

/** Task ids only: letters, digits, `_` and `-`, so an id can never name another file. */
export function assertTaskId(id: string): void {
  if (!/^[a-z0-9][a-z0-9_-]{0,63}$/.test(id)) throw new UserError(`"${id}" is not a task id`, 'task_unknown');
}

const byId = (a: TaskDefinition, b: TaskDefinition) => a.id.localeCompare(b.id);

export function taskFolder(dataDir: string, opts: TaskFolderOptions = {}): TaskFolder {
  const userDir = userTasksDir(dataDir);
  const list = async (): Promise<TaskEntry[]> => {
    const builtIn = await loadBuiltInTasks();
    const ids = new Set(builtIn.map((t) => t.id));
    const { tasks: user } = await loadUserTasks(userDir);
    return [
      ...builtIn.sort(byId).map((task) => ({ source: 'builtin' as const, task })),
      ...user.filter((t) => !ids.has(t.id)).sort(byId).map((task) => ({ source: 'user' as const, task })),
    ];
  };
  const find = async (id: string): Promise<TaskEntry> => {
    assertTaskId(id);
    const hit = (await list()).find((e) => e.task.id === id);
    if (!hit) throw new UserError(`unknown task "${id}"`, 'task_unknown');
    return hit;
  };
  return {
    userDir,
    list,
    find,
    resolve: async (ref) => (opts.allowPaths ? resolveTask(ref, { userDir }) : (await find(ref)).task),
    save: async (task) => {
      const builtIn = await loadBuiltInTasks();
      if (builtIn.some((t) => t.id === task.id)) throw new UserError(`"${task.id}" is a built-in task; save your version under another id`, 'task_reserved');
      return { source: 'user', task: await saveUserTask(userDir, task) };
    },
    delete: async (id) => {
      const entry = await find(id);
      if (entry.source === 'builtin') throw new UserError(`"${id}" is a built-in task and cannot be deleted`, 'task_reserved');
      try {
        await unlink(join(userDir, `${id}.json`));
        return true;
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === 'ENOENT') return false;
        throw e;
      }
    },
  };
}
