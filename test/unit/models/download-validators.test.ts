// A resumed download continues the very file its partial holds, or starts over from zero: one rule
// (download.ts continuesPartial) for every way a server can change the file between two attempts.
// The first attempt is cut mid-body; the file (and its validators) then change or not; the second
// attempt must end with exactly the server's current file, never a splice of two versions.
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, expect, it } from 'vitest';
import { downloadModel } from '../../../electron/models';
import { tinyFullModelPath } from '../../helpers/models';
import { serveBuffer, type TestServer } from './http-fixture';

let v1: Buffer;
/** Same size as v1, different bytes in its second half (what a splice would keep from v1 or v2). */
let v2SameSize: Buffer;
/**
 * Another valid GGUF of another size that differs from v1 before the cut (its name, at the start
 * of the header: a splice of v1's partial and its rest would show) and after it (64 KB more at the
 * end, which the header check allows): v1's bytes otherwise, so each such case moves 16 MB rather
 * than the 37 MB of a second model.
 */
let v2OtherSize: Buffer;
let dir: string | undefined;
let server: TestServer | undefined;

beforeAll(async () => {
  v1 = await readFile(await tinyFullModelPath());
  v2SameSize = Buffer.from(v1);
  for (let i = v1.length - 4096; i < v1.length; i++) v2SameSize[i] = v2SameSize[i]! ^ 0x5a;
  const name = v1.indexOf('TATRA synthetic tiny');
  expect(name).toBeGreaterThan(0);
  expect(name).toBeLessThan(3_000_000);
  v2OtherSize = Buffer.concat([v1, Buffer.alloc(64 * 1024, 0x33)]);
  v2OtherSize[name + 'TATRA synthetic tin'.length] = 'Y'.charCodeAt(0);
});
afterEach(async () => {
  await server?.close();
  server = undefined;
  if (dir) await rm(dir, { recursive: true, force: true });
});

interface Validators {
  etag: string | null;
  lastModified: string | null;
}

/** What the server does between the cut and the resume. */
interface Case {
  name: string;
  before: Validators;
  after: Validators;
  /** The file the server holds after the cut. */
  changed: 'same' | 'same-size' | 'other-size';
  honourIfRange?: boolean;
  ignoreRange?: boolean;
  /** Whether the second attempt may append to the partial (only when nothing changed). */
  resumes: boolean;
}

const D1 = 'Mon, 02 Nov 2026 10:00:00 GMT';
const D2 = 'Mon, 23 Nov 2026 10:00:00 GMT';
const cases: Case[] = [];
const validatorPairs: Array<[string, Validators, Validators, boolean]> = [
  ['strong ETag changed', { etag: '"a1"', lastModified: null }, { etag: '"b2"', lastModified: null }, false],
  ['strong ETag changed, same date', { etag: '"a1"', lastModified: D1 }, { etag: '"b2"', lastModified: D1 }, false],
  ['weak ETag changed', { etag: 'W/"a1"', lastModified: null }, { etag: 'W/"b2"', lastModified: null }, false],
  ['strong ETag became weak with another tag', { etag: '"a1"', lastModified: null }, { etag: 'W/"b2"', lastModified: null }, false],
  ['ETag no longer sent', { etag: '"a1"', lastModified: null }, { etag: null, lastModified: null }, false],
  ['date changed, no ETag', { etag: null, lastModified: D1 }, { etag: null, lastModified: D2 }, false],
  ['date no longer sent', { etag: null, lastModified: D1 }, { etag: null, lastModified: null }, false],
  ['same ETag and date (the file did not change)', { etag: '"a1"', lastModified: D1 }, { etag: '"a1"', lastModified: D1 }, true],
  ['same ETag', { etag: '"a1"', lastModified: null }, { etag: '"a1"', lastModified: null }, true],
];
for (const [name, before, after, unchanged] of validatorPairs) {
  for (const honourIfRange of [false, true]) {
    if (unchanged) cases.push({ name: `${name}; If-Range ${honourIfRange ? 'honoured' : 'ignored'}`, before, after, changed: 'same', honourIfRange, resumes: true });
    else {
      cases.push({ name: `${name}, same size; If-Range ${honourIfRange ? 'honoured' : 'ignored'}`, before, after, changed: 'same-size', honourIfRange, resumes: false });
      cases.push({ name: `${name}, other size; If-Range ${honourIfRange ? 'honoured' : 'ignored'}`, before, after, changed: 'other-size', honourIfRange, resumes: false });
    }
  }
}
// A 200 to a range request: the file is written from zero whatever the validators say.
cases.push({ name: 'Range ignored (200), file unchanged', before: { etag: '"a1"', lastModified: D1 }, after: { etag: '"a1"', lastModified: D1 }, changed: 'same', ignoreRange: true, resumes: false });
cases.push({ name: 'Range ignored (200), file changed', before: { etag: '"a1"', lastModified: D1 }, after: { etag: '"b2"', lastModified: D2 }, changed: 'same-size', ignoreRange: true, resumes: false });
cases.push({ name: 'Range ignored (200), no validators at all', before: { etag: null, lastModified: null }, after: { etag: null, lastModified: null }, changed: 'other-size', ignoreRange: true, resumes: false });

it.each(cases.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
  dir = await mkdtemp(join(tmpdir(), 'tatra-dl-validators-'));
  const files: Record<string, Buffer> = { '/m.gguf': v1 };
  let now = c.before;
  server = await serveBuffer(files, { etag: () => now.etag, lastModified: now.lastModified === null && c.after.lastModified === null ? undefined : () => now.lastModified ?? '', cutAfter: 3_000_000, honourIfRange: c.honourIfRange ?? false });
  await expect(downloadModel(server.url('/m.gguf'), { dir, retries: 0 })).rejects.toThrow(/interrupted/);
  const current = c.changed === 'same' ? v1 : c.changed === 'same-size' ? v2SameSize : v2OtherSize;
  files['/m.gguf'] = current;
  now = c.after;
  if (c.ignoreRange) {
    await server.close();
    server = await serveBuffer(files, { etag: () => now.etag, ignoreRange: true });
  }
  const done = await downloadModel(server.url('/m.gguf'), { dir, retries: 0 });
  // Exactly the server's current file, never a mix.
  expect((await readFile(join(dir, 'm.gguf'))).equals(current)).toBe(true);
  expect(done.bytes).toBe(current.length);
  expect(await readdir(dir)).toEqual(['m.gguf']);
  const resumed = server.requests.filter((r) => r.range !== undefined && r.status === 206).length > 0;
  const lastWhole = server.requests.at(-1)!;
  if (c.resumes) {
    expect(lastWhole.status).toBe(206);
    expect(done.resumedFrom).toBeGreaterThan(0);
  } else {
    // Whatever the server answered to the resume, the bytes that count came from one 200 from zero.
    expect(lastWhole.status).toBe(200);
    if (!c.ignoreRange && !c.honourIfRange) expect(resumed).toBe(true);
  }
});
