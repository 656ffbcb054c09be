// What a result records about how its outputs were constrained: per role, as the backends say
// they hold the grammars this task uses. The generator's grammars (examples, paraphrases) are
// never a plain label set; the evaluator's is one for classification tasks, not for math.
import type { OutputConstraint } from '../common/tatra';
import type { TaskDefinition } from '../common/task';
import type { TatraBackend } from './backend';
import { evaluationGrammar } from './grammar';
import { literalChoices } from './literal-choices';

export function outputConstraints(task: TaskDefinition, generator: TatraBackend, evaluator: TatraBackend): { generator: OutputConstraint; evaluator: OutputConstraint } {
  const labelSet = literalChoices(evaluationGrammar(task)) !== null;
  return {
    generator: generator.outputConstraint?.grammar ?? 'grammar',
    evaluator: (labelSet ? evaluator.outputConstraint?.choice : evaluator.outputConstraint?.grammar) ?? 'grammar',
  };
}
