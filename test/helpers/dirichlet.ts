// The confident early stop's own model of the votes (docs/method.md §10): label shares drawn from
// a uniform Dirichlet prior, then independent votes from those shares. The rule's tests and
// bench/early-stop-model.ts simulate it with these two functions.

/** θ ~ Dirichlet(1, …, 1): normalised standard exponentials. */
export function uniformDirichlet(rand: () => number, k: number): number[] {
  const g = Array.from({ length: k }, () => -Math.log(1 - rand()));
  const sum = g.reduce((a, b) => a + b, 0);
  return g.map((x) => x / sum);
}

/** One vote: the index of the label drawn with probabilities `shares`. */
export function draw(rand: () => number, shares: readonly number[]): number {
  let u = rand();
  for (let i = 0; i < shares.length; i++) {
    u -= shares[i]!;
    if (u < 0) return i;
  }
  return shares.length - 1;
}
