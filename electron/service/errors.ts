// Every failure of `tatra api` as OpenAI answers one: an HTTP status and
// `{"error": {"message", "type", "param", "code"}}`, so the official clients raise their own error
// classes (NotFoundError, AuthenticationError, RateLimitError…) with our message in them.
import type { z } from 'zod';
import { describeZodError } from '../common/contract';
import { UserError } from '../common/errors';
import { environmentError } from '../common/env-errors';

export type OpenAiErrorType = 'invalid_request_error' | 'authentication_error' | 'permission_error' | 'not_found_error' | 'rate_limit_error' | 'server_error' | 'timeout_error';

export interface OpenAiErrorBody {
  error: { message: string; type: OpenAiErrorType; param: string | null; code: string | null };
}

/** A failure with the status and body it is answered with. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type: OpenAiErrorType,
    readonly code: string | null,
    readonly param: string | null = null,
    /** Extra response headers (Retry-After). */
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
    this.name = 'ApiFailure';
  }

  body(): OpenAiErrorBody {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

export const badRequest = (message: string, code = 'invalid_request', param: string | null = null) => new ApiFailure(400, message, 'invalid_request_error', code, param);

export const notFound = (message: string, code = 'not_found', param: string | null = null) => new ApiFailure(404, message, 'not_found_error', code, param);

/** A zod failure of a request body: the first issues in one line (saying what each value was), the first one's path as `param`. */
export function invalidBody(error: z.ZodError, body: unknown): ApiFailure {
  const first = error.issues[0];
  const param = first && first.path.length > 0 ? first.path.map(String).join('.') : null;
  return badRequest(describeZodError(error, '', body), 'invalid_request', param);
}

/** A request body parsed with `schema`, or the 400 saying what was wrong (a body that is no object at all said so). */
export function parseBody<T>(schema: z.ZodType<T>, body: unknown): T {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw badRequest('the body must be a JSON object', 'invalid_request');
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw invalidBody(parsed.error, body);
  return parsed.data;
}

/** Codes of UserErrors the engine and the backends raise that are the server's side, not the caller's. */
const UPSTREAM_CODES = new Set(['remote_unreachable', 'remote_http', 'remote_not_openai', 'remote_bad_request', 'remote_unknown', 'remote_key_missing']);

/**
 * What a failure during a classification is answered with. `internal` is true for a bug: its
 * details are logged and the caller is told only that something went wrong on our side.
 */
export function failureOf(e: unknown): { failure: ApiFailure; internal: boolean } {
  if (e instanceof ApiFailure) return { failure: e, internal: false };
  if (e instanceof UserError) {
    if (e.code === 'task_unknown') return { failure: notFound(e.message, 'model_not_found', 'model'), internal: false };
    if (UPSTREAM_CODES.has(e.code)) return { failure: new ApiFailure(502, e.message, 'server_error', e.code), internal: false };
    return { failure: badRequest(e.message, e.code), internal: false };
  }
  const env = environmentError(e);
  if (env) return { failure: new ApiFailure(503, env.message, 'server_error', env.code), internal: false };
  return { failure: new ApiFailure(500, 'internal error; the server logged the details', 'server_error', 'internal'), internal: true };
}
