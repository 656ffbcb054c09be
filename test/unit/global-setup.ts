// vitest globalSetup of the `unit` project: builds the Node faces when they are missing or older
// than their sources (test/helpers/build.ts), so the few unit tests that run the `tatra` CLI to
// the end spawn the built bundle (a second of start-up) rather than its sources through tsx (three).
import { ensureBuilt } from '../helpers/build';

export default async function setup(): Promise<void> {
  await ensureBuilt('node');
}
