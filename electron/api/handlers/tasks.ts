// tasks.list / get / save / delete over the data folder's tasks (tasks/folder.ts): built-in ids
// are reserved, so a user file can never shadow one; a page names tasks by id, never by path.
import type { tasksMethods } from '../../common/contract/tasks';
import type { HandlerGroup, HostDeps } from '../deps';

export function createTasksHandlers(deps: HostDeps): HandlerGroup<typeof tasksMethods> {
  const { tasks } = deps.services;
  return {
    handlers: {
      'tasks.list': () => tasks.list(),
      'tasks.get': ({ id }) => tasks.find(id),
      'tasks.save': ({ task }) => tasks.save(task),
      'tasks.delete': async ({ id }) => ({ deleted: await tasks.delete(id) }),
    },
  };
}
