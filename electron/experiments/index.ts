// Experiments: grids of evaluation jobs run as one piece of work, resumable after a pause, a crash
// or a SIGKILL. One runner (experiment.ts) claims, walks, pauses and resumes every kind; a kind is a
// definition on it. Built on the jobs (electron/jobs/: the job database, JobManager) and the model
// library (electron/models/: a model file's checks); the API handlers and the CLI use it.
//
//   experiment.ts     ExperimentRunner / ExperimentManager: the one runner, its progress model
//   sweep.ts          sensitivity sweeps: one job per (n, k, seed), shared work, aggregated points
//   sweep-metrics.ts  a sweep's points read off its jobs' rows; sweep-backends.ts: shared evaluations
//   compare.ts        generator × evaluator comparisons: one job per pair, generator-major
//   compare-plan.ts   what a comparison will cost before it runs
export { ExperimentManager, ExperimentRunner, spentIn, type ExperimentDefinition, type ExperimentRunnerOptions, type ExperimentStatus, type CellState } from './experiment';
export { SweepManager, sweepCells, sweepDeterministic, type SweepManagerOptions, type StoredSweep, type StoredSweepSpec, type SweepCellKey } from './sweep';
export { aggregateSweep, meanStd, scoreUpTo, pointCost, costIndex, evaluationCallsUpTo, sweepPointsCsv, type SweepCell, type SweepAggregate, type CostIndex } from './sweep-metrics';
export { sweepBackend, evaluationCacheKey, type EvaluationStore } from './sweep-backends';
export { checkComparisonInputs, newComparisonResult, orderPairs, ComparisonManager, type ComparisonManagerOptions, type PairCell, type StoredComparison, type StoredComparisonSpec } from './compare';
export { planComparison } from './compare-plan';
