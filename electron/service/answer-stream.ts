// An answer of `tatra api` streamed as it is made (a chat completion's server-sent events, a batch's
// JSON lines). It is the reply's body, so it leaves like any answer: with the reply's headers (the
// security headers, the request id) and through the faces' hooks (web/http-app.ts), and Fastify ends
// it when the client goes away. A writer that waits for room (`drained`) holds a slow reader's rows
// itself, not in our memory.
import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import type { FastifyReply } from 'fastify';

export class AnswerStream {
  private readonly body = new PassThrough();

  /** Sends the reply with this stream as its body; its headers go with the first bytes written. */
  constructor(reply: FastifyReply, contentType: string) {
    void reply.header('x-accel-buffering', 'no').type(contentType).send(this.body);
  }

  /** Whether the answer can still be written: not ended, and its client still there. */
  get open(): boolean {
    return !this.body.destroyed && !this.body.writableEnded;
  }

  /** Writes `text` now; false when the client is behind (wait for `drained` before the next). */
  write(text: string): boolean {
    return this.open && this.body.write(text);
  }

  /** Resolves once the client has read what is waiting; rejects when `signal` aborts first. */
  async drained(signal: AbortSignal): Promise<void> {
    if (this.body.writableNeedDrain) await once(this.body, 'drain', { signal });
  }

  /** Ends the answer, with `text` as its last item, if it is still open. */
  end(text?: string): void {
    if (this.open) this.body.end(text);
  }
}
