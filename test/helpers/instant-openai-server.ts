// An OpenAI-compatible server that answers at once (or after a fixed latency), for
// bench/remote-throughput.ts and the remote resume test (started through instant-server.ts). It
// runs in its own process, so its CPU is not the client's, and
// answers what the engine accepts: label-balanced examples in the requested format, n distinct
// paraphrase lines, and a label (vLLM's `structured_outputs.choice`, or free text naming one of
// the labels the system turn lists). It keeps count of the calls it answered, when the first and
// last arrived, and the most requests it held open at once.
//
//   node --import tsx test/helpers/instant-openai-server.ts [--kind vllm|openai-compatible]
//        [--latency MS] [--capacity N]
//
// Prints `listening PORT` on stdout once it listens on 127.0.0.1. Capacity N: at most N requests
// are being answered at a time (each for --latency ms); more wait in arrival order, as a batching
// server's queue does. 0: no limit. POST /bench/hold stops answering (requests wait, counted in
// `held`) until POST /bench/release; /bench/hold?after=N does so once N more calls have arrived,
// /bench/release?then=N holds again once N more have arrived after it;
// GET /bench/held?atLeast=N answers once N requests are held (a wait on the event, not a poll);
// POST /bench/reset zeroes the counts.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    kind: { type: 'string', default: 'vllm' },
    latency: { type: 'string', default: '0' },
    capacity: { type: 'string', default: '0' },
  },
});
const KIND = values.kind as 'vllm' | 'openai-compatible';
const LATENCY_MS = Number(values.latency);
const CAPACITY = Number(values.capacity);

interface Stats {
  /** Generation calls answered (chat completions). */
  calls: number;
  /** Arrival of the first and the answer of the last generation call since the reset (ms, performance.now()). */
  firstMs: number | null;
  lastMs: number | null;
  /** Most requests open at once (arrived, not yet answered, queued ones included; any path). */
  maxOpen: number;
  /**
   * The candidate of every evaluation call that is not one of this server's paraphrases: each
   * row's original input, once per run (the resume check counts them).
   */
  evaluatedOriginals: string[];
  byStage: Record<'examples' | 'paraphrases' | 'evaluation' | 'other', number>;
}

/** How this server's paraphrases begin: evaluations of them are told from the originals' by it. */
const PARAPHRASE_MARK = 'Put another way ';

let open = 0;
let active = 0;
const queue: (() => void)[] = [];
/** Answers held while /bench/hold is on, or once `holdAfter` generation calls have arrived. */
let holding = false;
let holdAfter: number | null = null;
let arrived = 0;
const held: (() => void)[] = [];
/** GET /bench/held?atLeast=N requests, answered once that many are held. */
let heldWaiters: { atLeast: number; answer: () => void }[] = [];

function wakeHeldWaiters(): void {
  heldWaiters = heldWaiters.filter((w) => {
    if (held.length < w.atLeast) return true;
    w.answer();
    return false;
  });
}
let stats: Stats = fresh();

function fresh(): Stats {
  return { calls: 0, firstMs: null, lastMs: null, maxOpen: 0, evaluatedOriginals: [], byStage: { examples: 0, paraphrases: 0, evaluation: 0, other: 0 } };
}

