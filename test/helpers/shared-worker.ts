// A setup file of the test projects whose files share a worker's process and module graph
// (isolate: false, vitest.config.ts): a file that leaves the environment, the working folder or
// fake timers changed would change the files that run after it on that worker, in an order that
// varies from run to run. So each file must leave them as it found them, and this fails the file
// that does not, naming what it left.
import { afterAll, beforeAll, expect, vi } from 'vitest';

let env: Record<string, string | undefined> = {};
let cwd = '';

beforeAll(() => {
  env = { ...process.env };
  cwd = process.cwd();
});

afterAll(() => {
  const names = new Set([...Object.keys(env), ...Object.keys(process.env)]);
  const changed = [...names].filter((name) => process.env[name] !== env[name]).map((name) => `${name}: ${env[name] ?? '(unset)'} -> ${process.env[name] ?? '(unset)'}`);
  expect(changed, 'environment variables this file changed and did not put back').toEqual([]);
  expect(process.cwd(), 'the working folder this file changed').toBe(cwd);
  expect(vi.isFakeTimers(), 'fake timers this file left on').toBe(false);
});
