// The Evaluate results' warning for a model that gave one answer to every row: when it is said
// (8 or more scored rows, one predicted column, gold with 2 or more labels) and when it is not.
import { describe, expect, it } from 'vitest';
import { oneAnswerForEveryRow } from '../../../renderer/src/views/EvaluateView';

const confusion = (matrix: number[][], predicted = ['negative', 'positive', '(none)']) => ({ labels: ['negative', 'positive'], predicted, matrix });

describe('oneAnswerForEveryRow', () => {
  it('names the one answer and how many gold labels the rows have', () => {
    expect(oneAnswerForEveryRow({ scored: 8, confusion: confusion([[0, 4, 0], [0, 4, 0]]) })).toEqual({ label: 'positive', goldLabels: 2 });
  });
  it('counts "no valid vote" as an answer of its own', () => {
    expect(oneAnswerForEveryRow({ scored: 10, confusion: confusion([[0, 0, 5], [0, 0, 5]]) })).toEqual({ label: '(none)', goldLabels: 2 });
    expect(oneAnswerForEveryRow({ scored: 10, confusion: confusion([[0, 4, 1], [0, 5, 0]]) })).toBeNull();
  });
  it('says nothing under 8 scored rows, with two answers, or when the gold has one label', () => {
    expect(oneAnswerForEveryRow({ scored: 7, confusion: confusion([[0, 3, 0], [0, 4, 0]]) })).toBeNull();
    expect(oneAnswerForEveryRow({ scored: 8, confusion: confusion([[1, 3, 0], [0, 4, 0]]) })).toBeNull();
    expect(oneAnswerForEveryRow({ scored: 8, confusion: confusion([[0, 0, 0], [0, 8, 0]]) })).toBeNull();
    expect(oneAnswerForEveryRow(undefined)).toBeNull();
  });
});
