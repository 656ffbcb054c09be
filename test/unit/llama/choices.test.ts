// Which grammars count as a fixed set of strings (and so get the biased fast path in LlamaBackend).
import { describe, expect, it } from 'vitest';
import { literalChoices } from '../../../electron/llama/choices';

describe('literalChoices', () => {
  it('expands alternations and sequences of literals', () => {
    expect(literalChoices('root ::= "negative" | "positive"')).toEqual(['negative', 'positive']);
    expect(literalChoices('root ::= " " ("positive" | "negative")')).toEqual([' positive', ' negative']);
    expect(literalChoices('root ::= ("A" | "B") ":" ("x" | "y")')).toEqual(['A:x', 'A:y', 'B:x', 'B:y']);
    expect(literalChoices('root ::= "say \\"hi\\"\\n" | "tab\\t"')).toEqual(['say "hi"\n', 'tab\t']);
    expect(literalChoices('root ::= "a" | "a"')).toEqual(['a']);
  });

  it('refuses anything that is not a finite set of literals', () => {
    expect(literalChoices('root ::= line "\\n" line\nline ::= [^\\n]{1,5}')).toBeNull();
    expect(literalChoices('root ::= [a-z]')).toBeNull();
    expect(literalChoices('root ::= "a"*')).toBeNull();
    expect(literalChoices('root ::= ("a" | "b"')).toBeNull();
    expect(literalChoices('root ::= "" | "b"')).toBeNull();
    expect(literalChoices('other ::= "a"')).toBeNull();
  });
});
