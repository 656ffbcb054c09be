// How the API contract is written: every method is a pair of zod schemas (input, output) under a
// dotted name ("jobs.start"); every streamed event is a zod schema under a name ("job.progress").
// Main-process handlers, the preload, the renderer's client and browser mode all derive their
// types from these maps, and every payload is parsed with them where it enters the main process.
import { z } from 'zod';

export interface MethodDef<I extends z.ZodType = z.ZodType, O extends z.ZodType = z.ZodType> {
  input: I;
  output: O;
}

export function method<I extends z.ZodType, O extends z.ZodType>(input: I, output: O): MethodDef<I, O> {
  return { input, output };
}

export type MethodMap = Record<string, MethodDef>;

/** What a handler receives (parsed input) and returns (output before parsing). */
export type Handlers<M extends MethodMap, Ctx> = {
  [K in keyof M]: (input: z.output<M[K]['input']>, ctx: Ctx) => Promise<z.input<M[K]['output']>>;
};

/** The error every transport returns for a failed call. */
export interface ApiErrorPayload {
  /** "user_error" and friends for bad input (show the message), "internal" for bugs, "cancelled". */
  code: string;
  message: string;
}

/** One call as browser mode's transport posts it to `tatra serve` (POST /api/invoke): the method's name and its input. */
export const InvokeRequest = z.object({ method: z.string(), input: z.unknown().optional() });
