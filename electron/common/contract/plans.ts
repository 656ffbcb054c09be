// What a run will cost before it starts: the plan shown beside every Start button (Classify,
// Evaluate, Compare, Sweep), the same object `--dry-run --json` prints. Asking for a plan runs
// nothing and loads no model for generation (the tokenizers only).
import type { z } from 'zod';
import { CostPlan, Price } from '../plan';
import { ClassifyStartInput } from './classify';
import { JobStartInput } from './jobs';
import { ComparisonSpec } from './comparisons';
import { SweepStartInput } from './sweeps';
import { method } from './define';

/** Prices every model of the run; default: each remote entry's own price. */
const priced = { price: Price.optional() };

export const plansMethods = {
  'plans.classify': method(ClassifyStartInput.extend(priced), CostPlan),
  'plans.job': method(JobStartInput.extend(priced), CostPlan),
  'plans.sweep': method(SweepStartInput.extend(priced), CostPlan),
  'plans.compare': method(ComparisonSpec.extend(priced), CostPlan),
};

export const plansEvents = {} satisfies Record<string, z.ZodType>;
