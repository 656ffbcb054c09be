// Validation problems in plain words: a field by its name, zod's defaults as sentences, a schema's
// own wording kept, never a dotted path.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { fieldName, plainIssue, plainZodError } from '../../../electron/common/plain-errors';
import { TatraSettings } from '../../../electron/common/tatra';
import { TaskDefinition } from '../../../electron/common/task';

describe('plain errors', () => {
  it('names fields as people do, items counted from one', () => {
    expect(fieldName(['input'])).toBe('the input');
    expect(fieldName(['settings', 'n'])).toBe('paraphrases n');
    expect(fieldName(['labels', 1, 'name'])).toBe("label 2's name");
    expect(fieldName(['urls', 0])).toBe('server URL 1');
    expect(fieldName(['someOddKey'])).toBe('some odd key');
    expect(fieldName([])).toBeNull();
  });

  it("turns zod's defaults into sentences with the numbers a person needs", () => {
    const schema = z.object({ input: z.string().max(10), settings: TatraSettings, urls: z.array(z.string()).min(1) });
    const input = { input: 'x'.repeat(12), settings: { n: 3.5, k: 300, r: 1, seed: 1, scope: 'everywhere' }, urls: [] };
    const message = plainZodError(schema.safeParse(input).error!, input);
    expect(message).toBe('The input is too long: 12 characters; at most 10; Paraphrases n must be a whole number; Examples k must be at most 256 (and 2 more)');
    expect(message).not.toMatch(/settings\.|Too big|expected/);
  });

  it("keeps a schema's own wording and says what is missing", () => {
    const r = TaskDefinition.safeParse({ id: 'Bad Id', kind: 'classification', labels: [{ name: 'a' }, { name: 'A' }], topics: ['x'] });
    const issues = r.error!.issues;
    const byPath = Object.fromEntries(issues.map((i) => [i.path.join('.'), plainIssue(i)]));
    expect(byPath.id).toBe('lower-case letters, digits, - and _ only');
    expect(byPath.name).toBe('is missing');
    const dup = TaskDefinition.safeParse({ id: 'mine', name: 'Mine', kind: 'classification', instruction: 'Say.', inputName: 'Sentence', preserve: 'it', evaluatorMaxTokens: 4, labels: [{ name: 'a' }, { name: 'A' }], topics: ['x'] });
    expect(plainZodError(dup.error!)).toBe("Label 2's name: duplicate label \"A\"");
  });
});
