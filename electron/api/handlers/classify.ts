// Interactive classification: classify.start answers at once with a run id; the engine's events
// stream as `classify.event` while it works (on models held from the host's pool for the run:
// hold/classify.ts), and the run ends with a `done` event or an error. Recent runs stay in memory
// so a reloaded page can replay them (classify.get).
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { existsSync } from 'node:fs';
import { parseModelSpec } from '../../common/model-spec';
import type { ClassifyRunState, classifyMethods } from '../../common/contract/classify';
import { UserError, isAbortError } from '../../common/errors';
import { withEarlyStop } from '../../common/settings';
import { MemoryGenerationCache } from '../../engine';
import { classifyWithHeld } from '../../hold';
import type { HandlerGroup, HostDeps } from '../deps';
import { toApiError } from '../errors';

/** Finished runs kept for classify.get / classify.list. */
const KEEP_RUNS = 20;

interface Run {
  state: ClassifyRunState;
  ac: AbortController;
  done: Promise<void>;
}

export function createClassifyHandlers(deps: HostDeps): HandlerGroup<typeof classifyMethods> {
  const runs = new Map<string, Run>();

  const prune = () => {
    const finished = [...runs.values()].filter((r) => r.state.status !== 'running').sort((a, b) => a.state.startedAt - b.state.startedAt);
    while (finished.length > KEEP_RUNS) runs.delete(finished.shift()!.state.runId);
  };

  const get = (runId: string): Run => {
    const run = runs.get(runId);
    if (!run) throw new UserError(`no classify run "${runId}" (runs are kept in memory until the app restarts)`, 'run_unknown');
    return run;
  };

  return {
    handlers: {
      'classify.start': async (request) => {
        const { task } = await deps.services.tasks.find(request.taskId);
        // A missing file is the commonest mistake: say so now rather than in the first event.
        const models = { generator: parseModelSpec(request.generator), evaluator: parseModelSpec(request.evaluator) };
        for (const role of ['generator', 'evaluator'] as const) {
          const model = models[role];
          if (model.kind === 'gguf' && !existsSync(model.path)) throw new UserError(`${role} model not found: ${model.path}`, 'gguf_missing');
        }
        const runId = randomUUID();
        const ac = new AbortController();
        // The engine listens on this signal once per request in flight (a batch of r × (n + 1)
        // evaluations passes Node's 10): not a leak (test/unit/api/classify-listeners.test.ts).
        setMaxListeners(0, ac.signal);
        const onHostGone = () => ac.abort();
        deps.signal.addEventListener('abort', onHostGone, { once: true });
        const state: ClassifyRunState = { runId, request, status: 'running', startedAt: Date.now(), events: [], result: null, error: null };
        const run: Run = { state, ac, done: Promise.resolve() };
        runs.set(runId, run);

        run.done = (async () => {
          try {
            const result = await classifyWithHeld(deps.services.pool, {
              task,
              input: request.input,
              settings: withEarlyStop(request.settings, 'input'),
              // The same file twice shares one loaded copy (the pool keys by real path).
              ...models,
              cache: new MemoryGenerationCache(),
              signal: ac.signal,
              onEvent: (event) => {
                state.events.push(event);
                deps.emit('classify.event', { runId, event });
              },
            });
            state.result = result;
            state.status = 'done';
          } catch (e) {
            const cancelled = isAbortError(e) || ac.signal.aborted;
            const err = toApiError(e);
            state.status = cancelled ? 'cancelled' : 'failed';
            state.error = cancelled ? { code: 'cancelled', message: 'cancelled' } : { code: err.code, message: err.message };
            if (err.internal && !cancelled) process.stderr.write(`tatra: classify failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
            deps.emit('classify.event', { runId, error: state.error });
          } finally {
            deps.signal.removeEventListener('abort', onHostGone);
            prune();
          }
        })();
        return { runId };
      },
      'classify.cancel': async ({ runId }) => {
        const run = get(runId);
        if (run.state.status !== 'running') return { cancelled: false };
        run.ac.abort();
        await run.done;
        return { cancelled: true };
      },
      'classify.get': async ({ runId }) => get(runId).state,
      'classify.list': async () =>
        [...runs.values()]
          .map((r) => r.state)
          .sort((a, b) => b.startedAt - a.startedAt)
          .map(({ events: _e, result, ...rest }) => ({ ...rest, label: result?.label ?? null })),
    },
    async dispose() {
      for (const r of runs.values()) r.ac.abort();
      await Promise.all([...runs.values()].map((r) => r.done));
    },
  };
}
