// The error a promise rejects with, for tests that look at it closely; a promise that resolves
// fails the test.
export async function failure(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected a failure');
}
