// `tatra tasks list|show`: the built-in tasks and the user's own (data folder's tasks/).
import { type Command } from 'commander';
import { labelNames, type TaskDefinition } from '../../common/task';
import { loadBuiltInTasks, loadUserTasks } from '../../tasks';
import { openCliServices } from '../session';
import { err, out } from '../ui';

function pad(s: string, width: number): string {
  return s.length >= width ? s : s + ' '.repeat(width - s.length);
}

function describeTask(task: TaskDefinition, source: string): string {
  const lines: string[] = [];
  lines.push(`${task.name} (${task.id}, ${task.kind.replace('_', ' ')}, ${source})`);
  if (task.description) lines.push(task.description);
  lines.push('');
  lines.push(`instruction      ${task.instruction}`);
  lines.push(`input name       ${task.inputName}`);
  lines.push(`paraphrases keep ${task.preserve}`);
  lines.push(`evaluator limit  ${task.evaluatorMaxTokens} tokens`);
  if (task.answerFormat) lines.push(`answers          ${task.answerFormat === 'integer' ? 'whole numbers' : 'TeX expressions'}`);
  if (task.defaultLabel) lines.push(`default label    ${task.defaultLabel}`);
  if (task.abstainLabel) lines.push(`abstain label    ${task.abstainLabel} (counted, never wins)`);
  if (task.options) lines.push(`options          ${task.options.join(', ')}`);
  if (task.topics.length > 0) lines.push(`topics           ${task.topics.join('; ')}`);
  for (const l of task.labels) {
    lines.push('');
    lines.push(`label ${l.name}`);
    if (l.style.length > 0) lines.push(`  style   ${l.style.join('; ')}`);
    if (l.topics.length > 0) lines.push(`  topics  ${l.topics.join('; ')}`);
  }
  return lines.join('\n');
}

export function registerTasks(program: Command): void {
  const tasks = program.command('tasks').description('the built-in tasks and your own');

  tasks
    .command('list')
    .description('list every task: id, kind, labels')
    .option('--data-dir <dir>', 'data folder holding your tasks (default $TATRA_DATA_DIR or ~/.tatra-studio)')
    .option('--json', 'print JSON')
    .action(async (opts: { dataDir?: string; json?: boolean }) => {
      const builtIn = await loadBuiltInTasks();
      const user = await loadUserTasks(openCliServices(opts).tasks.userDir);
      const rows = [...builtIn.map((t) => ({ task: t, source: 'built-in' })), ...user.tasks.map((t) => ({ task: t, source: 'user' }))];
      if (opts.json) {
        out(JSON.stringify({ tasks: rows.map((r) => ({ source: r.source, ...r.task })), invalid: user.invalid }, null, 2));
        return;
      }
      const idW = Math.max(2, ...rows.map((r) => r.task.id.length)) + 2;
      const kindW = 17;
      out(`${pad('ID', idW)}${pad('KIND', kindW)}${pad('SOURCE', 10)}LABELS`);
      for (const { task, source } of rows) {
        const labels = task.kind === 'math' ? `(free-form ${task.answerFormat === 'integer' ? 'integer' : 'TeX'} answers)` : labelNames(task).join(', ');
        out(`${pad(task.id, idW)}${pad(task.kind.replace('_', ' '), kindW)}${pad(source, 10)}${labels}`);
      }
      for (const bad of user.invalid) err(`tatra: skipped ${bad.file}: ${bad.error}`);
    });

  tasks
    .command('show')
    .description('show one task in full (an id or a task file)')
    .argument('<task>', 'task id or path to a task JSON file')
    .option('--data-dir <dir>', 'data folder holding your tasks')
    .option('--json', 'print the task as JSON')
    .action(async (ref: string, opts: { dataDir?: string; json?: boolean }) => {
      const task = await openCliServices(opts).tasks.resolve(ref);
      const builtIn = (await loadBuiltInTasks()).some((t) => t.id === task.id) && !ref.endsWith('.json');
      if (opts.json) out(JSON.stringify(task, null, 2));
      else out(describeTask(task, builtIn ? 'built-in' : 'user'));
    });
}
