// Bundles the Node-side faces with esbuild: the CLI (also `tatra serve`), Electron's main process
// and its preload. Dependencies stay external (node-llama-cpp and better-sqlite3 carry native
// binaries and must be loaded from node_modules); the sandboxed preload is bundled whole as CJS,
// because a sandboxed preload can require nothing but a few Electron modules.
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { build } from 'esbuild';

const common = { bundle: true, platform: 'node', target: 'node20', sourcemap: true, logLevel: 'warning' };

// Every package stays external but @stdlib's: its few functions (statistics, the seeded generator)
// come as some 300 files of a few lines each, and resolving and compiling them one by one was a
// third of the CLI's start-up (`tatra --version`); bundled, they are one more part of dist/cli.js.
const externalButStdlib = {
  name: 'external-but-stdlib',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => (args.path.startsWith('@stdlib/') ? undefined : { path: args.path, external: true }));
  },
};

// The CLI is split: what `tatra serve` and `tatra api` alone need (Fastify, its WebSocket plugin,
// prom-client: some 250 files) is a part of its own (dist/cli-chunks/), imported when one of them
// starts, so every other command starts without them (`tatra tasks list`: 0.57 s before, 0.44 s
// after). A part's name holds its hash: the parts of earlier builds are removed once this one is
// written (not before, so a CLI started meanwhile still finds the parts it was built with).
const CHUNKS = 'dist/cli-chunks';

const [cli] = await Promise.all([
  build({ ...common, entryPoints: { cli: 'electron/cli/index.ts' }, outdir: 'dist', format: 'esm', splitting: true, chunkNames: 'cli-chunks/[name]-[hash]', metafile: true, plugins: [externalButStdlib] }),
  build({ ...common, entryPoints: { main: 'electron/main.ts' }, outdir: 'dist/electron', format: 'esm', plugins: [externalButStdlib] }),
  build({ ...common, entryPoints: { preload: 'electron/preload.ts' }, outfile: 'dist/electron/preload.cjs', format: 'cjs', external: ['electron'] }),
]);

const written = new Set(Object.keys(cli.metafile.outputs));
for (const name of await readdir(CHUNKS)) {
  if (!written.has(join(CHUNKS, name))) await rm(join(CHUNKS, name), { force: true });
}
