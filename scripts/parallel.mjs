// Runs npm scripts side by side, for `npm test`.
//
// `node scripts/parallel.mjs typecheck lint build`: the typecheck and the lint each keep one core
// busy for a minute or more, and neither needs the other or the build. Each script's output is
// held and printed whole when it ends, so their lines do not interleave. The test steps after them
// each keep both cores busy, so they run one after the other (docs/architecture.md §9).
//
// The exit is 1 if any failed, naming each that did, after all have ended.
import { spawn } from 'node:child_process';

const scripts = process.argv.slice(2);
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

const results = await Promise.all(
  scripts.map(
    (name) =>
      new Promise((resolve) => {
        const started = Date.now();
        const child = spawn(npm, ['run', name], { stdio: ['ignore', 'pipe', 'pipe'], shell: process.platform === 'win32' });
        const chunks = [];
        const take = (d) => chunks.push(d);
        child.stdout.on('data', take);
        child.stderr.on('data', take);
        child.on('error', (e) => take(Buffer.from(`${e.message}\n`)));
        child.on('close', (code, signal) => {
          const seconds = ((Date.now() - started) / 1000).toFixed(1);
          process.stdout.write(`\n> npm run ${name} (${seconds} s)\n${Buffer.concat(chunks).toString('utf8')}`);
          resolve({ name, ok: code === 0, why: signal ?? `exit ${code}` });
        });
      }),
  ),
);

const failed = results.filter((r) => !r.ok);
for (const f of failed) process.stderr.write(`npm run ${f.name} failed (${f.why})\n`);
process.exit(failed.length > 0 ? 1 : 0);
