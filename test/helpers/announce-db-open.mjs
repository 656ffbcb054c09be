// Preloaded into a `tatra` process (node --import) by test/model/jobs-claim.test.ts: the process
// writes "opened" to its file descriptor 3 once it has opened its job database (tatra.db), just
// before its first statement on it, so the test waits for that line instead of polling /proc for
// the open file. better-sqlite3's statement methods are wrapped on its prototype (the CLI's ESM
// import gets the same class); what they do is unchanged.
import { writeSync } from 'node:fs';
import { createRequire } from 'node:module';

const Database = createRequire(import.meta.url)('better-sqlite3');
const announced = new WeakSet();

for (const method of ['pragma', 'prepare', 'exec', 'transaction']) {
  const original = Database.prototype[method];
  Database.prototype[method] = function (...args) {
    if (!announced.has(this) && String(this.name).endsWith('tatra.db')) {
      announced.add(this);
      writeSync(3, 'opened\n');
    }
    return original.apply(this, args);
  };
}
