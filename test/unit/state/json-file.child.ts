// One of several processes changing the same state file at once (json-file.test.ts): appends
// `<tag>-<i>` for i < count, each in its own update.
import { z } from 'zod';
import { JsonFile } from '../../../electron/state/json-file';

const [path, tag, count] = process.argv.slice(2) as [string, string, string];
const file = new JsonFile(path, { schema: z.object({ entries: z.array(z.string()) }), empty: () => ({ entries: [] }) });
// All updates of this process at once: the per-path queue orders them here, the lock across processes.
await Promise.all(Array.from({ length: Number(count) }, (_, i) => file.update((v) => ({ entries: [...v.entries, `${tag}-${i}`] }))));
