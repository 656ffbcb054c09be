// What sweeps and comparisons share: both are long experiments made of evaluation jobs, one per
// cell of a grid, run one after another and resumed after a stop or a kill
// (electron/experiments/experiment.ts). One progress model for both; their own shapes (sweeps.ts,
// models.ts) extend it.
import { z } from 'zod';

export const ExperimentProgress = z.object({
  /** Cells (jobs) finished. */
  jobsDone: z.number().int(),
  jobsTotal: z.number().int(),
  /** Rows classified over every job (each job classifies every row). */
  rowsDone: z.number().int(),
  rowsTotal: z.number().int(),
  /** Time the jobs spent running, summed. */
  elapsedSeconds: z.number(),
  /** null until a rate is known. */
  etaSeconds: z.number().nullable(),
});
export type ExperimentProgress = z.infer<typeof ExperimentProgress>;
