// Task files: built-in tasks/, user tasks in the data folder, task files given by path.
export { loadBuiltInTasks, loadUserTasks, resolveTask, saveUserTask, defaultTasksDir } from './library';
export { taskFolder, userTasksDir, assertTaskId, type TaskFolder, type TaskFolderOptions } from './folder';
