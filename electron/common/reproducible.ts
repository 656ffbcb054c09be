// One wording for whether a result can be had again (TatraResult.deterministic, a job's and a
// sweep's `deterministic`), shared by the CLI's reports and the app's chips.

export type ReproducibleSubject = 'result' | 'job' | 'sweep';

const AGAIN: Record<ReproducibleSubject, string> = {
  result: 'the same seed, settings and models give this result again',
  job: 'the same job again gives the same rows',
  sweep: 'the same sweep again gives the same points',
};

const NOT_AGAIN: Record<ReproducibleSubject, string> = {
  result: 'a backend (a remote server or a GPU build) does not promise the same result for the same seed',
  job: 'a backend (a remote server or a GPU build) does not promise the same rows for the same seed',
  sweep: 'a backend (a remote server or a GPU build) does not promise the same points for the same seeds',
};

/** A chip's text and its explanation. */
export function reproducibleText(deterministic: boolean, subject: ReproducibleSubject): { short: string; why: string } {
  return deterministic ? { short: 'reproducible', why: AGAIN[subject] } : { short: 'not reproducible', why: NOT_AGAIN[subject] };
}

/** The CLI's report line, e.g. "deterministic: yes (the same job again gives the same rows)". */
export function deterministicLine(deterministic: boolean, subject: ReproducibleSubject): string {
  return `deterministic: ${deterministic ? 'yes' : 'no'} (${reproducibleText(deterministic, subject).why})`;
}