/** FNV-1a of a string: a cheap, stable choice among labels. */
function hash(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** Printable ASCII only, as the engine's grammars allow. */
function ascii(text: string): string {
  return text.replace(/[^ -~]/g, '?').replace(/"/g, "'");
}

interface ChatBody {
  messages?: { role: string; content: string }[];
  max_tokens?: number;
  seed?: number;
  structured_outputs?: { choice?: string[]; grammar?: string };
  guided_choice?: string[];
}

/** An evaluator prompt ends with `<input name>: "<candidate>"\n<answer name>:`. */
function noteCandidate(user: string): void {
  const end = user.lastIndexOf('"\n');
  const start = user.lastIndexOf(': "', end);
  if (end < 0 || start < 0) return;
  const candidate = user.slice(start + 3, end);
  if (!candidate.startsWith(PARAPHRASE_MARK)) stats.evaluatedOriginals.push(candidate);
}

function answerFor(body: ChatBody): { text: string; stage: keyof Stats['byStage'] } {
  const messages = body.messages ?? [];
  const system = messages.find((m) => m.role === 'system')?.content ?? '';
  const user = messages.findLast((m) => m.role === 'user')?.content ?? '';
  const choices = body.structured_outputs?.choice ?? body.guided_choice;
  if (choices && choices.length > 0) {
    noteCandidate(user);
    return { text: choices[hash(user) % choices.length]!, stage: 'evaluation' };
  }
  const examples = /^Write exactly (\d+) /.exec(user);
  const paraphrases = /^Write exactly (\d+) different paraphrases? of /.exec(user);
  if (paraphrases) {
    const n = Number(paraphrases[1]);
    // paraphrasePrompt: three instruction lines, a blank line, "<input name>:", then the input.
    const input = user.split('\n').slice(5).join(' ');
    const clean = ascii(input).trim() || 'nothing';
    const limit = Math.max(40, Math.ceil(input.length * 1.5) + 20);
    const lines = Array.from({ length: n }, (_, i) => `${PARAPHRASE_MARK}${i + 1}, ${clean}`.slice(0, limit));
    return { text: lines.join('\n'), stage: 'paraphrases' };
  }
  if (examples) {
    const count = Number(examples[1]);
    const label = /Every example's label is: (.+)/.exec(user)?.[1]?.trim() ?? 'positive';
    const format = /Example1:\n(.+?): ".*"\n(.+?): /.exec(user);
    const inputName = format?.[1] ?? 'Sentence';
    const answerName = format?.[2] ?? 'Answer';
    const seed = body.seed ?? 0;
    const blocks = Array.from({ length: count }, (_, i) => `Example${i + 1}:\n${inputName}: "A ${label} remark number ${i + 1} from run seed ${seed}."\n${answerName}: ${label}`);
    return { text: blocks.join('\n\n'), stage: 'examples' };
  }
  // Free text (a server without constrained output): name one of the labels the system turn lists.
  const allowed = /Answer with exactly one of: (.+)\. Nothing else\./.exec(system)?.[1]?.split(', ');
  if (allowed && allowed.length > 0) {
    noteCandidate(user);
    return { text: allowed[hash(user) % allowed.length]!, stage: 'evaluation' };
  }
  return { text: 'ok', stage: 'other' };
}

function send(res: ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

function completion(body: ChatBody, raw: string): unknown {
  const { text, stage } = answerFor(body);
  stats.byStage[stage]++;
  const promptTokens = Math.ceil(raw.length / 4);
  const completionTokens = Math.max(1, Math.min(Math.ceil(text.length / 4), (body.max_tokens ?? 1 << 20) - 1));
  return {
    id: 'chatcmpl-bench',
    object: 'chat.completion',
    created: 0,
    model: 'm',
    choices: [{ index: 0, message: { role: 'assistant', content: text }, logprobs: null, finish_reason: 'stop' }],
    usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens },
  };
}

/** Runs `answer` once a capacity slot is free, after the latency; frees the slot after. */
function schedule(answer: () => void): void {
  if (holding) {
    held.push(() => schedule(answer));
    wakeHeldWaiters();
    return;
  }
  const start = () => {
    active++;
    const finish = () => {
      answer();
      active--;
      queue.shift()?.();
    };
    if (LATENCY_MS > 0) setTimeout(finish, LATENCY_MS);
    else finish();
  };
  if (CAPACITY > 0 && active >= CAPACITY) queue.push(start);
  else start();
}

const models = {
  object: 'list',
  data: [{ id: 'm', object: 'model', owned_by: KIND === 'vllm' ? 'vllm' : 'bench', ...(KIND === 'vllm' ? { max_model_len: 32768 } : {}) }],
};

const server = createServer((req: IncomingMessage, res: ServerResponse) => {
  // Open from the request's arrival until its answer is written.
  open++;
  if (open > stats.maxOpen) stats.maxOpen = open;
  res.on('finish', () => open--);
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const path = (req.url ?? '/').split('?')[0];
    const raw = chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks).toString('utf8');
    if (req.method === 'GET' && path === '/v1/models') return send(res, 200, models);
    if (req.method === 'GET' && path === '/version' && KIND === 'vllm') return send(res, 200, { version: '0.12.0' });
    if (req.method === 'GET' && path === '/bench/stats') return send(res, 200, { ...stats, evaluatedOriginals: undefined, held: held.length });
    if (req.method === 'GET' && path === '/bench/held') {
      const atLeast = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('atLeast') ?? 1);
      heldWaiters.push({ atLeast, answer: () => send(res, 200, { held: held.length }) });
      wakeHeldWaiters();
      return;
    }
    if (req.method === 'POST' && path === '/bench/hold') {
      const after = new URL(req.url ?? '/', 'http://x').searchParams.get('after');
      if (after === null) holding = true;
      else {
        holdAfter = Number(after);
        arrived = 0;
      }
      return send(res, 200, { ok: true });
    }
    if (req.method === 'POST' && path === '/bench/release') {
      // ?then=N: hold again once N more calls have arrived after the held ones are answered.
      const then = new URL(req.url ?? '/', 'http://x').searchParams.get('then');
      holding = false;
      holdAfter = then === null ? null : Number(then);
      arrived = 0;
      for (const answer of held.splice(0)) answer();
      return send(res, 200, { ok: true });
    }
    if (req.method === 'GET' && path === '/bench/originals') return send(res, 200, stats.evaluatedOriginals);
    if (req.method === 'POST' && path === '/bench/reset') {
      stats = fresh();
      return send(res, 200, { ok: true });
    }
    if (req.method === 'POST' && path === '/tokenize' && KIND === 'vllm') {
      // vLLM's /tokenize answers a count; four characters a token is close enough here.
      return send(res, 200, { count: Math.ceil(raw.length / 4), max_model_len: 32768, tokens: [] });
    }
    if (req.method === 'POST' && path === '/v1/chat/completions') {
      const now = performance.now();
      stats.firstMs ??= now;
      let body: ChatBody;
      try {
        body = JSON.parse(raw) as ChatBody;
      } catch {
        return send(res, 400, { error: { message: 'body is not JSON' } });
      }
      // Read (and counted by stage, its candidate noted) on arrival; answered when its turn comes.
      const reply = completion(body, raw);
      if (holdAfter !== null && ++arrived > holdAfter) holding = true;
      schedule(() => {
        stats.calls++;
        stats.lastMs = performance.now();
        send(res, 200, reply);
      });
      return;
    }
    send(res, 404, { error: { message: `no route ${path}` } });
  });
});
// A client with hundreds of connections open: no per-socket limit, keep them alive.
server.keepAliveTimeout = 60_000;
server.maxRequestsPerSocket = 0;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
