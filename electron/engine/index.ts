// The TATRA engine (docs/method.md §1–§10): a plain library every face imports (CLI, jobs, API, Electron main).
// It knows only its backend interface (./backend); tasks are data (common/task.ts), read from
// disk by electron/tasks.

export type { ChatPrompt, GenerateRequest, GenerateResult, TatraBackend } from './backend';
export { ContextOverflowError } from './backend';

// The method.
export { classify, zeroShot, predictionLabel, PARAPHRASE_SAMPLING, type ClassifyOptions, type ZeroShotResult } from './classify';
export {
  generateRunExamples,
  generateExamplesForRuns,
  emitExampleEvents,
  exampleGroups,
  EXAMPLE_SAMPLING,
  type RunExamples,
  type GenerateRunExamplesOptions,
} from './examples';

// Generator-output cache.
export { type GenerationCache, type GenerationCacheKeyParts, MemoryGenerationCache, generationCacheKey, taskContentHash, PROMPT_VERSION } from './cache';

// Pieces, exported for tests, the jobs module and the UI's previews.
export { perLabelCounts, exampleShapes, exampleCalls, SENTENCE_COUNT_CYCLE, type ExampleShape, type LabelCall } from './label-split';
export { examplePrompt, paraphrasePrompt, evaluationPrompt, evaluationPrefix, evaluationSuffix, evaluationSystem, formatExample } from './prompts';
export {
  exampleGrammar,
  exampleMaxTokens,
  exampleTextLimit,
  paraphraseGrammar,
  paraphraseLineLimit,
  evaluationGrammar,
  mathReasoningLimit,
  finalAnswerGrammar,
  FINAL_ANSWER_MAX_TOKENS,
  gbnfLiteral,
} from './grammar';
export {
  parseExampleBlocks,
  validateExamples,
  cleanParaphrases,
  padParaphrases,
  mapLabel,
  quoteSafe,
  stripQuotes,
  hasAllOptions,
  answerNameOf,
  emptyFilterCounts,
  addFilterCounts,
  totalFiltered,
  type LabelOutput,
  type ValidatedExamples,
  type ParsedBlock,
} from './parse';
export { extractFinalAnswer, normaliseMathAnswer, mathAnswersEqual, lenientMathCorrect, strictMathCorrect, numericValue } from './math';
export { tallyVotes, taskVoteOptions, voteDecided, runWaves, firstOriginal, type Vote, type VoteOptions, type VoteOutcome, type TieBreak } from './vote';
export { changeProbability, earlyStopRule, CONFIDENT_PRIOR, type EarlyStopRule } from './confident';
export { stopLimit, stopRisk, type StopLimit, type StopSchedule } from './confident-limit';
export { seededRandom, seededShuffle } from './rng';
export { contentHash, stableStringify } from './hash';

// Plans: what a run will cost before it starts.
export {
  CostLedger,
  PLAN_STAGES,
  fewestRuns,
  planBaseline,
  planExamples,
  planInput,
  planStage,
  type GeneratedLengths,
  type PlanContext,
  type PlannedModel,
  type PlanStage,
  type PromptCounter,
  type Span,
  type StageTotals,
} from './cost';
