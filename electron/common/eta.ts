// Time left for long work, said only once it can be said honestly. Work measured in model calls
// arrives unevenly (a job loads its models, writes examples, then settles into rows), so the rate
// over the whole run so far misleads early on: an ETA is given only once the recent rate agrees
// with the rate just before it, and then the rate over most of the run (rateShare) is used.
// common/: no Node, no DOM.

export interface EtaOptions {
  /** Stability is judged over windows of this share of the time since the first unit (default 0.5: with rows taking seconds each, several cycles of them, not a part of one)… */
  windowShare?: number;
  /** …and never less than this, in ms (default 2000). */
  minWindowMs?: number;
  /**
   * Once stable, the rate is read over this share of the time since the first unit (default
   * 0.75): the longer the stretch, the less a run of slow or fast units in it moves the ETA, the
   * later a change of pace shows (a stable rate is the premise of a point ETA).
   */
  rateShare?: number;
  /** How far the recent rate may stray from the one before it and still count as stable (default 0.25). */
  tolerance?: number;
  /** Units that must be done before any ETA (default 8). */
  minUnits?: number;
}

interface Sample {
  t: number;
  /** Units done so far, of each kind. */
  done: readonly number[];
}

/**
 * Observes a count of done units over time; `etaSeconds(remaining)` is null until the rate is
 * stable, then the time `remaining` units take at the rate (over rateShare of the run). Once given, an ETA is kept
 * (at the latest rate) rather than blinking out when a burst of work lands.
 *
 * Units may be of several kinds (a job's generator and evaluator calls) counted apart and
 * weighed by what each costs (`weigh`): the weights can be learnt as the work goes on, and every
 * rate is then read with the latest ones, so the time before a weight was known is measured in
 * the same units as the time after it (a count weighted as it came would change units part-way).
 */
export class EtaEstimator {
  private readonly samples: Sample[] = [];
  private weights: readonly number[] = [];
  private stable = false;
  private readonly windowShare: number;
  private readonly rateShare: number;
  private readonly minWindowMs: number;
  private readonly tolerance: number;
  private readonly minUnits: number;

  constructor(opts: EtaOptions = {}) {
    this.windowShare = opts.windowShare ?? 0.5;
    this.rateShare = opts.rateShare ?? 0.75;
    this.minWindowMs = opts.minWindowMs ?? 2000;
    this.tolerance = opts.tolerance ?? 0.25;
    this.minUnits = opts.minUnits ?? 8;
  }

  /**
   * `done`: units done so far (never decreasing; a resumed job starts high), one count or one per
   * kind; `t`: ms (Date.now()).
   */
  observe(done: number | readonly number[], t: number): void {
    const counts = typeof done === 'number' ? [done] : [...done];
    const last = this.samples.at(-1);
    if (last && !counts.some((c, i) => c > (last.done[i] ?? 0))) return;
    // The first observation only sets where the count started: the clock starts at the first
    // unit, since loading a model is not the rate of the work.
    this.samples.push({ t, done: counts });
    if (this.samples.length > 4096) this.samples.splice(1, this.samples.length - 2048);
  }

  /** When the count last moved (ms), or null before any observation. */
  lastMoved(): number | null {
    return this.samples.at(-1)?.t ?? null;
  }

  /** What a unit of each kind weighs (1 where not given), for every rate read from now on. */
  weigh(weights: readonly number[]): void {
    this.weights = [...weights];
  }

  /** A sample's units done, weighed. */
  private work(s: Sample): number {
    let sum = 0;
    for (let i = 0; i < s.done.length; i++) sum += s.done[i]! * (this.weights[i] ?? 1);
    return sum;
  }

  /**
   * Units per ms between `from` and `to` (ms), measured between samples: from the last one at or
   * before `from` (or the first) to the last one at or before `to`, which must lie after `from`;
   * null when nothing moved. Between samples, not between the bounds: work that lands in steps
   * (a burst of evaluations, a slow paraphrase call) is then measured step to step, not as a
   * sawtooth that rises and falls with the time since the last step.
   */
  private rateBetween(from: number, to: number): number | null {
    let a = this.samples[0]!;
    let b: Sample | null = null;
    for (const s of this.samples) {
      if (s.t > to) break;
      if (s.t <= from) a = s;
      b = s;
    }
    if (!b || b.t <= from || b.t <= a.t || this.work(b) <= this.work(a)) return null;
    return (this.work(b) - this.work(a)) / (b.t - a.t);
  }

  /** The rate (units per second, over rateShare of the run) once stable, else null. */
  rate(now: number): number | null {
    const first = this.samples[0];
    const last = this.samples.at(-1);
    if (!first || !last || this.work(last) - this.work(first) < this.minUnits) return null;
    const elapsed = now - first.t;
    const window = Math.max(this.minWindowMs, elapsed * this.windowShare);
    const recent = this.rateBetween(now - window, now);
    // Nothing done in the recent window: the whole run's rate up to now, the stall included.
    if (recent === null) return this.stable && now > first.t ? ((this.work(last) - this.work(first)) / (now - first.t)) * 1000 : null;
    if (!this.stable) {
      // Stable once the time before the recent window (up to a window of it, at least half the
      // shortest window) was worked through at nearly the same rate.
      if (elapsed < window + this.minWindowMs / 2) return null;
      const before = this.rateBetween(Math.max(first.t, now - 2 * window), now - window);
      if (before === null || Math.abs(recent - before) > this.tolerance * Math.max(recent, before)) return null;
      this.stable = true;
    }
    return (this.rateBetween(now - Math.max(this.minWindowMs, elapsed * this.rateShare), now) ?? recent) * 1000;
  }

  /** Seconds for `remaining` units at the rate; 0 when nothing remains; null while not known honestly. */
  etaSeconds(remaining: number, now: number): number | null {
    if (remaining <= 0) return 0;
    const rate = this.rate(now);
    return rate ? remaining / rate : null;
  }

  /**
   * The time left as a range: while the rate is not stable yet, from the fastest to the slowest
   * of the rates seen (over the recent window, the window before it and the whole run since the
   * first unit); once stable, the point estimate as both ends. Null before `minUnits` are done or
   * while nothing can be measured; {0, 0} when nothing remains.
   */
  etaRange(remaining: number, now: number): { min: number; max: number } | null {
    if (remaining <= 0) return { min: 0, max: 0 };
    const point = this.etaSeconds(remaining, now);
    if (point !== null) return { min: point, max: point };
    const first = this.samples[0];
    const last = this.samples.at(-1);
    if (!first || !last || this.work(last) - this.work(first) < this.minUnits) return null;
    const elapsed = now - first.t;
    const window = Math.max(this.minWindowMs, elapsed * this.windowShare);
    const rates = [this.rateBetween(first.t, now), this.rateBetween(now - window, now), this.rateBetween(now - 2 * window, now - window)].filter((r): r is number => r !== null && r > 0);
    if (rates.length === 0) return null;
    return { min: remaining / Math.max(...rates) / 1000, max: remaining / Math.min(...rates) / 1000 };
  }
}
