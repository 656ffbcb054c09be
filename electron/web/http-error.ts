// The one error type of both network faces: a failure with the status it is answered with. A face
// only chooses the shape it is sent in (`tatra serve`: `<message>\n` as text; `tatra api`: OpenAI's
// `{"error": {message, type, param, code}}`). Fastify's own errors about a request (a body over its
// limit, a body that is not JSON, a malformed percent-escape, a content type no route takes) become
// one here, each with one status and one message, whichever face answers.
import type { FastifyError } from 'fastify';
import type { z } from 'zod';
import { describeZodError } from '../common/contract';

export interface HttpErrorDetails {
  /** A short machine-readable name of the failure (`tatra api` answers it as OpenAI's `code`). */
  code?: string | null;
  /** The request field at fault, as a dotted path (OpenAI's `param`). */
  param?: string | null;
  /** Extra response headers (Retry-After, Allow, WWW-Authenticate). */
  headers?: Readonly<Record<string, string>>;
}

/** A failure with the status it is answered with. */
export class HttpError extends Error {
  readonly code: string | null;
  readonly param: string | null;
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    readonly status: number,
    message: string,
    details: HttpErrorDetails = {},
  ) {
    super(message);
    this.name = 'HttpError';
    this.code = details.code ?? null;
    this.param = details.param ?? null;
    this.headers = details.headers ?? {};
  }
}

/** What a bug is answered with: nothing of it but that it happened (the face's log has the rest). */
export function internalError(): HttpError {
  return new HttpError(500, 'internal error; the server logged the details', { code: 'internal' });
}

/** An error Fastify raised about the request itself (a body over its limit, bad JSON, a bad URL): the client's, with its status. */
export function frameworkError(e: unknown): (FastifyError & { statusCode: number }) | null {
  const err = e as Partial<FastifyError> | null;
  if (!err || typeof err.code !== 'string' || !err.code.startsWith('FST_') || typeof err.statusCode !== 'number') return null;
  return err.statusCode >= 400 && err.statusCode < 500 ? (err as FastifyError & { statusCode: number }) : null;
}

/** Fastify's codes for a request's own faults, as they are answered. */
const REQUEST_ERRORS: Readonly<Record<string, (bodyLimit: () => number) => HttpError>> = {
  FST_ERR_CTP_BODY_TOO_LARGE: (limit) => new HttpError(413, `the request body is over ${limit()} bytes`, { code: 'request_too_large' }),
  FST_ERR_CTP_INVALID_JSON_BODY: () => notJson(),
  FST_ERR_CTP_EMPTY_JSON_BODY: () => notJson(),
  FST_ERR_CTP_INVALID_MEDIA_TYPE: () => new HttpError(415, 'send application/json', { code: 'unsupported_media_type' }),
  FST_ERR_BAD_URL: () => new HttpError(400, 'the request target has a malformed percent-escape', { code: 'invalid_url' }),
};

function notJson(): HttpError {
  return new HttpError(400, 'the request body is not JSON', { code: 'invalid_json' });
}

/**
 * `e` as the HttpError it is answered with, when it is one or a fault Fastify found in the request
 * (`bodyLimit`: the route's, asked for a body over it); null for anything else.
 */
export function requestError(e: unknown, bodyLimit: () => number): HttpError | null {
  if (e instanceof HttpError) return e;
  const framework = frameworkError(e);
  if (!framework) return null;
  return REQUEST_ERRORS[framework.code]?.(bodyLimit) ?? new HttpError(framework.statusCode, framework.message, { code: 'invalid_request' });
}

/** A body that is no JSON object at all, where a route takes one. */
export function notAnObject(): HttpError {
  return new HttpError(400, 'the body must be a JSON object', { code: 'invalid_request' });
}

/** A zod failure of a request body: the first issues in one line (saying what each value was), the first one's path as `param`. */
export function invalidBody(error: z.ZodError, body: unknown): HttpError {
  const first = error.issues[0];
  const param = first && first.path.length > 0 ? first.path.map(String).join('.') : null;
  return new HttpError(400, describeZodError(error, '', body), { code: 'invalid_request', param });
}
