// Work this process runs, by id: a job (manager.ts) or an experiment (experiments/experiment.ts).
// One lifecycle for both: a run is registered when it starts and forgotten when it ends, beats
// while it runs (its row's `updated`, which other machines sharing the folder read), stops by
// aborting and waiting for its end, and is paused (resumable) when the process shuts down. Work
// this process does not run is stopped only where no one else runs it: done, or run by another
// live process, it is refused in the same words for both.
import { UserError } from '../common/errors';
import { settleAll } from '../common/settle';
import { HEARTBEAT_MS } from './owner';

/** One run in this process: its abort, why it was stopped, and its end. */
export interface Run {
  readonly ac: AbortController;
  stop: 'paused' | 'cancelled' | null;
  done: Promise<void>;
}

export class RunningWork<R extends Run> {
  private readonly runs = new Map<string, R>();

  /** `what`: how a failed dispose names the work ("pausing jobs"). */
  constructor(private readonly what: string) {}

  has(id: string): boolean {
    return this.runs.has(id);
  }

  get(id: string): R | undefined {
    return this.runs.get(id);
  }

  /** Registers `run` and starts `body` on it; the run is forgotten when `body` settles. */
  launch(id: string, run: R, body: (run: R) => Promise<void>): R {
    run.done = body(run).finally(() => this.runs.delete(id));
    this.runs.set(id, run);
    return run;
  }

  /** Forgets a run before its body settles: what its body says last then sees it ended here. */
  ended(id: string): void {
    this.runs.delete(id);
  }

  /**
   * Stops the run of `id` in this process as `to` and waits for its end; `first` runs after the
   * abort and before the wait (an experiment stops its current job). False when none runs here.
   */
  async stop(id: string, to: 'paused' | 'cancelled', first?: (run: R) => Promise<void>): Promise<boolean> {
    const run = this.runs.get(id);
    if (!run) return false;
    run.stop = to;
    run.ac.abort();
    if (first) await first(run);
    await run.done;
    return true;
  }

  /** Stops every run here with `pause` (resumable) and waits for them; every one is tried, failures are thrown together. */
  async dispose(pause: (id: string) => Promise<unknown>): Promise<void> {
    await settleAll([...this.runs.keys()].map((id) => pause(id)), this.what);
  }
}

/**
 * Refuses to stop work this process does not run when it is done or another live process runs it
 * (`<code>`: `job_state`, `sweep_state`, …); otherwise the caller records the stop itself.
 */
export function refuseStopElsewhere(what: string, state: 'done' | 'running elsewhere' | 'stopped', code: string): void {
  if (state === 'done') throw new UserError(`${what} is already done`, code);
  if (state === 'running elsewhere') throw new UserError(`${what} is running in another process`, code);
}

/** Calls `beat` every HEARTBEAT_MS (the timer never keeps the process alive); returns the stop. */
export function beatWhileRunning(beat: () => void): () => void {
  const timer = setInterval(beat, HEARTBEAT_MS);
  timer.unref();
  return () => clearInterval(timer);
}
