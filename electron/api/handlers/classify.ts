// Interactive classification: classify.start answers at once with a run id; the engine's events
// stream as `classify.event` while it works (on models held from the host's pool for the run:
// hold/classify.ts), and the run ends with a `done` event or an error. A run lives as jobs and
// experiments do (jobs/running-work.ts: launched, cancelled by a stop that waits for its end,
// stopped with the host); recent runs' states stay in memory so a reloaded page can replay them
// (classify.get).
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { onAbort } from '../../common/abort';
import { parseModelSpec } from '../../common/model-spec';
import type { ClassifyRunState, classifyMethods } from '../../common/contract/classify';
import { UserError, isAbortError } from '../../common/errors';
import { withEarlyStop } from '../../common/settings';
import type { TatraEvent } from '../../common/tatra';
import { MemoryGenerationCache } from '../../engine';
import { classifyWithHeld } from '../../hold';
import { RunningWork, type Run } from '../../jobs/running-work';
import type { HandlerGroup, HostDeps } from '../deps';
import { toApiError } from '../errors';

/** Finished runs kept for classify.get / classify.list. */
const KEEP_RUNS = 20;

export function createClassifyHandlers(deps: HostDeps): HandlerGroup<typeof classifyMethods> {
  // The runs going on: the one lifecycle of work this process runs, as jobs and experiments (running-work.ts).
  const running = new RunningWork<Run>('cancelling classify runs');
  // Every run's state, running or recent.
  const states = new Map<string, ClassifyRunState>();

  const prune = () => {
    const finished = [...states.values()].filter((state) => state.status !== 'running').sort((a, b) => a.startedAt - b.startedAt);
    while (finished.length > KEEP_RUNS) states.delete(finished.shift()!.runId);
  };

  const get = (runId: string): ClassifyRunState => {
    const state = states.get(runId);
    if (!state) throw new UserError(`no classify run "${runId}" (runs are kept in memory until the app restarts)`, 'run_unknown');
    return state;
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
        const forgetHost = onAbort(deps.signal, () => ac.abort());
        const state: ClassifyRunState = { runId, request, status: 'running', startedAt: Date.now(), events: [], result: null, error: null };
        states.set(runId, state);

        running.launch(runId, { ac, stop: null, done: Promise.resolve() }, async () => {
          // The engine's last event waits until the run's state says done (below): a client that
          // reads the state on that event finds it so, and a release that fails the run after it
          // sends the failure instead.
          let finished: TatraEvent | undefined;
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
                if (event.type === 'done') finished = event;
                else {
                  state.events.push(event);
                  deps.emit('classify.event', { runId, event });
                }
              },
            });
            state.result = result;
            state.status = 'done';
            if (finished) {
              state.events.push(finished);
              deps.emit('classify.event', { runId, event: finished });
            }
          } catch (e) {
            const cancelled = isAbortError(e) || ac.signal.aborted;
            const err = toApiError(e);
            state.status = cancelled ? 'cancelled' : 'failed';
            state.error = cancelled ? { code: 'cancelled', message: 'cancelled' } : { code: err.code, message: err.message };
            if (err.internal && !cancelled) process.stderr.write(`tatra: classify failed: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
            deps.emit('classify.event', { runId, error: state.error });
          } finally {
            forgetHost();
            prune();
          }
        });
        return { runId };
      },
      'classify.cancel': async ({ runId }) => {
        if (get(runId).status !== 'running') return { cancelled: false };
        return { cancelled: await running.stop(runId, 'cancelled') };
      },
      'classify.get': async ({ runId }) => get(runId),
      'classify.list': async () =>
        [...states.values()]
          .sort((a, b) => b.startedAt - a.startedAt)
          .map(({ events: _e, result, ...rest }) => ({ ...rest, label: result?.label ?? null })),
    },
    async dispose() {
      await running.dispose((runId) => running.stop(runId, 'cancelled'));
    },
  };
}
