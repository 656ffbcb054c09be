// `npm start`: the desktop app when Electron's binary is installed, otherwise browser mode
// (`tatra serve`), which serves the same UI and API on 127.0.0.1 with a token.
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
let electronBinary = null;
try {
  const candidate = require('electron'); // the package exports the binary's path
  if (typeof candidate === 'string' && existsSync(candidate)) electronBinary = candidate;
} catch {
  // Not installed or binary missing: fall back below.
}

const args = process.argv.slice(2);
const child = electronBinary
  ? spawn(electronBinary, ['dist/electron/main.js', ...args], { stdio: 'inherit' })
  : (console.error('Electron binary not installed: starting browser mode instead (tatra serve).'),
    spawn(process.execPath, ['bin/tatra.js', 'serve', ...args], { stdio: 'inherit' }));
child.on('exit', (code) => process.exit(code ?? 0));
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
