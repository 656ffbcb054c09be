// Runs npm scripts side by side (`node scripts/parallel.mjs typecheck lint build`), for `npm test`:
// the typecheck and the lint each keep one core busy for a minute or more, and neither needs the
// other or the build. Each script's output is held and printed whole when it ends, so their lines
// do not interleave; the exit is 1 if any failed, naming each that did.
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
        child.stdout.on('data', (d) => chunks.push(d));
        child.stderr.on('data', (d) => chunks.push(d));
        child.on('error', (e) => chunks.push(Buffer.from(`${e.message}\n`)));
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
