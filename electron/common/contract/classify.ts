// Classify one input interactively: start returns a run id at once; the engine's events stream as
// `classify.event` (ending with a `done` event carrying the result, or an error); cancel stops it.
import { z } from 'zod';
import { TatraEvent, TatraResult, TatraSettings } from '../tatra';
import { method } from './define';
import { INPUT_MAX_CHARS } from '../settings';

export const ApiError = z.object({ code: z.string(), message: z.string() });
export type ApiError = z.infer<typeof ApiError>;

const ModelRef = z.string().trim().min(1, 'choose a model');

export const ClassifyStartInput = z.object({
  taskId: z.string().trim().min(1),
  input: z.string().refine((s) => s.trim().length > 0, 'type an input to classify').pipe(z.string().max(INPUT_MAX_CHARS)),
  /** GGUF path of the model that writes examples and paraphrases. */
  generator: ModelRef,
  /** GGUF path of the model that labels; may equal the generator (one loaded copy is shared). */
  evaluator: ModelRef,
  settings: TatraSettings,
});
export type ClassifyStartInput = z.infer<typeof ClassifyStartInput>;

export const ClassifyRunStatus = z.enum(['running', 'done', 'failed', 'cancelled']);
export type ClassifyRunStatus = z.infer<typeof ClassifyRunStatus>;

/** A classify run as the host remembers it (so a reloaded page can pick it up again). */
export const ClassifyRunState = z.object({
  runId: z.string(),
  request: ClassifyStartInput,
  status: ClassifyRunStatus,
  startedAt: z.number(),
  /** Every event so far, in order. */
  events: z.array(TatraEvent),
  result: TatraResult.nullable(),
  error: ApiError.nullable(),
});
export type ClassifyRunState = z.infer<typeof ClassifyRunState>;

export const ClassifyEventPayload = z.union([
  z.object({ runId: z.string(), event: TatraEvent }),
  /** The run failed or was cancelled (code "cancelled"); no more events follow. */
  z.object({ runId: z.string(), error: ApiError }),
]);
export type ClassifyEventPayload = z.infer<typeof ClassifyEventPayload>;

export const classifyMethods = {
  'classify.start': method(ClassifyStartInput, z.object({ runId: z.string() })),
  /** Stops a run promptly; false when it was not running. */
  'classify.cancel': method(z.object({ runId: z.string() }), z.object({ cancelled: z.boolean() })),
  /** The state of a run (recent runs are kept in memory; unknown id → user error). */
  'classify.get': method(z.object({ runId: z.string() }), ClassifyRunState),
  /** Runs still in memory, newest first, without their events. */
  'classify.list': method(
    z.object({}).default({}),
    z.array(ClassifyRunState.omit({ events: true, result: true }).extend({ label: z.string().nullable() })),
  ),
};

export const classifyEvents = {
  'classify.event': ClassifyEventPayload,
};
