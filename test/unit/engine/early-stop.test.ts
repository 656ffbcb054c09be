// Early decision (issue 9 item 2): once the leader has more votes than the runner-up plus every
// vote still to come, nothing can change the winner. Property tests over random vote sequences
// (a seeded generator, so a failure names the case that broke it), and the wave schedule.
import { describe, expect, it } from 'vitest';
import { seededRandom, tallyVotes } from '../../../electron/engine';
import { runWaves, voteDecided, type Vote, type VoteOptions } from '../../../electron/engine/vote';

/** A random vote: mostly a skewed choice among the labels, sometimes invalid (null) or the abstain label. */
function randomLabel(rand: () => number, labels: readonly string[], skew: number, abstain?: string): string | null {
  const x = rand();
  if (x < 0.05) return null;
  if (abstain !== undefined && x < 0.12) return abstain;
  // Label 0 wins with probability `skew`, the rest share what is left.
  return rand() < skew ? labels[0]! : labels[1 + Math.floor(rand() * (labels.length - 1))]!;
}

describe('voteDecided over random vote sequences', () => {
  const cases: { name: string; opts: VoteOptions; labels: string[] }[] = [
    { name: 'two labels', opts: { labels: ['negative', 'positive'] }, labels: ['negative', 'positive'] },
    { name: 'five labels with a default', opts: { labels: ['a', 'b', 'c', 'd', 'e'], defaultLabel: 'c' }, labels: ['a', 'b', 'c', 'd', 'e'] },
    { name: 'an abstain label', opts: { labels: ['obj', 'subj'], abstainLabel: 'unsure' }, labels: ['obj', 'subj'] },
    { name: 'math answers (no label set)', opts: { labels: [] }, labels: ['42', '7', '3.5', '-1'] },
  ];
  for (const c of cases) {
    it(`${c.name}: whenever it says decided, every completion of the votes gives the same winner`, () => {
      let decidedSomewhere = 0;
      for (let trial = 0; trial < 600; trial++) {
        const rand = seededRandom(1000 + trial);
        const r = 1 + Math.floor(rand() * 15);
        const perRun = 1 + Math.floor(rand() * 6);
        const skew = 0.3 + rand() * 0.7;
        const votes: Vote[] = [];
        for (let run = 0; run < r; run++) for (let variant = 0; variant < perRun; variant++) votes.push({ run, variant, label: randomLabel(rand, c.labels, skew, c.opts.abstainLabel) });
        const full = tallyVotes(votes, c.opts);
        for (let done = 1; done < r; done++) {
          const cast = votes.filter((v) => v.run < done);
          const early = tallyVotes(cast, c.opts);
          if (!voteDecided(early.votes, (r - done) * perRun, c.opts)) continue;
          decidedSomewhere++;
          const context = `trial ${trial}, r=${r}, ${perRun} votes per run, decided after ${done} runs`;
          expect(early.label, context).toBe(full.label);
          expect(early.tieBreak, context).toBe('none');
          // The adversarial completion too: every vote still to come goes to the strongest rival.
          const rival = Object.entries(early.votes).filter(([l]) => l !== early.label && l !== c.opts.abstainLabel).sort((a, b) => b[1] - a[1])[0]?.[0] ?? 'rival-answer';
          const worst = [...cast, ...votes.filter((v) => v.run >= done).map((v) => ({ ...v, label: c.opts.labels.length > 0 && !c.opts.labels.includes(rival) ? c.opts.labels.find((l) => l !== early.label)! : rival }))];
          expect(tallyVotes(worst, c.opts).label, `${context} (adversarial)`).toBe(early.label);
        }
      }
      // The property was exercised, not vacuously true.
      expect(decidedSomewhere).toBeGreaterThan(100);
    });
  }

  it('is exact at the boundary: leader = runner-up + votes to come is not decided (a tie could follow)', () => {
    const opts = { labels: ['a', 'b'] };
    expect(voteDecided({ a: 7, b: 3 }, 4, opts)).toBe(false);
    expect(voteDecided({ a: 8, b: 3 }, 4, opts)).toBe(true);
    expect(voteDecided({ a: 0, b: 0 }, 0, opts)).toBe(false);
    // The abstain label never leads.
    expect(voteDecided({ obj: 1, subj: 0, unsure: 40 }, 2, { abstainLabel: 'unsure' })).toBe(false);
    expect(voteDecided({ obj: 3, subj: 0, unsure: 40 }, 2, { abstainLabel: 'unsure' })).toBe(true);
  });
});

describe('runWaves', () => {
  it('one wave without early stop; with it, first more than half of r, then half of what is left', () => {
    expect(runWaves(15, false)).toEqual([Array.from({ length: 15 }, (_, j) => j)]);
    expect(runWaves(15, true).map((w) => w.length)).toEqual([8, 4, 2, 1]);
    expect(runWaves(3, true)).toEqual([[0, 1], [2]]);
    expect(runWaves(1, true)).toEqual([[0]]);
    expect(runWaves(2, true)).toEqual([[0, 1]]);
    for (let r = 1; r <= 100; r++) expect(runWaves(r, true).flat()).toEqual(Array.from({ length: r }, (_, j) => j));
  });
});
