// node-llama-cpp's internals are reached in one module (electron/llama/internals.ts), checked when
// the process's Llama starts: another installed version, or a member gone, is refused in one line
// instead of showing later as samplers never reused or a batch order no longer deterministic.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type * as nodeLlamaCpp from 'node-llama-cpp';
import { GgufInsights, type LlamaContext, type LlamaModel } from 'node-llama-cpp';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { UserError } from '../../../electron/common/errors';
import { NODE_LLAMA_CPP_PINNED, checkInternals, nativeModel, queuedSequenceIds } from '../../../electron/llama/internals';
import { disposeLlamaRuntime, getLlamaRuntime } from '../../../electron/llama/runtime';

// The version node-llama-cpp reports, replaceable per test (null: the installed one).
const reported = vi.hoisted(() => ({ version: null as string | null }));
vi.mock('node-llama-cpp', async (importOriginal) => {
  const real = await importOriginal<typeof nodeLlamaCpp>();
  return { ...real, getModuleVersion: async () => reported.version ?? (await real.getModuleVersion()) };
});

afterEach(() => {
  reported.version = null;
});
afterAll(() => disposeLlamaRuntime());

/** What getLlamaRuntime() rejects with, or null when it starts. */
async function startFailure(): Promise<UserError | null> {
  try {
    await getLlamaRuntime();
    return null;
  } catch (e) {
    expect(e).toBeInstanceOf(UserError);
    return e as UserError;
  }
}

describe('node-llama-cpp internals', () => {
  it('are checked against the version package.json pins, which is the one installed', async () => {
    const pkg = JSON.parse(readFileSync(join(import.meta.dirname, '../../../package.json'), 'utf8')) as { dependencies: Record<string, string> };
    expect(pkg.dependencies['node-llama-cpp']).toBe(NODE_LLAMA_CPP_PINNED);
    const real = await vi.importActual<typeof nodeLlamaCpp>('node-llama-cpp');
    expect(await real.getModuleVersion()).toBe(NODE_LLAMA_CPP_PINNED);
  });

  it('another version: the runtime refuses to start, in one line naming both versions', async () => {
    reported.version = '3.22.0';
    const e = await startFailure();
    expect(e?.code).toBe('llama_internals');
    expect(e?.message).toBe(
      `node-llama-cpp 3.22.0 is installed, but TATRA Studio relies on internals of node-llama-cpp ${NODE_LLAMA_CPP_PINNED} (native samplers, lockstep batch order, GPU fit plans): install node-llama-cpp ${NODE_LLAMA_CPP_PINNED}`,
    );
    // Refused, not remembered: the pinned version starts on the next call.
    reported.version = null;
    expect(await startFailure()).toBeNull();
  });

  it('a member gone: the runtime refuses to start, naming the member', async () => {
    await disposeLlamaRuntime();
    const proto = GgufInsights.prototype as unknown as { _resolveSimulatorSource?: unknown };
    const member = Object.getOwnPropertyDescriptor(proto, '_resolveSimulatorSource')!;
    expect(member).toBeDefined();
    delete proto._resolveSimulatorSource;
    try {
      const e = await startFailure();
      expect(e?.code).toBe('llama_internals');
      expect(e?.message).toMatch(new RegExp(`^node-llama-cpp ${NODE_LLAMA_CPP_PINNED.replaceAll('.', '\\.')} has no GgufInsights\\._resolveSimulatorSource, but TATRA Studio relies on internals`));
    } finally {
      Object.defineProperty(proto, '_resolveSimulatorSource', member);
    }
    expect(await startFailure()).toBeNull();
  });

  it('members on instances say the same line where they are reached', () => {
    expect(() => nativeModel({} as LlamaModel)).toThrow(/has no LlamaModel\._model, but TATRA Studio relies on internals/);
    expect(() => queuedSequenceIds({} as LlamaContext)).toThrow(/has no LlamaContext\._queuedDecodes, but TATRA Studio relies on internals/);
    expect(queuedSequenceIds({ _queuedDecodes: [{ sequenceId: 2 }, { sequenceId: 0 }] } as unknown as LlamaContext)).toEqual([2, 0]);
  });

  it('the check alone: the pinned version with every member passes; the first missing member is named', () => {
    expect(() => checkInternals(NODE_LLAMA_CPP_PINNED, { a: true, b: true })).not.toThrow();
    expect(() => checkInternals(NODE_LLAMA_CPP_PINNED, { a: true, b: false, c: false })).toThrow(/has no b, but/);
    expect(() => checkInternals('4.0.0', { a: true })).toThrow(/^node-llama-cpp 4\.0\.0 is installed, but/);
  });
});
