// Early decision (docs/method.md §10): once the leader has more votes than the runner-up plus every
// vote still to come, nothing can change the winner. Property tests over random vote sequences
// (a seeded generator, so a failure names the case that broke it), then classify end to end on a
// scripted backend: the early label always equals the full pipeline's, and the saving is counted.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { classify, seededRandom, tallyVotes } from '../../../electron/engine';
import { loadBuiltInTasks } from '../../../electron/tasks';
import { runWaves, voteDecided, type Vote, type VoteOptions } from '../../../electron/engine/vote';
import { TatraResult, type TatraSettings } from '../../../electron/common/tatra';
import { ScriptedBackend, politeScript, requestStage } from '../../helpers/scripted-backend';

const tasks = new Map((await loadBuiltInTasks(join(import.meta.dirname, '../../../tasks'))).map((t) => [t.id, t]));

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

describe('classify with early stop (scripted backend)', () => {
  const sst2 = tasks.get('sst2')!;
  const base: TatraSettings = { n: 5, k: 4, r: 15, seed: 3, scope: 'run' };

  it('unanimous votes: decided after 8 of 15 runs, the same label as the full vote, the saving counted', async () => {
    const full = new ScriptedBackend(politeScript({ firstLabel: 'positive' }));
    const early = new ScriptedBackend(politeScript({ firstLabel: 'positive' }));
    const all = await classify({ task: sst2, input: 'a fine film', settings: base, generator: full, evaluator: full });
    const cut = await classify({ task: sst2, input: 'a fine film', settings: { ...base, earlyStop: true }, generator: early, evaluator: early });
    expect(() => TatraResult.parse(cut)).not.toThrow();
    expect(all.decidedEarly).toBe(false);
    expect(all.votesCast).toBe(90);
    expect(all.callsSaved).toBe(0);
    expect(cut.label).toBe(all.label);
    expect(cut.decidedEarly).toBe(true);
    expect(cut.runs.map((r) => r.run)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(cut.votesCast).toBe(48);
    expect(cut.votes).toEqual({ negative: 0, positive: 48 });
    expect(cut.confidence).toBe(1);
    // 7 runs not launched, each 2 example calls + 1 paraphrase call + 6 evaluations.
    expect(cut.callsSaved).toBe(7 * 9);
    expect(full.requests.length - early.requests.length).toBe(cut.callsSaved);
    // Runs go in waves: examples and paraphrases of runs 0-7 in one batch each, then their evaluations.
    expect(early.batches.map((b) => [b.length, requestStage(b[0]!)])).toEqual(expect.arrayContaining([[16, 'examples'], [8, 'paraphrases'], [48, 'evaluation']]));
    expect(early.batches).toHaveLength(3);
    // The runs done are the very runs of the full pipeline (same seeds, same prompts).
    expect(cut.runs).toEqual(all.runs.slice(0, 8));
    expect(cut.deterministic).toBe(true);
  });

  it('random evaluator answers: the early label is always the full pipeline\'s, and votes cast plus saved add up', async () => {
    let decided = 0;
    for (let trial = 0; trial < 40; trial++) {
      const rand = seededRandom(77 + trial);
      const skew = 0.5 + rand() * 0.5;
      const answers = new Map<string, string>();
      // A fixed answer per evaluated prompt (run examples + candidate), so both pipelines see the same votes.
      const script = politeScript({
        answer: (_candidate, req) => {
          if (!answers.has(req.prompt.user)) answers.set(req.prompt.user, rand() < skew ? 'positive' : 'negative');
          return answers.get(req.prompt.user)!;
        },
      });
      const settings: TatraSettings = { ...base, r: 1 + Math.floor(rand() * 12), n: Math.floor(rand() * 4), seed: trial };
      const withStop = new ScriptedBackend(script);
      const cut = await classify({ task: sst2, input: `input ${trial}`, settings: { ...settings, earlyStop: true }, generator: withStop, evaluator: withStop });
      const fullBackend = new ScriptedBackend(script);
      const all = await classify({ task: sst2, input: `input ${trial}`, settings, generator: fullBackend, evaluator: fullBackend });
      expect(cut.label, `trial ${trial}`).toBe(all.label);
      expect(cut.votesCast).toBe(cut.runs.length * (settings.n + 1));
      if (cut.decidedEarly) {
        decided++;
        expect(cut.runs.length).toBeLessThan(settings.r);
        expect(cut.callsSaved).toBe((settings.r - cut.runs.length) * (2 + (settings.n > 0 ? 1 : 0) + settings.n + 1));
      } else {
        expect(cut.runs.length).toBe(settings.r);
        expect(cut.callsSaved).toBe(0);
      }
    }
    expect(decided).toBeGreaterThan(5);
  });

  it('a split vote is never cut short, and a backend that does not promise determinism makes the result say so', async () => {
    const backend = new ScriptedBackend(politeScript({ answer: (c) => (c.startsWith('Paraphrase') ? 'negative' : 'positive') }), { deterministic: false });
    const result = await classify({ task: sst2, input: 'mixed', settings: { ...base, n: 1, r: 5, earlyStop: true }, generator: backend, evaluator: backend });
    expect(result.decidedEarly).toBe(false);
    expect(result.runs).toHaveLength(5);
    expect(result.deterministic).toBe(false);
  });
});
