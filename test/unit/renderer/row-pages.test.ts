// The rows table's reads (renderer/src/components/row-pages.ts): a filter changed while the last
// filter's rows are on their way never shows them; a page asked before a read from the top is not
// appended after it; and the job moving on reads again as many rows as were read, so a table
// scrolled down keeps its rows. Each answer is given by the test, in the order it names.
import { describe, expect, it } from 'vitest';
import type { JobRow } from '../../../electron/common/contract/jobs';
import { MAX_READ, PAGE, RowPages, type RowPagesView } from '../../../renderer/src/components/row-pages';

const row = (index: number, tag: string) => ({ index, input: `${tag} ${index}` }) as unknown as JobRow;

/** A reader whose calls wait for the test: each call's range, signal and answer. */
function scripted(tag: string) {
  const calls: { offset: number; limit: number; signal: AbortSignal; answer(total: number): void; fail(e: Error): void }[] = [];
  const shown: RowPagesView[] = [];
  const pages = new RowPages(
    ({ offset, limit }, signal) =>
      new Promise((resolve, reject) =>
        calls.push({ offset, limit, signal, answer: (total) => resolve({ total, rows: Array.from({ length: Math.max(0, Math.min(limit, total - offset)) }, (_, i) => row(offset + i, tag)) }), fail: reject }),
      ),
    (view) => shown.push(view),
    (e) => (e as Error).message,
  );
  return { pages, calls, shown, last: () => shown.at(-1) };
}

describe("the rows table's reads", () => {
  it('another filter while the last one’s rows are on their way: they are dropped, never shown', async () => {
    const all = scripted('all');
    const asked = all.pages.reload();
    // The user picks "Wrong only": the table makes the new filter's reader and disposes the last.
    const wrong = scripted('wrong');
    all.pages.dispose();
    const wrongAsked = wrong.pages.reload();
    expect(all.calls[0]!.signal.aborted).toBe(true);
    wrong.calls[0]!.answer(40);
    await wrongAsked;
    all.calls[0]!.answer(1000);
    await asked;
    expect(all.shown).toEqual([]);
    expect(wrong.last()!.rows.map((r) => r.input)).toEqual(Array.from({ length: 40 }, (_, i) => `wrong ${i}`));
  });

  it('a page asked before a read from the top is not appended after it, nor its failure shown', async () => {
    const s = scripted('all');
    const first = s.pages.reload();
    s.calls[0]!.answer(2000);
    await first;
    const more = s.pages.more();
    expect(s.calls[1]).toMatchObject({ offset: PAGE, limit: PAGE });
    const again = s.pages.reload();
    expect(s.calls[1]!.signal.aborted).toBe(true);
    s.calls[2]!.answer(2000);
    await again;
    s.calls[1]!.fail(new Error('the connection dropped'));
    await more;
    expect(s.last()).toMatchObject({ total: 2000, error: null });
    expect(s.last()!.rows.map((r) => r.index)).toEqual(Array.from({ length: PAGE }, (_, i) => i));
  });

  it('as the job moves on, reads again as many rows as were read (a page at least, what one call returns at most)', async () => {
    const s = scripted('all');
    const answered = async (p: Promise<void>, total: number) => {
      s.calls.at(-1)!.answer(total);
      await p;
    };
    await answered(s.pages.reload(), 10_000);
    expect(s.calls.at(-1)).toMatchObject({ offset: 0, limit: PAGE });
    await answered(s.pages.more(), 10_000);
    await answered(s.pages.more(), 10_000);
    expect(s.pages.loaded).toBe(3 * PAGE);
    await answered(s.pages.reload(), 10_000);
    expect(s.calls.at(-1)).toMatchObject({ offset: 0, limit: 3 * PAGE });
    expect(s.pages.loaded).toBe(3 * PAGE);
    for (let i = 0; i < 20; i++) await answered(s.pages.more(), 10_000);
    await answered(s.pages.reload(), 10_000);
    expect(s.calls.at(-1)).toMatchObject({ offset: 0, limit: MAX_READ });
    // A failure of a read that stands is said; the rows read stay.
    const failing = s.pages.reload();
    s.calls.at(-1)!.fail(new Error('job_unknown'));
    await failing;
    expect(s.last()).toMatchObject({ error: 'job_unknown' });
    expect(s.last()!.rows).toHaveLength(MAX_READ);
  });

  it('a page is not asked twice while one is on its way', async () => {
    const s = scripted('all');
    const first = s.pages.reload();
    void s.pages.more();
    expect(s.calls).toHaveLength(1);
    s.calls[0]!.answer(1000);
    await first;
    void s.pages.more();
    void s.pages.more();
    expect(s.calls).toHaveLength(2);
  });
});
