// The eleven built-in tasks and the user's own.
import type { TaskEntry } from '../../../electron/common/contract/tasks';
import type { TaskDefinition } from '../../../electron/common/task';
import { getApi, messageOf } from '../api/client';
import type { SliceCreator } from './types';

export interface TasksSlice {
  tasks: TaskEntry[];
  tasksLoaded: boolean;
  /** The task Classify and Evaluate use. */
  currentTaskId: string;
  setCurrentTask(id: string): void;
  loadTasks(): Promise<void>;
  /** Saves a user task; resolves to the saved entry, or null after showing the error. */
  saveTask(task: TaskDefinition): Promise<TaskEntry | null>;
  deleteTask(id: string): Promise<boolean>;
}

export function taskById(tasks: readonly TaskEntry[], id: string): TaskDefinition | undefined {
  return tasks.find((e) => e.task.id === id)?.task;
}

const TASK_KEY = 'tatra.currentTask';

/** The task chosen last in this browser (the Evaluate set-up and its mapping depend on it). */
function rememberedTask(): string {
  try {
    return localStorage.getItem(TASK_KEY) || 'sst2';
  } catch {
    return 'sst2';
  }
}

export const createTasksSlice: SliceCreator<TasksSlice> = (set, get) => ({
  tasks: [],
  tasksLoaded: false,
  currentTaskId: rememberedTask(),
  setCurrentTask(id) {
    set({ currentTaskId: id });
    try {
      localStorage.setItem(TASK_KEY, id);
    } catch {
      // Without storage the choice lasts as long as the page.
    }
  },
  async loadTasks() {
    try {
      const tasks = await getApi().call('tasks.list', {});
      const current = get().currentTaskId;
      set({ tasks, tasksLoaded: true, currentTaskId: tasks.some((t) => t.task.id === current) ? current : (tasks[0]?.task.id ?? current) });
    } catch (e) {
      set({ tasksLoaded: true });
      get().notify('error', `Could not load tasks: ${messageOf(e)}`);
    }
  },
  async saveTask(task) {
    try {
      const saved = await getApi().call('tasks.save', { task });
      const others = get().tasks.filter((t) => t.task.id !== saved.task.id);
      set({ tasks: [...others, saved] });
      get().notify('success', `Saved task "${saved.task.name}"`);
      return saved;
    } catch (e) {
      get().notify('error', messageOf(e));
      return null;
    }
  },
  async deleteTask(id) {
    try {
      await getApi().call('tasks.delete', { id });
      set({ tasks: get().tasks.filter((t) => t.task.id !== id) });
      return true;
    } catch (e) {
      get().notify('error', messageOf(e));
      return false;
    }
  },
});
