// OpenAI-compatible servers of known accuracy, for races (docs/method.md §16, racing): a judge
// writes polite examples and paraphrases and labels row i (read from "review i" in the text, the
// same for the original and its paraphrases) right on a fixed share of the rows. A judge can hold
// its answers from its n-th chat call until released, so a test can act (kill the client, look at
// the database) at a known point of a run, on the event of that call arriving.
import { writeFileSync } from 'node:fs';
import { politeScript } from './scripted-backend';
import { chatCompletion, fakeServer, json, type FakeServer, type RecordedRequest } from '../unit/remote/fake-server';

/** Row i's gold label: positive and negative in turn. */
export const raceGold = (i: number): string => (i % 2 === 0 ? 'positive' : 'negative');

/** Right on a share `accuracy` of the rows, which ones fixed by the row's number (a low-discrepancy sequence). */
export const rightOn = (i: number, accuracy: number): boolean => (i * 0.6180339887) % 1 < accuracy;

/** A CSV of `rows` reviews (text, label), row i reading "review i: …". */
export function writeRaceCsv(path: string, rows: number): void {
  writeFileSync(path, `text,label\n${Array.from({ length: rows }, (_, i) => `"review ${i}: ${i % 2 === 0 ? 'a warm and funny film' : 'dull and far too long'}",${raceGold(i)}`).join('\n')}\n`);
}

export interface Judge extends FakeServer {
  /** `openai+<origin>/v1#<id>`: the model spec that reaches it. */
  spec: string;
  /** Chat calls answered or held so far. */
  calls(): number;
  /** Holds the n-th chat call (1-based) and every later one; resolves when the n-th arrives. */
  holdFrom(n: number): Promise<void>;
  /** Answers the held calls and every later one. */
  release(): void;
}

/** A judge served as model `id`, right on a share `accuracy` of the rows. */
export async function judgeServer(id: string, accuracy: number): Promise<Judge> {
  const script = politeScript({
    answer: (candidate) => {
      const i = Number(/review (\d+)/.exec(candidate)?.[1] ?? 0);
      const right = raceGold(i);
      return rightOn(i, accuracy) ? right : right === 'positive' ? 'negative' : 'positive';
    },
  });
  let calls = 0;
  let hold: { from: number; arrived: () => void; released: Promise<void>; release: () => void } | null = null;
  const server = await fakeServer({
    'GET /v1/models': { object: 'list', data: [{ id, object: 'model' }] },
    'POST /v1/chat/completions': async (req: RecordedRequest, res: Parameters<typeof json>[0]) => {
      const call = ++calls;
      if (hold && call >= hold.from) {
        if (call === hold.from) hold.arrived();
        await hold.released;
      }
      const body = req.body as { messages: { role: string; content: string }[]; temperature: number; seed?: number };
      const system = body.messages.find((m) => m.role === 'system')?.content ?? '';
      const user = body.messages.find((m) => m.role === 'user')?.content ?? '';
      const request = { prompt: { system, user }, maxTokens: 1, temperature: body.temperature, ...(body.seed !== undefined ? { seed: body.seed } : {}) };
      const out = await script(request, { index: 0, batch: 0, stage: 'evaluation' });
      json(res, 200, chatCompletion(typeof out === 'string' ? out : out.text, id));
    },
  });
  return Object.assign(server, {
    spec: `openai+${server.origin}/v1#${id}`,
    calls: () => calls,
    holdFrom(from: number): Promise<void> {
      return new Promise<void>((arrived) => {
        let release!: () => void;
        const released = new Promise<void>((r) => (release = r));
        hold = { from, arrived, released, release };
      });
    },
    release(): void {
      hold?.release();
      hold = null;
    },
  });
}
