// How any failure becomes the API's {code, message}: user errors keep their code and one-line
// message; cancellation is "cancelled"; anything else is a bug, reported as "internal".
import type { z } from 'zod';
import { type ApiErrorPayload, describeZodError } from '../common/contract';
import { UserError, errorMessage, isAbortError } from '../common/errors';
import { environmentError } from '../common/env-errors';
import { ContextOverflowError } from '../engine/backend';

/** Error codes the UI may rely on besides the UserError codes the modules raise. */
export const HOST_ERROR_CODES = {
  unknownMethod: 'unknown_method',
  invalidInput: 'invalid_input',
  notAvailable: 'not_available',
  cancelled: 'cancelled',
  disposed: 'disposed',
  internal: 'internal',
} as const;

export function toApiError(e: unknown): ApiErrorPayload & { internal: boolean } {
  if (e instanceof UserError) return { code: e.code, message: e.message, internal: false };
  if (e instanceof ContextOverflowError) return { code: 'context_overflow', message: e.message, internal: false };
  if (isAbortError(e)) return { code: HOST_ERROR_CODES.cancelled, message: 'cancelled', internal: false };
  if (e instanceof Error && e.name === 'ZodError' && 'issues' in e) {
    return { code: HOST_ERROR_CODES.invalidInput, message: describeZodError(e as unknown as z.ZodError), internal: false };
  }
  const env = environmentError(e);
  if (env) return { code: env.code, message: env.message, internal: false };
  return { code: HOST_ERROR_CODES.internal, message: `unexpected error: ${errorMessage(e)}`, internal: true };
}
