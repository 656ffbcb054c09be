// Runs npm scripts side by side, for `npm test`.
//
// `node scripts/parallel.mjs typecheck lint build`: the typecheck and the lint each keep one core
// busy for a minute or more, and neither needs the other or the build. Each script's output is
// held and printed whole when it ends, so their lines do not interleave.
//
// `node scripts/parallel.mjs --stream test:model e2e`: runs that last many minutes, whose output
// a person watches as it comes. Each line is printed when it is complete, behind its script's name.
// The model tests and the browser tests run together because neither keeps two cores busy alone:
// the model tests decode on one thread and the browser tests wait on pages (docs/architecture.md
// §9). The unit tests, which do keep both busy, run before them.
//
// The exit is 1 if any failed, naming each that did, after all have ended.
import { spawn } from 'node:child_process';

const args = process.argv.slice(2);
const stream = args[0] === '--stream';
const scripts = stream ? args.slice(1) : args;
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const width = Math.max(...scripts.map((s) => s.length));

/** Writes each complete line of a stream behind `[name]`; the rest waits for its line's end. */
function lineWriter(name) {
  let pending = '';
  const tag = `[${name.padEnd(width)}] `;
  return {
    write(chunk) {
      pending += chunk.toString('utf8');
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      if (lines.length > 0) process.stdout.write(lines.map((l) => tag + l + '\n').join(''));
    },
    end() {
      if (pending) process.stdout.write(tag + pending + '\n');
      pending = '';
    },
  };
}

const results = await Promise.all(
  scripts.map(
    (name) =>
      new Promise((resolve) => {
        const started = Date.now();
        const child = spawn(npm, ['run', name], { stdio: ['ignore', 'pipe', 'pipe'], shell: process.platform === 'win32' });
        const chunks = [];
        const lines = stream ? lineWriter(name) : null;
        const take = (d) => (lines ? lines.write(d) : chunks.push(d));
        child.stdout.on('data', take);
        child.stderr.on('data', take);
        child.on('error', (e) => take(Buffer.from(`${e.message}\n`)));
        child.on('close', (code, signal) => {
          const seconds = ((Date.now() - started) / 1000).toFixed(1);
          if (lines) {
            lines.end();
            process.stdout.write(`\n> npm run ${name} ended in ${seconds} s (${signal ?? `exit ${code}`})\n`);
          } else {
            process.stdout.write(`\n> npm run ${name} (${seconds} s)\n${Buffer.concat(chunks).toString('utf8')}`);
          }
          resolve({ name, ok: code === 0, why: signal ?? `exit ${code}` });
        });
      }),
  ),
);

const failed = results.filter((r) => !r.ok);
for (const f of failed) process.stderr.write(`npm run ${f.name} failed (${f.why})\n`);
process.exit(failed.length > 0 ? 1 : 0);
