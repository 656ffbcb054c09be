// GET /metrics of `tatra api`, in Prometheus' text format (prom-client), on a registry of its own
// so two services in one process (tests) never share counters. Model calls and tokens are counted
// at the backends, each call as it finishes, so work a client abandoned halfway still shows.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { withGenerate, type TatraBackend } from '../engine/backend';
import type { Admission } from './admission';

/** Routes as metric labels: a fixed set, so no client can grow the series without bound. */
export const ROUTES = ['/v1/models', '/v1/chat/completions', '/v1/classify', '/healthz', '/metrics', 'other'] as const;
export type RouteLabel = (typeof ROUTES)[number];

export type ClassificationOutcome = 'computed' | 'cached' | 'joined' | 'failed' | 'cancelled' | 'timeout';

export class ServiceMetrics {
  readonly registry = new Registry();
  readonly requests: Counter<'route' | 'status'>;
  readonly latency: Histogram<'route'>;
  readonly classifications: Counter<'outcome'>;
  readonly modelCalls: Counter<'pairing' | 'role'>;
  readonly tokens: Counter<'pairing' | 'role' | 'kind'>;
  readonly errors: Counter<'code'>;

  constructor(admission: Admission) {
    const registers = [this.registry];
    this.requests = new Counter({ name: 'tatra_api_requests_total', help: 'HTTP requests answered, by route and status', labelNames: ['route', 'status'], registers });
    this.latency = new Histogram({
      name: 'tatra_api_request_duration_seconds',
      help: 'Time from a request to its answer (streamed: to the last byte), by route',
      labelNames: ['route'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600],
      registers,
    });
    this.classifications = new Counter({ name: 'tatra_api_classifications_total', help: 'Inputs classified: computed, answered from the cache, joined to an identical one in flight, failed, cancelled (the client left), timed out', labelNames: ['outcome'], registers });
    this.modelCalls = new Counter({ name: 'tatra_api_model_calls_total', help: 'Calls to the models, by pairing and role', labelNames: ['pairing', 'role'], registers });
    this.tokens = new Counter({ name: 'tatra_api_tokens_total', help: 'Tokens through the models, by pairing, role and kind (prompt or completion)', labelNames: ['pairing', 'role', 'kind'], registers });
    this.errors = new Counter({ name: 'tatra_api_errors_total', help: 'Error answers, by code', labelNames: ['code'], registers });
    new Gauge({
      name: 'tatra_api_queue_depth',
      help: 'Classifications waiting for an engine slot',
      registers,
      collect() {
        this.set(admission.queued);
      },
    });
    new Gauge({
      name: 'tatra_api_classifications_running',
      help: 'Classifications running in the engine',
      registers,
      collect() {
        this.set(admission.running);
      },
    });
    new Gauge({
      name: 'tatra_api_requests_in_progress',
      help: 'Requests admitted and not yet answered (at most the queue limit)',
      registers,
      collect() {
        this.set(admission.admitted);
      },
    });
    collectDefaultMetrics({ register: this.registry });
  }

  /** The backend, counting each call and its tokens as it finishes. */
  counted(backend: TatraBackend, pairing: string, role: 'generator' | 'evaluator'): TatraBackend {
    const calls = this.modelCalls.labels(pairing, role);
    const prompt = this.tokens.labels(pairing, role, 'prompt');
    const completion = this.tokens.labels(pairing, role, 'completion');
    return withGenerate(backend, (requests, onResult) =>
      backend.generate(requests, (i, r) => {
        calls.inc();
        prompt.inc(r.promptTokens);
        completion.inc(r.completionTokens);
        onResult?.(i, r);
      }),
    );
  }
}
