// Small task definitions for tests that need one without reading tasks/*.json.
import { TaskDefinition } from '../../electron/common/task';

/** Two labels, negative first (the default). */
export const binaryTask = TaskDefinition.parse({
  id: 'bin',
  name: 'Binary',
  kind: 'classification',
  labels: [{ name: 'negative' }, { name: 'positive' }],
  defaultLabel: 'negative',
  instruction: 'Classify.',
  inputName: 'Sentence',
  topics: ['t'],
  preserve: 'sentiment',
  evaluatorMaxTokens: 4,
});
