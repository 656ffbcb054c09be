// Bundles the Node-side faces with esbuild: the CLI (also `tatra serve`), Electron's main process
// and its preload. Dependencies stay external (node-llama-cpp and better-sqlite3 carry native
// binaries and must be loaded from node_modules); the sandboxed preload is bundled whole as CJS,
// because a sandboxed preload can require nothing but a few Electron modules.
import { build } from 'esbuild';

const common = { bundle: true, platform: 'node', target: 'node20', sourcemap: true, logLevel: 'warning' };

await Promise.all([
  build({ ...common, entryPoints: { cli: 'electron/cli/index.ts' }, outdir: 'dist', format: 'esm', packages: 'external' }),
  build({ ...common, entryPoints: { main: 'electron/main.ts' }, outdir: 'dist/electron', format: 'esm', packages: 'external' }),
  build({ ...common, entryPoints: { preload: 'electron/preload.ts' }, outfile: 'dist/electron/preload.cjs', format: 'cjs', external: ['electron'] }),
]);
