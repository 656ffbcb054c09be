// What identifies the models a job runs on, and what changed since it started: a resumed job
// compares its models with the ones it recorded, so rows from two different models never end up
// under one job unless the user accepts the change (recorded in the job).
import { stat } from 'node:fs/promises';
import { parseModelSpec, type ModelSpec } from '../common/model-spec';
import { inspectGgufOnce } from '../llama/inspection';
import { modelContentHash } from '../llama/content-hash';
import type { JobInfo, ModelRef } from './types';

/**
 * A local GGUF's reference: its size and header hash, from the one inspection per file version,
 * and the hash of all its bytes (once per file version too), so that any change of the weights is
 * seen on resume.
 */
export async function inspectLocalModel(path: string): Promise<ModelRef> {
  const info = await inspectGgufOnce(path);
  return { path, sizeBytes: info.fileSize, headerHash: info.headerHash, contentHash: await modelContentHash(path) };
}

/** Size of a file for a ModelRef when no GGUF inspection is wanted (scripted backends in tests). */
export async function plainModelRef(path: string): Promise<ModelRef> {
  try {
    return { path, sizeBytes: (await stat(path)).size, headerHash: '' };
  } catch {
    return { path, sizeBytes: 0, headerHash: '' };
  }
}

export interface ModelChange {
  role: 'generator' | 'evaluator';
  before: ModelRef;
  now: ModelRef;
}

/**
 * What identifies a model: a local file by the hash of all its bytes (jobs recorded before it was
 * kept: by its size and header hash), a remote one by its model id, server URLs and server kind
 * (not its version or library name, which change harmlessly).
 */
function sameModel(before: ModelRef, now: ModelRef): boolean {
  const remote = (ref: ModelRef) => (ref.remote ? JSON.stringify({ model: ref.remote.model, urls: [...ref.remote.urls].sort(), kind: ref.remote.kind }) : null);
  if (before.remote || now.remote) return remote(before) === remote(now);
  if (before.sizeBytes !== now.sizeBytes || before.headerHash !== now.headerHash) return false;
  return before.contentHash === undefined || now.contentHash === undefined || before.contentHash === now.contentHash;
}

/** The job's models whose identity is not the one recorded (a file used in both roles is inspected once). */
export async function changedModels(job: JobInfo, inspectModel: (model: ModelSpec) => Promise<ModelRef>): Promise<ModelChange[]> {
  const seen = new Map<string, Promise<ModelRef>>();
  const inspect = (path: string) => {
    let p = seen.get(path);
    if (!p) seen.set(path, (p = inspectModel(parseModelSpec(path))));
    return p;
  };
  const out: ModelChange[] = [];
  for (const role of ['generator', 'evaluator'] as const) {
    const before = job[role];
    const now = await inspect(before.path);
    if (!sameModel(before, now)) out.push({ role, before, now });
  }
  return out;
}

/** The change in words, for the error that stops a resume. */
export function describeChange(before: ModelRef, now: ModelRef): string {
  if (before.remote || now.remote) {
    const where = (r: ModelRef) => (r.remote ? `${r.remote.model} at ${r.remote.urls.join(', ')}` : 'a local file');
    return `${where(before)} → ${where(now)}`;
  }
  const parts: string[] = [];
  if (before.sizeBytes !== now.sizeBytes) parts.push(`size ${before.sizeBytes} → ${now.sizeBytes} bytes`);
  if (before.headerHash !== now.headerHash) parts.push(`header hash ${before.headerHash.slice(0, 12) || '?'} → ${now.headerHash.slice(0, 12) || '?'}`);
  else if (before.contentHash !== now.contentHash) parts.push(`same size and header, other weights: content hash ${before.contentHash?.slice(0, 12) ?? '?'} → ${now.contentHash?.slice(0, 12) ?? '?'}`);
  return parts.length > 0 ? parts.join(', ') : 'its identity differs';
}

/** The new reference, remembering the one it replaced. */
export function acceptChange(before: ModelRef, now: ModelRef): ModelRef {
  const { path: _path, replaced = [], ...identity } = before;
  return { ...now, replaced: [...replaced, { ...identity, acceptedAt: new Date().toISOString() }] };
}
