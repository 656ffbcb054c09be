// The pack for a bare GPU machine (tools/gpu/pack.sh): small enough to travel with room to spare,
// and holding what tools/gpu/far-side.sh needs there (no network, no Node.js, no git), without the
// prebuilt llama.cpp binaries the far side compiles itself. The pack is made on demand, not in CI:
// without it (or without a built CLI to pack) the test skips and says why.
import { execFile } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '..', '..', '..');
const pack = join(root, '.gpu-pack', 'tatra-gpu.tar.xz');
const built = existsSync(join(root, 'dist', 'cli.js'));
const packed = existsSync(pack);
const skipReason = !built ? 'dist is not built (npm run build:node)' : !packed ? 'no GPU pack (bash tools/gpu/pack.sh)' : '';

/** What the device call may carry in all; the pack must leave room for the working tree beside it. */
const TRAVEL_LIMIT = 64 * 2 ** 20;

describe.skipIf(skipReason !== '')(`GPU pack${skipReason ? ` (skipped: ${skipReason})` : ''}`, () => {
  it('is at most three quarters of the travel limit', () => {
    expect(statSync(pack).size).toBeLessThan(TRAVEL_LIMIT * 0.75);
  });

  it('holds Node, its headers, the CLI, its native dependencies and the llama.cpp source, and no prebuilt binaries', { timeout: 300_000 }, async () => {
    const { stdout } = await promisify(execFile)('tar', ['-tJf', pack], { maxBuffer: 256 * 2 ** 20 });
    const entries = new Set(stdout.split('\n').map((l) => l.replace(/^\.\//, '').replace(/\/$/, '')));
    for (const path of [
      'node/bin/node',
      'node/include/node/node_api.h',
      'app/package.json',
      'app/bin/tatra.js',
      'app/dist/cli.js',
      'app/dist/cli-chunks',
      'app/tasks/sst2.json',
      'app/tools/synthetic-gguf.mjs',
      'app/tools/bench-gpu.mjs',
      'app/node_modules/better-sqlite3/build/Release/better_sqlite3.node',
      'app/node_modules/node-llama-cpp/package.json',
      'app/node_modules/node-llama-cpp/llama/CMakeLists.txt',
      'app/node_modules/node-addon-api/napi.h',
      'app/node_modules/node-llama-cpp/llama/llama.cpp/CMakeLists.txt',
      'app/node_modules/node-llama-cpp/llama/llama.cpp/tools/server/server.cpp',
      'app/node_modules/node-llama-cpp/llama/llama.cpp/ggml/src/ggml-cuda/ggml-cuda.cu',
      'app/node_modules/node-llama-cpp/llama/llama.cpp/models/ggml-vocab-qwen2.gguf',
      'app/node_modules/node-llama-cpp/llama/llama.cpp/models/templates/Qwen-Qwen2.5-7B-Instruct.jinja',
      'data/sst2.jsonl',
    ]) {
      expect(entries, path).toContain(path);
    }
    const all = [...entries];
    expect(all.filter((e) => e.startsWith('app/node_modules/@node-llama-cpp/'))).toEqual([]);
    expect(all.filter((e) => e.endsWith('gitRelease.bundle') || e.includes('/localBuilds/'))).toEqual([]);
    expect(all.filter((e) => e.startsWith('app/node_modules/electron/'))).toEqual([]);
  });
});
