// A scripted HTTP server for the remote backend's unit tests: routes answer with fixed JSON (the
// documented answers of vLLM, Ollama, OpenAI and LM Studio, which cannot run here), or a handler;
// every request is recorded with its parsed body, so a test can pin what the backend sent.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach } from 'vitest';

export interface RecordedRequest {
  method: string;
  path: string;
  body: unknown;
  authorization: string | undefined;
}

export type Route = unknown | ((req: RecordedRequest, res: ServerResponse) => void | Promise<void>);

export interface FakeServer {
  /** http://127.0.0.1:PORT */
  origin: string;
  requests: RecordedRequest[];
  routes: Record<string, Route>;
  close(): Promise<void>;
  server: Server;
}

/** Routes are keyed "METHOD /path"; an unrouted path answers 404 with a JSON error. */
export async function fakeServer(routes: Record<string, Route>): Promise<FakeServer> {
  const requests: RecordedRequest[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      let body: unknown = undefined;
      try {
        body = text ? JSON.parse(text) : undefined;
      } catch {
        body = text;
      }
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      const recorded: RecordedRequest = { method: req.method ?? 'GET', path, body, authorization: req.headers.authorization };
      requests.push(recorded);
      const route = fake.routes[`${recorded.method} ${path}`];
      if (route === undefined) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: `no route ${path}` } }));
        return;
      }
      if (typeof route === 'function') {
        void (route as (r: RecordedRequest, s: ServerResponse) => void | Promise<void>)(recorded, res);
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(route));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const fake: FakeServer = {
    origin: `http://127.0.0.1:${port}`,
    requests,
    routes,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  return fake;
}

/**
 * The fake servers and backends of one test file, closed after each test (call it once, at the
 * top level): `serve` starts a server, `track` hands a backend over to be disposed.
 */
export function fakeServerScope(): { serve(routes: Record<string, Route>): Promise<FakeServer>; track<B extends { dispose(): Promise<void> }>(backend: B): B } {
  let servers: FakeServer[] = [];
  let backends: { dispose(): Promise<void> }[] = [];
  afterEach(async () => {
    await Promise.all(backends.map((b) => b.dispose()));
    await Promise.all(servers.map((s) => s.close()));
    servers = [];
    backends = [];
  });
  return {
    async serve(routes) {
      const s = await fakeServer(routes);
      servers.push(s);
      return s;
    },
    track(backend) {
      backends.push(backend);
      return backend;
    },
  };
}

export function json(res: ServerResponse, status: number, value: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(value));
}

/** An OpenAI chat completion answer (the shape of platform.openai.com/docs/api-reference/chat/object). */
export function chatCompletion(content: string, model: string, usage = { prompt_tokens: 21, completion_tokens: 2 }): unknown {
  return {
    id: 'chatcmpl-123',
    object: 'chat.completion',
    created: 1677652288,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content }, logprobs: null, finish_reason: 'stop' }],
    usage: { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens },
  };
}
