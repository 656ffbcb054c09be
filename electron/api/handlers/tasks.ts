// tasks.list / get / save / delete over the engine's task loading. User tasks live in
// <dataDir>/tasks/<id>.json; built-in ids are reserved so a user file can never shadow one.
import { unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { tasksMethods, TaskEntry } from '../../common/contract/tasks';
import { UserError } from '../../common/errors';
import type { TaskDefinition } from '../../common/task';
import { loadBuiltInTasks, loadUserTasks, saveUserTask } from '../../tasks';
import type { HandlerGroup, HostDeps } from '../deps';

export function userTasksDir(dataDir: string): string {
  return join(dataDir, 'tasks');
}

/** Task ids only: a path here would let a browser-mode page read files on the server. */
export function assertTaskId(id: string): void {
  if (!/^[a-z0-9][a-z0-9_-]{0,63}$/.test(id)) throw new UserError(`"${id}" is not a task id`, 'task_unknown');
}

export async function listTasks(dataDir: string): Promise<TaskEntry[]> {
  const builtIn = await loadBuiltInTasks();
  const ids = new Set(builtIn.map((t) => t.id));
  const { tasks: user } = await loadUserTasks(userTasksDir(dataDir));
  const byId = (a: TaskDefinition, b: TaskDefinition) => a.id.localeCompare(b.id);
  return [
    ...builtIn.sort(byId).map((task) => ({ source: 'builtin' as const, task })),
    ...user.filter((t) => !ids.has(t.id)).sort(byId).map((task) => ({ source: 'user' as const, task })),
  ];
}

/** A task by id, built-in first; UserError task_unknown otherwise. */
export async function findTask(dataDir: string, id: string): Promise<TaskEntry> {
  assertTaskId(id);
  const all = await listTasks(dataDir);
  const hit = all.find((e) => e.task.id === id);
  if (!hit) throw new UserError(`unknown task "${id}"`, 'task_unknown');
  return hit;
}

export function createTasksHandlers(deps: HostDeps): HandlerGroup<typeof tasksMethods> {
  return {
    handlers: {
      'tasks.list': () => listTasks(deps.dataDir),
      'tasks.get': ({ id }) => findTask(deps.dataDir, id),
      'tasks.save': async ({ task }) => {
        const builtIn = await loadBuiltInTasks();
        if (builtIn.some((t) => t.id === task.id)) {
          throw new UserError(`"${task.id}" is a built-in task; save your version under another id`, 'task_reserved');
        }
        return { source: 'user', task: await saveUserTask(userTasksDir(deps.dataDir), task) };
      },
      'tasks.delete': async ({ id }) => {
        const entry = await findTask(deps.dataDir, id);
        if (entry.source === 'builtin') throw new UserError(`"${id}" is a built-in task and cannot be deleted`, 'task_reserved');
        try {
          await unlink(join(userTasksDir(deps.dataDir), `${id}.json`));
          return { deleted: true };
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { deleted: false };
          throw e;
        }
      },
    },
  };
}
