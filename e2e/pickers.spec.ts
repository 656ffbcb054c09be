// The model pickers of Classify and Evaluate say how the chosen model fits the machine running
// TATRA, as the Models view does (one component, FitBadge): the fit badge beside the model's
// facts, the estimate's details in its tooltip, and where the layers go in words when some are
// kept off a GPU that is there. The facts are the server's: its own GPU, or a stand-in when the
// run sets TATRA_GPU_STANDIN (docs/gpu.md), under which the offload sentence shows.
import type { FitEstimate } from '../electron/common/contract/models';
import { callApi, expect, openApp, test } from './fixtures';
import { accessibilityProblems, lookAt } from './look';

const literally = (text: string) => new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));

const VIEWS = [
  ['classify', ['classify-generator']],
  ['evaluate', ['eval-generator', 'eval-evaluator']],
] as const;

for (const [view, fields] of VIEWS) {
  test(`the ${view} view's pickers say how the chosen model fits, and where its layers go`, async ({ page, server }) => {
    const fit = await callApi<FitEstimate>('models.fit', { path: server.model });
    const offGpu = fit.fits && fit.gpu.backend !== 'cpu' && fit.plan !== 'gpu';
    await openApp(page, `#/${view}`);
    for (const id of fields) {
      await page.getByTestId(id).fill(server.model);
      await page.getByTestId(id).press('Escape');
      const hint = page.getByTestId(`${id}-picker`).locator('.field-hint');
      const badge = hint.getByTestId('fit-badge');
      await expect(badge).toHaveAttribute('data-plan', fit.plan);
      await expect(badge).toHaveText(fit.fits ? /^fits · .+ · [\d.]+ [KMG]?i?B$/ : /^won't fit · /);
      await expect(badge).toHaveAttribute('title', literally(fit.offload));
      if (offGpu) await expect(hint.getByTestId('fit-offload')).toHaveText(fit.offload);
      else await expect(hint.getByTestId('fit-offload')).toHaveCount(0);
    }
    await lookAt(page, `pickers-${view}`);
    // Open, under a field near the window's right edge too, the list stays inside the window.
    for (const size of [{ width: 1440, height: 900 }, { width: 1024, height: 700 }]) {
      await page.setViewportSize(size);
      const last = page.getByTestId(fields[fields.length - 1]!);
      await last.press('ArrowDown');
      const box = await page.getByTestId('model-options').boundingBox();
      expect(box, 'the list is open').not.toBeNull();
      expect(box!.x, `${size.width}: the list starts inside the window`).toBeGreaterThanOrEqual(0);
      expect(box!.x + box!.width, `${size.width}: the list ends inside the window`).toBeLessThanOrEqual(size.width);
      // The open list is a listbox of options only, beside its empty line and its way to Models.
      expect(await accessibilityProblems(page), `${size.width}: the open list`).toEqual([]);
      await last.press('Escape');
    }
  });
}
