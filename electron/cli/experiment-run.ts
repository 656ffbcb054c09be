// Running a long experiment (a sweep, a comparison) from the CLI: start or resume it, show its
// progress on stderr, and on Ctrl-C pause it, say how to resume it and exit 130.
import { errorMessage } from '../common/errors';
import type { ExperimentManager } from '../experiments';
import type { JobBudget } from '../jobs';
import type { ExperimentProgress } from '../common/contract/experiment-progress';
import type { ExperimentProgressEvent } from '../common/contract/experiments';
import { err, onInterrupt } from './ui';

export interface ExperimentRunOutput<View> {
  /** "sweep", "comparison"; and the command that resumes it, "tatra sweep resume". */
  noun: string;
  resumeCommand: string;
  /** Its progress as it stands in a view, for the line said when Ctrl-C paused it. */
  progressOf(view: View): ExperimentProgress | undefined;
  /** Called with each progress event of this experiment (not when --json). */
  onEvent?(event: ExperimentProgressEvent): void;
  quiet: boolean;
  /** A new budget for its jobs together (a resume may raise it). */
  budget?: JobBudget | undefined;
}

/** Runs (or resumes) an experiment to its end; Ctrl-C pauses it and says how to resume it. */
export async function runExperimentToEnd<View, Summary>(manager: ExperimentManager<unknown, unknown, View, Summary>, id: string, output: ExperimentRunOutput<View>): Promise<View> {
  const off = manager.onProgress((e) => {
    if (!output.quiet && e.id === id) output.onEvent?.(e);
  });
  let interrupted = false;
  const offInterrupt = onInterrupt(() => {
    interrupted = true;
    manager.pause(id).catch((e: unknown) => err(`cannot pause ${output.noun} ${id}: ${errorMessage(e)}`));
  });
  try {
    manager.start(id, output.budget ? { budget: output.budget } : {});
    const end = await manager.wait(id);
    if (stoppedByBudget(end)) err(`paused ${output.noun} ${id}: its next job would have exceeded its budget; continue with: ${output.resumeCommand} ${id} --budget <a larger limit>`);
    if (interrupted) {
      const p = output.progressOf(end);
      err(`paused ${output.noun} ${id}${p ? ` (${p.jobsDone}/${p.jobsTotal} jobs done)` : ''}; continue with: ${output.resumeCommand} ${id}`);
      process.exitCode = 130;
    }
    return end;
  } finally {
    off();
    offInterrupt();
  }
}

function stoppedByBudget(view: unknown): boolean {
  return typeof view === 'object' && view !== null && (view as { stoppedBy?: unknown }).stoppedBy === 'budget';
}
