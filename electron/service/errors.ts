// Every failure of `tatra api` as OpenAI answers one: an HTTP status and
// `{"error": {"message", "type", "param", "code"}}`, so the official clients raise their own error
// classes (NotFoundError, AuthenticationError, RateLimitError…) with our message in them. A failure
// is the faces' one HttpError (web/http-error.ts); OpenAI's `type` follows from its status.
import { UserError } from '../common/errors';
import { environmentError } from '../common/env-errors';
import { HttpError } from '../web/http-error';

export type OpenAiErrorType = 'invalid_request_error' | 'permission_error' | 'not_found_error' | 'rate_limit_error' | 'server_error' | 'timeout_error';

export interface OpenAiErrorBody {
  error: { message: string; type: OpenAiErrorType; param: string | null; code: string | null };
}

/** OpenAI's error type for a status (a missing or wrong key is an invalid request there too). */
export function openAiType(status: number): OpenAiErrorType {
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 429) return 'rate_limit_error';
  if (status === 504) return 'timeout_error';
  return status >= 500 ? 'server_error' : 'invalid_request_error';
}

export function openAiError(failure: HttpError): OpenAiErrorBody {
  return { error: { message: failure.message, type: openAiType(failure.status), param: failure.param, code: failure.code } };
}

export const badRequest = (message: string, code = 'invalid_request', param: string | null = null) => new HttpError(400, message, { code, param });

export const notFound = (message: string, code = 'not_found', param: string | null = null) => new HttpError(404, message, { code, param });

/** Codes of UserErrors the engine and the backends raise that are the server's side, not the caller's. */
const UPSTREAM_CODES = new Set(['remote_unreachable', 'remote_http', 'remote_not_openai', 'remote_bad_request', 'remote_unknown', 'remote_key_missing']);

/**
 * What a failure during a classification is answered with; null for a bug, whose details are
 * logged and the caller told only that something went wrong on our side.
 */
export function failureOf(e: unknown): HttpError | null {
  if (e instanceof HttpError) return e;
  if (e instanceof UserError) {
    if (e.code === 'task_unknown') return notFound(e.message, 'model_not_found', 'model');
    if (UPSTREAM_CODES.has(e.code)) return new HttpError(502, e.message, { code: e.code });
    return badRequest(e.message, e.code);
  }
  const env = environmentError(e);
  return env ? new HttpError(503, env.message, { code: env.code }) : null;
}
