// The first load of a model file happens in a child process. llama.cpp checks a model's
// hyperparameters and vocabulary with assertions that abort the whole process (a head count of 0,
// 1,000 layers, a tokenizer it does not know, an empty vocabulary: GGML_ASSERT, "fatal error"),
// and no header reader can know every architecture's rules. So before a file is loaded in this
// process for the first time, a child loads it and decodes one token; a crash there costs a
// child, and the user gets one line with llama.cpp's reason. The verdict is kept per file
// version (device, inode, size, modification and change times: any write to the file changes
// them), in memory and in the user's cache folder, so a model is tried once, not on every run.
import { spawn } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { onAbort } from '../common/abort';
import { environmentCause } from '../common/env-errors';
import { UserError } from '../common/errors';
import { userCacheDir } from '../paths';
import { z } from 'zod';
import { FileVersionCache, fileVersionKey } from './file-versions';

/**
 * The child's script: load, one token, exit 0; llama.cpp's errors on stderr. Written to a file
 * (not `node -e`: node-llama-cpp tests its binary in a child of its own, which inherits
 * `--input-type` and fails).
 */
const CHILD = `
// Ctrl-C in a terminal reaches the whole process group: the parent decides (it kills this child
// when its load is cancelled), so a Ctrl-C is never taken for a crash of the model.
process.on('SIGINT', () => {});
// A parent that is gone (killed, a second Ctrl-C) closes this pipe: nobody waits for the verdict.
process.stdin.on('close', () => process.exit(2));
process.stdin.resume();
const [entry, modelPath] = process.argv.slice(2);
try {
  const { getLlama, LlamaLogLevel } = await import(entry);
  const options = { build: 'never', logLevel: LlamaLogLevel.error, maxThreads: 1, logger: (level, message) => process.stderr.write(message.trimEnd() + '\\n') };
  // The CPU binary where there is one; an install with only a GPU build of its own (a CUDA
  // addon compiled on a GPU server, docs/gpu.md) has none, and loads with no layers offloaded.
  const llama = await getLlama({ ...options, gpu: false }).catch((e) => {
    if (e?.constructor?.name !== 'NoBinaryFoundError') throw e;
    return getLlama({ ...options, gpu: 'auto' });
  });
  const model = await llama.loadModel({ modelPath, gpuLayers: 0 });
  const context = await model.createContext({ contextSize: 64, threads: 1, sequences: 1 });
  const tokens = model.tokenize('Once upon a time');
  const first = tokens.length > 0 ? tokens : [0];
  for await (const _ of context.getSequence().evaluate(first)) break;
} catch (e) {
  // llama.cpp's log lines arrive asynchronously: let them out before the error's own line.
  await new Promise((res) => setTimeout(res, 200));
  process.stderr.write('failed: ' + String(e && e.message ? e.message : e).split('\\n')[0] + '\\n');
  process.exit(1);
}
process.stdout.write('loaded\\n');
process.exit(0);
`;

/** Versions of model files a child has loaded: each file version is tried once. */
const vouched = new FileVersionCache('vouched-models.json', z.literal(true));

/**
 * The child's script in the cache folder, named by its content (so an older one is never run).
 * Looked for at each trial (a trial starts a process; a look is nothing beside it), so a cache
 * folder emptied while the app runs, or another one set, gets the script written again.
 */
async function writeChildScript(): Promise<string> {
  const name = `trial-load-${createHash('sha256').update(CHILD).digest('hex').slice(0, 12)}.mjs`;
  const write = async (dir: string) => {
    const file = join(dir, name);
    if (!existsSync(file)) {
      await mkdir(dir, { recursive: true });
      // Two trials at once each write their own copy and rename it over: the same bytes either way.
      const tmp = `${file}.${process.pid}.${randomUUID()}.tmp`;
      await writeFile(tmp, CHILD);
      await rename(tmp, file);
    }
    return file;
  };
  // A read-only, full or unwritable home still gets its trial, from the temp folder; any other
  // failure is no reason to try elsewhere.
  return write(userCacheDir()).catch((e: unknown) => {
    if (environmentCause(e) === null) throw e;
    return write(join(tmpdir(), 'tatra-studio'));
  });
}

