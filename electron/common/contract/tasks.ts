// Tasks: the eleven built-in ones (tasks/*.json) and the user's own (saved in the data folder).
import { z } from 'zod';
import { TaskDefinition } from '../task';
import { method } from './define';

export const TaskSource = z.enum(['builtin', 'user']);
export type TaskSource = z.infer<typeof TaskSource>;

export const TaskEntry = z.object({
  source: TaskSource,
  task: TaskDefinition,
});
export type TaskEntry = z.infer<typeof TaskEntry>;

const TaskId = z.string().trim().min(1).max(64);

export const tasksMethods = {
  /** Every task, built-in first, then the user's, each in id order. */
  'tasks.list': method(z.object({}).default({}), z.array(TaskEntry)),
  /** One task by id (unknown id → user error "task_unknown"). */
  'tasks.get': method(z.object({ id: TaskId }), TaskEntry),
  /**
   * Create or replace a user task. A built-in id is refused (save it under a new id instead).
   * The task is validated with common/task.ts; the saved, default-filled task comes back.
   */
  'tasks.save': method(z.object({ task: TaskDefinition }), TaskEntry),
  /** Delete a user task; built-in tasks cannot be deleted. */
  'tasks.delete': method(z.object({ id: TaskId }), z.object({ deleted: z.boolean() })),
};

export const tasksEvents = {};
