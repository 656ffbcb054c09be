// What every command loads before it does anything (scripts/build-node.mjs): the built CLI and the
// parts it imports statically. The HTTP faces' packages (Fastify, its WebSocket plugin, ws,
// prom-client) are imported only when `tatra serve` or `tatra api` starts, in a part of their own.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const cli = join(root, 'dist', 'cli.js');
const skipReason = existsSync(cli) ? '' : 'dist/cli.js is not built (npm run build:node)';

/** The packages and own files a built module imports statically (`import … from "x"`, `import "x"`). */
function staticImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/^import\s+(?:[^'"]*?\s+from\s+)?"([^"]+)";?$/gms)].map((m) => m[1]!);
}

/** Every package `entries` load: their imports and those of the parts they import, transitively. */
function packagesOf(entries: readonly string[]): Set<string> {
  const packages = new Set<string>();
  const seen = new Set<string>();
  const walk = (file: string) => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const spec of staticImports(file)) {
      if (spec.startsWith('.')) walk(resolve(dirname(file), spec));
      else if (!spec.startsWith('node:')) packages.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!);
    }
  };
  for (const entry of entries) walk(entry);
  return packages;
}

/** The parts the CLI imports when a command needs them (`import("./cli-chunks/…")`). */
function lazyParts(): string[] {
  return [...readFileSync(cli, 'utf8').matchAll(/import\("(\.\/cli-chunks\/[^"]+)"\)/g)].map((m) => join(root, 'dist', m[1]!));
}

describe.skipIf(skipReason !== '')(`the CLI's start-up${skipReason ? ` (skipped: ${skipReason})` : ''}`, () => {
  it('loads no HTTP server package: those come with the part `tatra serve` and `tatra api` import when they start', () => {
    const atStart = packagesOf([cli]);
    // The walk reads real imports: the CLI's own packages are there.
    expect(atStart).toContain('commander');
    expect(atStart).toContain('better-sqlite3');
    for (const server of ['fastify', '@fastify/websocket', 'ws', 'prom-client']) expect(atStart, server).not.toContain(server);
    // ...and the parts imported later hold them.
    const later = lazyParts();
    expect(later.length).toBeGreaterThanOrEqual(2);
    expect([...packagesOf(later)]).toEqual(expect.arrayContaining(['fastify', '@fastify/websocket', 'prom-client']));
  });

  it('finds its own files from dist/cli.js alone: no part reads import.meta.url (a part is a folder deeper)', () => {
    const parts = readdirSync(join(root, 'dist', 'cli-chunks')).filter((f) => f.endsWith('.js'));
    expect(parts.length).toBeGreaterThan(0);
    for (const part of parts) expect(readFileSync(join(root, 'dist', 'cli-chunks', part), 'utf8'), part).not.toContain('import.meta.url');
  });
});
