// Small state kept as one JSON file each (the app's settings, the model library, remote models,
// facts about model file versions, calibrations, API keys), one way:
// - read through the file's zod schema; a damaged file is one plain line naming it (UserError),
//   never a silent reset to empty, so nothing the user made is lost by the next write;
// - written atomically by write-file-atomic (a temp file, fsync, rename): a crash leaves the old
//   file or the new one, never half of one;
// - changed by `update(fn)`, a read-modify-write that waits for every other writer of the file,
//   in this process (a queue per path) and in others (proper-lockfile's `<file>.lock`, taken
//   over when its holder died), so two quick changes never lose one another.
import { closeSync, constants, fstatSync, openSync, readFileSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { lock } from 'proper-lockfile';
import writeFileAtomic from 'write-file-atomic';
import type { z } from 'zod';
import { UserError, errorMessage } from '../common/errors';
import { readSmallRegularFile } from '../regular-file';

export interface JsonFileOptions<T> {
  schema: z.ZodType<T>;
  /** The value while the file does not exist. */
  empty: () => T;
  /** The error code of a damaged file (default `state_damaged`). */
  code?: string;
  /** What to add to the damaged line after "fix or delete it" (what deleting it costs). */
  hint?: string;
  /** The file's mode: created with it (0o600 for one that holds keys), never readable by others for a moment. */
  mode?: number;
  /** JSON indentation (default 2). */
  indent?: number;
  /** Largest file read (default 16 MiB): a bigger one is damaged, never read whole into memory. */
  maxBytes?: number;
}

/** A read-modify-write in this process waits for the one before on the same path. */
const queues = new Map<string, Promise<unknown>>();

/** One small JSON state file: `read`, `readSync` and `update`. */
export class JsonFile<T> {
  readonly path: string;

  constructor(
    path: string,
    private readonly options: JsonFileOptions<T>,
  ) {
    this.path = resolve(path);
  }

  /** The file's value (`empty()` when there is none); a damaged or unreadable file throws one line naming it. */
  async read(): Promise<T> {
    let text: string;
    try {
      text = await readSmallRegularFile(this.path, this.options.maxBytes ?? 16 * 1024 * 1024);
    } catch (e) {
      return this.missingOr(e);
    }
    return this.parse(text);
  }

  /** `read` for callers that cannot wait (a request checked against stored keys). */
  readSync(): T {
    let text: string;
    try {
      text = readRegularFileSync(this.path);
    } catch (e) {
      return this.missingOr(e);
    }
    return this.parse(text);
  }

  /**
   * Changes the file: `fn` gets the current value and returns the next, which is checked against
   * the schema and written atomically. Every other writer of the file, in any process, waits.
   * Returns what was written.
   */
  update(fn: (current: T) => T | Promise<T>): Promise<T> {
    const run = () => this.locked(async () => {
      const next = this.options.schema.parse(await fn(await this.read()));
      await writeFileAtomic(this.path, this.text(next), this.options.mode === undefined ? {} : { mode: this.options.mode });
      return next;
    });
    const before = queues.get(this.path) ?? Promise.resolve();
    const mine = before.then(run, run);
    // The queue only orders writers; each caller gets its own outcome from `mine`.
    const settled = mine.then(
      () => undefined,
      () => undefined,
    );
    queues.set(this.path, settled);
    void settled.then(() => {
      if (queues.get(this.path) === settled) queues.delete(this.path);
    });
    return mine;
  }

  /** Replaces the file's value. */
  write(value: T): Promise<T> {
    return this.update(() => value);
  }

  private text(value: T): string {
    return `${JSON.stringify(value, null, this.options.indent ?? 2)}\n`;
  }

  private async locked<R>(work: () => Promise<R>): Promise<R> {
    await mkdir(dirname(this.path), { recursive: true });
    let lost: Error | null = null;
    const release = await lock(this.path, {
      realpath: false,
      // Waits as long as the holder lives: a live holder refreshes its lock, a dead one's goes
      // stale and is taken over.
      retries: { forever: true, minTimeout: 10, maxTimeout: 200, randomize: true },
      onCompromised: (e) => {
        lost = e;
      },
    });
    try {
      const result = await work();
      if (lost) throw new Error(`the lock on ${this.path} was lost while it was written (${errorMessage(lost)})`);
      return result;
    } finally {
      if (!lost) await release();
    }
  }

  private missingOr(e: unknown): T {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return this.options.empty();
    throw this.damaged(`cannot be read: ${firstLine(errorMessage(e))}`, 'state_unreadable');
  }

  private parse(text: string): T {
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch (e) {
      throw this.damaged(`is not valid JSON (${firstLine(errorMessage(e))})`);
    }
    const parsed = this.options.schema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue && issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
      throw this.damaged(`is damaged (${where}${firstLine(issue?.message ?? 'not what was expected')})`);
    }
    return parsed.data;
  }

  private damaged(what: string, code = this.options.code ?? 'state_damaged'): UserError {
    const hint = this.options.hint ? ` ${this.options.hint}` : '';
    return new UserError(`${this.path} ${what}; fix or delete it${hint}`, code);
  }
}

/** The text of a regular file, refusing a FIFO or a device without blocking on it (regular-file.ts, synchronously). */
function readRegularFileSync(path: string): string {
  const fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  try {
    if (!fstatSync(fd).isFile()) throw new Error(`${path} is not a regular file`);
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
}

function firstLine(s: string): string {
  return s.split('\n')[0]!.trim();
}
