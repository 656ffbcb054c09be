// Which Chromium runs the browser tests, and how: Debian's own (Playwright's browser download is
// not reachable everywhere). A headless run takes Debian's headless shell (apt package
// chromium-headless-shell: the same Chromium, without the windowed browser around the page),
// where it is installed: the full browser in headless mode keeps that machinery busy too, and the
// suite took 5.0 minutes with it against 4.0 with the shell on two busy cores. A headed run
// (--headed, --debug, --ui) needs the full browser, /usr/bin/chromium, as does a machine without
// the shell. TATRA_CHROMIUM names another browser for every run.
import { existsSync } from 'node:fs';

export const FULL_CHROMIUM = '/usr/bin/chromium';
export const HEADLESS_SHELL = '/usr/lib/chromium/chromium-headless-shell';

/** Flags for a browser in a container with no GPU: no sandbox, and nothing it would fetch or sync on its own. */
export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

/**
 * Whether this run shows its browser. Playwright's runner reads --headed, --debug and --ui, then
 * loads this file in each worker without them: the runner's answer reaches the workers through
 * the environment it starts them with (TATRA_E2E_HEADED).
 */
function headed(): boolean {
  if (process.argv.some((a) => a === '--headed' || a === '--debug' || a === '--ui')) process.env.TATRA_E2E_HEADED = '1';
  return process.env.TATRA_E2E_HEADED === '1' || process.env.PWDEBUG !== undefined;
}

/** The browser this run launches. */
export function chromiumPath(): string {
  if (process.env.TATRA_CHROMIUM) return process.env.TATRA_CHROMIUM;
  return !headed() && existsSync(HEADLESS_SHELL) ? HEADLESS_SHELL : FULL_CHROMIUM;
}
