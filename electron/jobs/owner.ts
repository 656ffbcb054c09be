// Who runs a job or a sweep: "host:pid" of this process, and whether a recorded pid on this host
// still lives. One definition for the job manager and the sweep manager, which both claim rows.
import { hostname } from 'node:os';

export const OWNER = `${hostname()}:${process.pid}`;

/** Whether a process with this pid runs here (EPERM: it runs, as another user). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}
