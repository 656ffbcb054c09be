// Who runs a job or a sweep: "host:pid" of this process, and whether a recorded owner still runs.
// One definition for the job manager and the sweep manager, which both claim rows.
import { hostname } from 'node:os';
import { pidAlive } from '../processes';

export const OWNER = `${hostname()}:${process.pid}`;

/** How often a runner touches its row's `updated`, so other machines sharing the folder see it live. */
export const HEARTBEAT_MS = 5000;

// Liveness is shared with the temp-folder sweep (electron/processes.ts).
export { pidAlive };

/**
 * Whether a recorded owner ("host:pid", its row last `updated` then) still runs: a live pid on
 * this host; on another machine sharing the data folder, a heartbeat under three beats old.
 * This process itself is not a live owner: asked, it has no runner, so it ended abnormally.
 */
export function ownerLive(owner: string, updated: string): boolean {
  if (owner === OWNER) return false;
  const [host, pidText] = owner.split(':');
  if (host !== hostname()) return Date.now() - Date.parse(updated) < 3 * HEARTBEAT_MS;
  const pid = Number(pidText);
  return Number.isInteger(pid) && pidAlive(pid);
}
