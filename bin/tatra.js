#!/usr/bin/env node
// The `tatra` command: a thin launcher for the bundled CLI (npm run build:node writes it).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const cli = fileURLToPath(new URL('../dist/cli.js', import.meta.url));
if (!existsSync(cli)) {
  process.stderr.write('tatra: the CLI is not built yet; run `npm run build:node` first\n');
  process.exit(2);
}
await import(cli);
