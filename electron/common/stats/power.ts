// How many rows a comparison needs before it can tell two pairings apart (docs/method.md §16): the
// sample size of McNemar's test at a power (Connor 1987), from how often the two disagree. Two
// pairings that are right and wrong on the same rows differ only where they disagree, so a
// difference δ needs fewer rows the less they disagree: n = (z₁₋α/₂·√ψ + z₁₋β·√(ψ − δ²))² / δ²,
// ψ the share of rows where exactly one is right.
import { zFor } from './wilson';

export const POWER = 0.8;
/**
 * Assumed share of rows where two pairings disagree (one right, the other wrong) when nothing was
 * measured: about what two classifiers near 85-90 % accuracy with independent errors show (2·p·(1 − p)).
 */
export const ASSUMED_DISAGREEMENT = 0.2;

export interface PowerOptions {
  level?: number;
  power?: number;
}

function zPower(power: number): number {
  // The one-sided quantile at the power: zFor takes a two-sided level.
  return zFor(2 * power - 1);
}

/** Rows needed to detect a difference `delta` (0..1) at the power, given a disagreement share; null when delta exceeds it (impossible). */
export function rowsNeeded(delta: number, disagreement: number, options: PowerOptions = {}): number | null {
  const d = Math.abs(delta);
  if (d <= 0 || disagreement <= 0 || d > disagreement) return null;
  const za = zFor(options.level ?? 0.95);
  const zb = zPower(options.power ?? POWER);
  return Math.ceil((za * Math.sqrt(disagreement) + zb * Math.sqrt(disagreement - d * d)) ** 2 / (d * d));
}

/**
 * The smallest difference `rows` rows detect at the power, given a disagreement share (the
 * difference where rowsNeeded comes down to `rows`); null when no difference up to the
 * disagreement itself is detectable with so few rows.
 */
export function detectableDifference(rows: number, disagreement: number, options: PowerOptions = {}): number | null {
  if (rows <= 0 || disagreement <= 0) return null;
  if ((rowsNeeded(disagreement, disagreement, options) ?? Infinity) > rows) return null;
  let lo = 0;
  let hi = disagreement;
  for (let i = 0; i < 60; i++) {
    const mid = (lo + hi) / 2;
    if ((rowsNeeded(mid, disagreement, options) ?? Infinity) <= rows) hi = mid;
    else lo = mid;
  }
  return hi;
}

/** The disagreement two pairings would show if their errors were independent, at accuracies a and b. */
export function independentDisagreement(a: number, b: number = a): number {
  return a * (1 - b) + b * (1 - a);
}
