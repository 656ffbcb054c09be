// The one API contract: every method and every streamed event of TATRA Studio.
// Domain files (tasks, classify, jobs, models, settings, experiments) each export `<domain>Methods` and
// `<domain>Events`; this file only combines them and derives the types every face uses.
import { type z } from 'zod';
import { plainZodError } from '../plain-errors';
import { classifyEvents, classifyMethods } from './classify';
import { jobsEvents, jobsMethods } from './jobs';
import { modelsEvents, modelsMethods } from './models';
import { settingsEvents, settingsMethods } from './settings';
import { experimentsEvents, experimentsMethods } from './experiments';
import { tasksEvents, tasksMethods } from './tasks';
import { plansEvents, plansMethods } from './plans';
import { reviewEvents, reviewMethods } from './review';

export * from './define';
export * from './tasks';
export * from './classify';
export * from './jobs';
export * from './settings';
export * from './sweeps';
export * from './comparisons';
export * from './experiment-progress';
export * from './experiments';
export * from './plans';
export * from './review';

export const apiMethods = {
  ...tasksMethods,
  ...classifyMethods,
  ...jobsMethods,
  ...settingsMethods,
  ...modelsMethods,
  ...experimentsMethods,
  ...plansMethods,
  ...reviewMethods,
};

export const apiEvents = {
  ...tasksEvents,
  ...classifyEvents,
  ...jobsEvents,
  ...settingsEvents,
  ...modelsEvents,
  ...experimentsEvents,
  ...plansEvents,
  ...reviewEvents,
};

export type ApiMethods = typeof apiMethods;
export type ApiEvents = typeof apiEvents;
export type MethodName = keyof ApiMethods & string;
export type EventName = keyof ApiEvents & string;
/** What a caller may pass (before defaults). */
export type MethodInput<M extends MethodName> = z.input<ApiMethods[M]['input']>;
/** What a caller gets back (after parsing). */
export type MethodOutput<M extends MethodName> = z.output<ApiMethods[M]['output']>;
export type EventPayload<E extends EventName> = z.output<ApiEvents[E]>;

export function isMethodName(name: string): name is MethodName {
  return Object.prototype.hasOwnProperty.call(apiMethods, name);
}

export function isEventName(name: string): name is EventName {
  return Object.prototype.hasOwnProperty.call(apiEvents, name);
}

/** One line naming the first problems of a failed parse, for the user: plain words, a field by its name (common/plain-errors.ts). */
export function describeZodError(error: z.ZodError, prefix = '', input?: unknown): string {
  return `${prefix}${plainZodError(error, input)}`;
}
