// The built faces that CLI, model and end-to-end tests spawn or serve (dist/), built by the global
// set-ups when missing or older than their sources. A build that is current is left alone: a test
// run started beside another (`npm test` runs the model tests beside the unit and e2e tests) never
// rewrites files the other is reading, and a developer's edit is never tested through a stale CLI.
import { execFile } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

interface Build {
  /** What it builds, for messages. */
  what: string;
  /** The file it writes last. */
  output: string;
  /** Files and folders whose changes it is built from. */
  sources: string[];
  command: string[];
}

const builds = {
  node: { what: 'the CLI', output: 'dist/cli.js', sources: ['electron', 'scripts/build-node.mjs', 'package-lock.json'], command: [process.execPath, 'scripts/build-node.mjs'] },
  renderer: {
    what: 'the renderer',
    output: 'dist/renderer/index.html',
    sources: ['renderer', 'electron/common', 'vite.config.ts', 'package-lock.json'],
    command: [process.execPath, 'node_modules/vite/bin/vite.js', 'build', '--logLevel', 'warn'],
  },
} satisfies Record<string, Build>;

/** The newest modification time under `path` (a file or a folder, recursively); 0 when missing. */
function newest(path: string): number {
  let stats;
  try {
    stats = statSync(path);
  } catch {
    return 0;
  }
  if (!stats.isDirectory()) return stats.mtimeMs;
  let latest = stats.mtimeMs;
  for (const entry of readdirSync(path, { recursive: true, encoding: 'utf8' })) latest = Math.max(latest, statSync(join(path, entry)).mtimeMs);
  return latest;
}

/** Whether `kind`'s output is missing or older than one of its sources. */
export function isStale(kind: keyof typeof builds): boolean {
  const b = builds[kind];
  const built = newest(join(repoRoot, b.output));
  return built === 0 || b.sources.some((s) => newest(join(repoRoot, s)) > built);
}

const building = new Map<keyof typeof builds, Promise<void>>();

/** Builds `kind` when stale, once however many set-ups of this process ask; rejects with the build's own output when it fails. */
export function ensureBuilt(kind: keyof typeof builds): Promise<void> {
  let pending = building.get(kind);
  if (!pending) building.set(kind, (pending = build(kind)));
  return pending;
}

async function build(kind: keyof typeof builds): Promise<void> {
  if (!isStale(kind)) return;
  const b = builds[kind];
  const [command, ...args] = b.command as [string, ...string[]];
  try {
    await promisify(execFile)(command, args, { cwd: repoRoot, maxBuffer: 16 * 1024 * 1024 });
  } catch (e) {
    const err = e as { stderr?: string; stdout?: string; message?: string };
    throw new Error(`building ${b.what} failed (${b.command.slice(1).join(' ')}):\n${(err.stderr || err.stdout || err.message || String(e)).slice(-4000)}`);
  }
}
