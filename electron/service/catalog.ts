// What `tatra api` serves: one model id per task and model pairing. `tatra/<task>` is the task on
// the first (default) pairing; with several pairings each is also `tatra/<task>@<pairing>`.
import type { ModelSpec } from '../common/model-spec';
import type { TaskDefinition } from '../common/task';
import { taskContentHash } from '../engine/cache';
import type { TatraBackend } from '../engine/backend';
import { notFound } from './errors';

export const MODEL_PREFIX = 'tatra/';

/** A generator and an evaluator served under one name. */
export interface Pairing {
  name: string;
  generator: ModelSpec;
  evaluator: ModelSpec;
}

/** A pairing with its models loaded (held for as long as the service runs). */
export interface LoadedPairing extends Pairing {
  generatorBackend: TatraBackend;
  evaluatorBackend: TatraBackend;
}

export interface ServedTask {
  task: TaskDefinition;
  /** taskContentHash, computed once: part of every result-cache key. */
  hash: string;
}

export interface Target {
  /** The model id as asked for. */
  id: string;
  served: ServedTask;
  pairing: LoadedPairing;
}

export const PAIRING_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** The default name of a pairing: its model's name (ModelSpec.name), or `generator+evaluator`. */
export function pairingName(generator: ModelSpec, evaluator: ModelSpec): string {
  const raw = generator.text === evaluator.text ? generator.name : `${generator.name}+${evaluator.name}`;
  const name = raw.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[^A-Za-z0-9]+/, '').slice(0, 64);
  return name === '' ? 'default' : name;
}

export class Catalog {
  private readonly tasks = new Map<string, ServedTask>();
  readonly created = Math.floor(Date.now() / 1000);

  constructor(
    tasks: readonly TaskDefinition[],
    readonly pairings: readonly LoadedPairing[],
  ) {
    if (pairings.length === 0) throw new Error('a catalog needs at least one pairing');
    for (const task of tasks) this.tasks.set(task.id, { task, hash: taskContentHash(task) });
  }

  /** Every model id, as GET /v1/models lists them. */
  ids(): { id: string; served: ServedTask; pairing: LoadedPairing }[] {
    const out: { id: string; served: ServedTask; pairing: LoadedPairing }[] = [];
    for (const served of this.tasks.values()) {
      out.push({ id: `${MODEL_PREFIX}${served.task.id}`, served, pairing: this.pairings[0]! });
      if (this.pairings.length > 1) for (const p of this.pairings) out.push({ id: `${MODEL_PREFIX}${served.task.id}@${p.name}`, served, pairing: p });
    }
    return out;
  }

  /** The task and pairing a model id names; 404 model_not_found otherwise. */
  resolve(id: string): Target {
    const unknown = (why: string) => notFound(`the model "${id}" does not exist: ${why} (GET /v1/models lists them)`, 'model_not_found', 'model');
    if (!id.startsWith(MODEL_PREFIX)) throw unknown(`models are named ${MODEL_PREFIX}<task>`);
    const [taskId = '', pairingId, ...rest] = id.slice(MODEL_PREFIX.length).split('@');
    if (rest.length > 0) throw unknown('more than one @');
    const served = this.tasks.get(taskId);
    if (!served) throw unknown(`no task "${taskId}" is served`);
    const pairing = pairingId === undefined ? this.pairings[0] : this.pairings.find((p) => p.name === pairingId);
    if (!pairing) throw unknown(`no pairing "${pairingId}" (there are: ${this.pairings.map((p) => p.name).join(', ')})`);
    return { id, served, pairing };
  }
}
