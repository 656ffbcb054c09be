// A page that stops waiting for an answer (the app's plan beside Start, asked again as the settings
// change) aborts its fetch; `tatra serve` hands that to the host as the call's signal, and the
// plan stops instead of walking every row of the file for nobody (api/deps.ts CallContext). On a
// real server over a real ApiHost and a real data file; the host is wrapped only to see the call
// arrive and to hold it until the page has gone, so nothing here depends on who is faster.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiHost, type ApiHost, type InvokeResult } from '../../../electron/api/host';
import { startServer, type RunningServer } from '../../../electron/server/server';

let dir: string;
let host: ApiHost;
let server: RunningServer;
/** Each call as it reaches the host: its signal, and the host's answer once it is given. */
const arrivals: { signal: AbortSignal | undefined; answer: Promise<InvokeResult> }[] = [];
let arrived: (() => void) | null = null;
let hold = false;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tatra-dropped-'));
  const rows = Array.from({ length: 500 }, (_, i) => `"a film, take ${i}, that was ${i % 2 ? 'good' : 'dull'}"`);
  writeFileSync(join(dir, 'reviews.csv'), `text\n${rows.join('\n')}\n`);
  host = await createApiHost({ dataDir: join(dir, 'data'), threads: 1, mode: 'test' });
  const seen: ApiHost = {
    ...host,
    invoke(method, input, options) {
      const signal = options?.signal;
      // Held until the page has gone: the host then sees a call nobody waits for.
      const answer = (hold && signal ? new Promise<void>((gone) => signal.addEventListener('abort', () => gone(), { once: true })) : Promise.resolve()).then(() => host.invoke(method, input, options));
      arrivals.push({ signal, answer });
      arrived?.();
      return answer;
    },
  };
  server = await startServer({ host: seen, port: 0, staticDir: dir, log: () => undefined });
});

afterAll(async () => {
  await server.close();
  await host.dispose();
  rmSync(dir, { recursive: true, force: true });
});

const planInput = () => ({ settings: { n: 2, k: 4, r: 3, seed: 1, scope: 'run' }, taskId: 'sst2', generator: 'openai+http://127.0.0.1:9/v1#m', evaluator: 'openai+http://127.0.0.1:9/v1#m', dataPath: join(dir, 'reviews.csv'), inputColumn: 'text' });

function ask(signal?: AbortSignal): Promise<Response> {
  return fetch(`${server.origin}/api/invoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-tatra-token': server.token, Origin: server.origin },
    body: JSON.stringify({ method: 'plans.job', input: planInput() }),
    ...(signal ? { signal } : {}),
  });
}

describe('a call the page stops waiting for', () => {
  it('is planned in full while the page waits', async () => {
    hold = false;
    const res = await ask();
    const reply = (await res.json()) as InvokeResult;
    expect(reply).toMatchObject({ ok: true, value: { rows: 500 } });
  });

  it('stops when the page aborts its fetch: the host answers "cancelled", not the plan', async () => {
    hold = true;
    const page = new AbortController();
    const reached = new Promise<void>((wake) => (arrived = wake));
    const asked = ask(page.signal).catch((e: unknown) => e);
    await reached;
    const call = arrivals.at(-1)!;
    expect(call.signal?.aborted).toBe(false);
    page.abort();
    expect(await asked).toMatchObject({ name: 'AbortError' });
    expect(await call.answer).toEqual({ ok: false, error: { code: 'cancelled', message: 'cancelled' } });
    // The server goes on answering.
    hold = false;
    expect(((await (await ask()).json()) as InvokeResult).ok).toBe(true);
  });
});