/** node-llama-cpp's entry, as a file URL the child can import. */
function nodeLlamaCppEntry(): string {
  const roots = [dirname(fileURLToPath(import.meta.url)), process.cwd()];
  for (const start of roots) {
    for (let dir = start; ; dir = dirname(dir)) {
      const entry = join(dir, 'node_modules', 'node-llama-cpp', 'dist', 'index.js');
      if (existsSync(entry)) return pathToFileURL(entry).href;
      if (dirname(dir) === dir) break;
    }
  }
  throw new Error('node-llama-cpp is not installed next to TATRA Studio');
}

/** Why the child failed, from llama.cpp's last meaningful line (Node's stack lines and version skipped). */
function reasonFrom(stderr: string): string | null {
  const lines = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !/^at\s/.test(l) && !/^Node\.js v\d/.test(l) && !/^\^+$/.test(l));
  const explicit = lines.map((l) => /error loading model:\s*(.+)$/i.exec(l)?.[1]).find((r) => r !== undefined);
  const assertion = lines.map((l) => /(GGML_ASSERT\(.*\) failed|fatal error.*|unsupported types.*)$/.exec(l)?.[1]).find((r) => r !== undefined);
  const failed = lines.map((l) => /^(?:failed: |\w*Error: )(.+)$/.exec(l)?.[1]).find((r) => r !== undefined);
  const last = explicit ?? assertion ?? failed ?? lines.at(-1);
  if (!last) return null;
  const reason = last.replace(/^(\S+\.(cpp|c|h):\d+:\s*)/, '').replace(/^(\w+(::\w+)*:\s*)+/, '').replace(/\s+/g, ' ');
  return reason.length > 200 ? `${reason.slice(0, 199)}…` : reason;
}

/**
 * Resolves once `path` (already validated by inspectGguf) is known to load in llama.cpp without
 * taking the process down: from memory or the cache folder, else by loading it in a child.
 * Rejects with one UserError when llama.cpp refuses it, crashes on it or does not finish; with
 * the signal's reason when `signal` aborts.
 */
export async function vouchForModel(path: string, opts: { signal?: AbortSignal; timeoutMs?: number } = {}): Promise<void> {
  const key = await fileVersionKey(path);
  if ((await vouched.get(key)) === true) return;
  opts.signal?.throwIfAborted();
  const child = spawn(process.execPath, [await writeChildScript(), nodeLlamaCppEntry(), path], {
    stdio: ['pipe', 'pipe', 'pipe'],
    // Under Electron, process.execPath is the app: run it as Node.
    env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
  });
  // Left open: the child ends itself when it closes (this process gone).
  child.stdin.on('error', () => undefined);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-16_000)));
  const forget = opts.signal ? onAbort(opts.signal, () => child.kill('SIGKILL')) : undefined;
  // Only a hang is caught here: a big model on a slow disk may take minutes to map.
  const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 15 * 60_000);
  let timedOut = false;
  timer.unref();
  const end = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) =>
    child.on('close', (code, signal) => {
      if (signal === 'SIGKILL' && !opts.signal?.aborted) timedOut = true;
      res({ code, signal });
    }),
  );
  clearTimeout(timer);
  forget?.();
  opts.signal?.throwIfAborted();
  if (end.code === 0 && stdout.includes('loaded')) return vouched.set(key, true);
  const reason = timedOut ? 'it did not finish loading' : (reasonFrom(stderr) ?? (end.signal ? `it crashed (${end.signal})` : 'it failed to load'));
  const how = end.signal && !timedOut ? 'llama.cpp crashes on it' : 'llama.cpp refused it';
  throw new UserError(`cannot load ${path}: ${how} (${reason})`, 'gguf_invalid');
}
