// A small sentiment data set for CLI tests: short film reviews, gold "pos"/"neg" alternating.
import { writeFileSync } from 'node:fs';

export const REVIEWS = [
  'a warm, funny and moving film',
  'dull, slow and far too long',
  'the acting is superb',
  'the plot makes no sense at all',
  'a delight from start to finish',
  'I wanted my money back',
  'beautifully shot, with a great score',
  'the dialogue is wooden and flat',
  'an instant classic',
  'a tedious mess',
  'charming and clever',
  'forgettable in every way',
];

/** Writes the first `count` reviews as CSV (columns review, sentiment) with `eol` line ends. */
export function writeReviewsCsv(path: string, count: number, eol = '\n'): void {
  writeFileSync(path, `review,sentiment${eol}` + REVIEWS.slice(0, count).map((t, i) => `"${t}",${i % 2 === 0 ? 'pos' : 'neg'}${eol}`).join(''));
}
