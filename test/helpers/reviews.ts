// A small sentiment data set for CLI tests: short film reviews, gold positive/negative alternating
// ("pos"/"neg" in the CSV).
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

/**
 * Writes `count` reviews as JSONL in the paper's format (the text as the user's message, the gold
 * label in "solution", as in ../shared/datasets/sst2_test.jsonl), REVIEWS in turn, each numbered so
 * that no two rows are the same text.
 */
export function writeReviewsJsonl(path: string, count: number): void {
  const row = (i: number) => {
    const text = `${REVIEWS[i % REVIEWS.length]!} (${i + 1})`;
    const messages = [
      { role: 'system', content: 'You are a helpful assistant.' },
      { role: 'user', content: text },
      { role: 'assistant', content: String((i + 1) % 2) },
    ];
    return `${JSON.stringify({ messages, solution: i % 2 === 0 ? 'positive' : 'negative' })}\n`;
  };
  writeFileSync(path, Array.from({ length: count }, (_, i) => row(i)).join(''));
}
