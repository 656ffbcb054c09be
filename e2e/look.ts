// How a view looks, checked the same way everywhere: an automated accessibility scan (axe-core,
// WCAG 2.1 A and AA, contrast included), a measure of anything that overflows its box, and
// screenshots at the two window sizes people use (1440×900, a 1024×700 laptop) in both themes.
import type { Page } from '@playwright/test';
import axe, { type Result } from 'axe-core';
import { chartsDrawn, expect, nextFrame } from './fixtures';

export const SIZES = [
  { name: 'wide', width: 1440, height: 900 },
  { name: 'narrow', width: 1024, height: 700 },
] as const;
export const THEMES = ['light', 'dark'] as const;

const WCAG_AA = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];

/**
 * Serious and critical axe violations on the page as it is now, one line each (empty when none).
 * axe-core is put into the page once per document and run there: @axe-core/playwright sends its
 * 500 kB source twice per scan and finishes each scan in a fresh page, about 2 s a scan on this
 * machine against 0.3 s (the app has no frames, which is all that wrapper adds).
 */
export async function accessibilityProblems(page: Page): Promise<string[]> {
  // A string evaluated through the DevTools protocol, as that wrapper does: not subject to the page's CSP.
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(axe.source);
  const violations = await page.evaluate(
    async (tags) => (await (window as unknown as { axe: typeof axe }).axe.run(document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] })).violations,
    WCAG_AA,
  );
  return violations
    .filter((v: Result) => v.impact === 'serious' || v.impact === 'critical')
    .map((v: Result) => `${v.impact} ${v.id}: ${v.help} (${v.nodes.length}× e.g. ${v.nodes[0]?.target.join(' ') ?? '?'}${v.nodes[0]?.failureSummary ? `: ${v.nodes[0].failureSummary.replace(/\s+/g, ' ')}` : ''})`);
}

/**
 * Elements that stick out: the page wider than the window, or an element past the right edge of
 * its card (or of the window), or text clipped by its own box. Content inside a scroll container
 * (a wide table in its own scrolling wrapper) and text cut with an ellipsis on purpose are fine.
 */
export async function overflowing(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const out: string[] = [];
    const name = (el: Element) => {
      const id = el.getAttribute('data-testid');
      const cls = typeof el.className === 'string' && el.className ? `.${el.className.trim().split(/\s+/).join('.')}` : '';
      return `${el.tagName.toLowerCase()}${id ? `[data-testid=${id}]` : ''}${cls} "${(el.textContent ?? '').trim().slice(0, 40)}"`;
    };
    const doc = document.documentElement;
    if (doc.scrollWidth > window.innerWidth + 1) {
      // Name what sticks out: the outermost elements past the window's right edge.
      const past = Array.from(document.querySelectorAll('body *')).filter((el) => el.getBoundingClientRect().right > window.innerWidth + 1 && !(el.parentElement && el.parentElement.getBoundingClientRect().right > window.innerWidth + 1));
      out.push(`the page is ${doc.scrollWidth}px wide in a ${window.innerWidth}px window: ${past.slice(0, 3).map(name).join('; ')}`);
    }
    const scrolls = (el: Element) => {
      const s = getComputedStyle(el);
      return ['auto', 'scroll'].includes(s.overflowX) || ['auto', 'scroll'].includes(s.overflowY);
    };
    for (const el of Array.from(document.querySelectorAll('body *'))) {
      if (el.closest('svg, .sr-only, [aria-hidden="true"]') || !(el instanceof HTMLElement)) continue;
      const r = el.getBoundingClientRect();
      if (r.width === 0 || r.height === 0) continue;
      let p = el.parentElement;
      let inScroller = false;
      while (p && p !== document.body) {
        if (scrolls(p)) inScroller = true;
        p = p.parentElement;
      }
      if (inScroller) continue;
      const box = el.parentElement?.closest('.card, .sidebar, .notice, .picker-pop');
      const limit = box ? box.getBoundingClientRect().right : window.innerWidth;
      if (r.right > limit + 1) out.push(`${name(el)} ends at ${Math.round(r.right)}px, past ${Math.round(limit)}px`);
      const s = getComputedStyle(el);
      if (s.overflowX === 'hidden' && s.textOverflow !== 'ellipsis' && el.scrollWidth > el.clientWidth + 1 && el.children.length === 0) {
        out.push(`${name(el)} is clipped: ${el.scrollWidth}px of text in ${el.clientWidth}px`);
      }
    }
    return out;
  });
}

/**
 * For each size and theme: a full-page screenshot into e2e/artifacts/<name>-<size>-<theme>.png,
 * and the checks (no serious or critical accessibility problem, nothing overflowing). The theme
 * follows the system setting here (the app's default), so nothing is saved on the server.
 */
export async function lookAt(page: Page, name: string, opts: { before?: () => Promise<void> } = {}): Promise<void> {
  const problems: string[] = [];
  for (const size of SIZES) {
    await page.setViewportSize({ width: size.width, height: size.height });
    for (const theme of THEMES) {
      await page.emulateMedia({ colorScheme: theme });
      await expect(page.locator('html')).toHaveAttribute('data-theme', theme);
      await opts.before?.();
      // A chart that follows the theme has redrawn by the next frame, before anything is measured.
      await chartsDrawn(page);
      await nextFrame(page);
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.screenshot({ path: `e2e/artifacts/${name}-${size.name}-${theme}.png`, fullPage: true });
      for (const p of await accessibilityProblems(page)) problems.push(`${size.name} ${theme}: ${p}`);
      if (size.name === 'narrow' || theme === 'light') for (const o of await overflowing(page)) problems.push(`${size.name} ${theme}: overflow: ${o}`);
    }
  }
  await page.emulateMedia({ colorScheme: null });
  await page.setViewportSize({ width: 1440, height: 960 });
  expect(problems, `${name}: accessibility and layout`).toEqual([]);
}
