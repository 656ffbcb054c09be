// A request the server refuses from its headers alone (no such route, a method the route does not
// take, no token or key, a forbidden Origin) is answered without its body being read: the answer
// comes while the body has not even been sent, and says `Connection: close`, and the server then
// closes the connection rather than read (and throw away) the body to keep it alive. Each case is
// a raw socket that declares a 1 GiB body (or a chunked one) and never sends a byte of it.
import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../../electron/server/server';
import type { RunningApiService } from '../../../electron/service';
import { startBothFaces, type BothFaces } from '../../helpers/both-faces';

let faces: BothFaces;
let serve: RunningServer;
let api: RunningApiService;
let key = '';

beforeAll(async () => {
  faces = await startBothFaces('tatra-unread-bodies-');
  ({ serve, api, key } = faces);
});

afterAll(() => faces?.close());

interface Refusal {
  status: number;
  connection: string | undefined;
}

/**
 * Writes `head` (a request line and headers promising a body) and nothing more. Resolves once the
 * answer's head has come and the server has closed the connection; until the server does both it
 * waits (a server that waits for the body instead never answers, and the test times out).
 */
function headersOnly(port: number, head: string): Promise<Refusal> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let answer = '';
    socket.on('error', reject);
    socket.on('data', (d: Buffer) => void (answer += d.toString('latin1')));
    // The server ended its side: whatever it answered is all there is.
    socket.on('end', () => {
      socket.destroy();
      const [statusLine = '', ...lines] = answer.split('\r\n\r\n')[0]!.split('\r\n');
      const connection = lines.find((l) => /^connection:/i.test(l))?.replace(/^connection:\s*/i, '').toLowerCase();
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(statusLine)?.[1] ?? 0), connection });
    });
    socket.on('connect', () => socket.write(head));
  });
}

const GIB = 1024 * 1024 * 1024;
const declared = `content-type: application/json\r\ncontent-length: ${GIB}\r\n\r\n`;
const chunked = 'content-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n';
const serveHost = () => `host: 127.0.0.1:${serve.port}\r\n`;
const serveAuth = () => `${serveHost()}x-tatra-token: ${serve.token}\r\norigin: ${serve.origin}\r\n`;
const apiHost = () => `host: 127.0.0.1:${api.port}\r\n`;
const apiAuth = () => `${apiHost()}authorization: Bearer ${key}\r\n`;

/** [what, port, request head, the status it is refused with] */
const serveCases: [string, () => number, () => string, number][] = [
  ['an unknown /api/ path', () => serve.port, () => `POST /api/nothing HTTP/1.1\r\n${serveAuth()}${declared}`, 404],
  ['an unknown /api/ path, chunked', () => serve.port, () => `POST /api/nothing HTTP/1.1\r\n${serveAuth()}${chunked}`, 404],
  ['a method /api/invoke does not take', () => serve.port, () => `PUT /api/invoke HTTP/1.1\r\n${serveAuth()}${declared}`, 405],
  ['a method the renderer does not take', () => serve.port, () => `POST /index.html HTTP/1.1\r\n${serveAuth()}${declared}`, 405],
  ['a method no route knows', () => serve.port, () => `PROPFIND /api/invoke HTTP/1.1\r\n${serveAuth()}${declared}`, 405],
  ['/api/invoke without the token', () => serve.port, () => `POST /api/invoke HTTP/1.1\r\n${serveHost()}${declared}`, 401],
  ['/api/upload without the token', () => serve.port, () => `POST /api/upload?name=x.csv HTTP/1.1\r\n${serveHost()}${declared}`, 401],
  ['/api/upload without the token, chunked', () => serve.port, () => `POST /api/upload?name=x.csv HTTP/1.1\r\n${serveHost()}${chunked}`, 401],
  ['/api/invoke from another Origin', () => serve.port, () => `POST /api/invoke HTTP/1.1\r\n${serveHost()}x-tatra-token: ${serve.token}\r\norigin: http://evil.example\r\n${declared}`, 403],
];

const apiCases: [string, () => number, () => string, number][] = [
  ['an unknown /v1/ path', () => api.port, () => `POST /v1/nothing HTTP/1.1\r\n${apiAuth()}${declared}`, 404],
  ['an unknown /v1/ path, chunked', () => api.port, () => `POST /v1/nothing HTTP/1.1\r\n${apiAuth()}${chunked}`, 404],
  ['an unknown path outside /v1/, without a key', () => api.port, () => `POST /nothing HTTP/1.1\r\n${apiHost()}${declared}`, 404],
  ['a method /v1/classify does not take', () => api.port, () => `PUT /v1/classify HTTP/1.1\r\n${apiAuth()}${declared}`, 405],
  ['a method /healthz does not take', () => api.port, () => `POST /healthz HTTP/1.1\r\n${apiAuth()}${declared}`, 405],
  ['a method no route knows', () => api.port, () => `PROPFIND /v1/classify HTTP/1.1\r\n${apiAuth()}${declared}`, 404],
  ['/v1/classify without a key', () => api.port, () => `POST /v1/classify HTTP/1.1\r\n${apiHost()}${declared}`, 401],
  ['/v1/chat/completions with a wrong key, chunked', () => api.port, () => `POST /v1/chat/completions HTTP/1.1\r\n${apiHost()}authorization: Bearer nope\r\n${chunked}`, 401],
  ['/v1/classify from a web page (Origin)', () => api.port, () => `POST /v1/classify HTTP/1.1\r\n${apiAuth()}origin: http://evil.example\r\n${declared}`, 403],
];

describe('a request refused from its headers is answered without reading its body', () => {
  it.each(serveCases)('tatra serve: %s', async (_what, port, head, status) => {
    expect(await headersOnly(port(), head())).toEqual({ status, connection: 'close' });
  });

  it.each(apiCases)('tatra api: %s', async (_what, port, head, status) => {
    expect(await headersOnly(port(), head())).toEqual({ status, connection: 'close' });
  });

  it('a request that was not refused still has its body read and answered (the same socket, the body sent after its headers)', async () => {
    const body = JSON.stringify({ method: 'tasks.list', input: {} });
    const status = await new Promise<number>((resolve, reject) => {
      const socket = connect(serve.port, '127.0.0.1');
      let answer = '';
      socket.on('error', reject);
      socket.on('data', (d: Buffer) => {
        answer += d.toString('latin1');
        if (answer.includes('\r\n\r\n')) {
          socket.destroy();
          resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0));
        }
      });
      socket.on('connect', () => {
        socket.write(`POST /api/invoke HTTP/1.1\r\n${serveAuth()}content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n`);
        socket.write(body);
      });
    });
    expect(status).toBe(200);
  });
});
