// A fresh install, as a newcomer meets it: no model, no settings (its project's server starts as a
// fresh install, its models folder empty: e2e/fixtures.ts freshInstall). The welcome card offers a download that fits
// this machine, takes a model already on disk by its path, and the model that arrives is chosen
// as generator and evaluator in every form, also after a reload.
import { callApi, expect, openApp, test } from './fixtures';
import { lookAt } from './look';

test('fresh install: the welcome card offers a download that fits, adds a model by path, and that model is chosen everywhere', async ({ page, server }) => {
  const before = await callApi<{ generator: string | null }>('settings.get');
  expect(before.generator, 'the first-run spec needs a server no spec has used').toBeNull();

  await openApp(page, '#/classify');
  const welcome = page.getByTestId('welcome');
  await expect(welcome).toBeVisible();
  // A download is offered, with how it fits this machine.
  await expect(page.getByTestId('welcome-fit')).toContainText(/needs about .+ of .+ free/);
  await expect(page.getByTestId('welcome-download-button')).toBeEnabled();
  await expect(page.getByTestId('welcome-server')).toContainText('Add a server');
  // The empty form says where a model comes from.
  await expect(page.getByTestId('classify-generator-picker')).toContainText('no model yet');
  await lookAt(page, 'welcome');

  // A model already on disk, by its path.
  await page.getByTestId('welcome-path').fill(server.model);
  await page.getByTestId('welcome-add-button').click();
  await expect(welcome).toHaveCount(0);
  const listing = await callApi<{ models: { path: string; name: string }[] }>('models.list');
  const name = listing.models.find((m) => m.path === server.model)?.name;
  expect(name, 'the model is in the library').toBeTruthy();
  expect(await callApi('settings.get')).toMatchObject({ generator: server.model, evaluator: server.model });

  // Chosen in every form, without visiting Models.
  await expect(page.getByTestId('classify-generator')).toHaveValue(name!);
  for (const [view, fields] of [
    ['evaluate', ['eval-generator', 'eval-evaluator']],
    ['sweep', ['sweep-generator', 'sweep-evaluator']],
  ] as const) {
    await page.getByTestId(`nav-${view}`).click();
    for (const f of fields) await expect(page.getByTestId(f)).toHaveValue(name!);
  }
  await page.getByTestId('nav-compare').click();
  for (const list of ['compare-generators', 'compare-evaluators']) await expect(page.getByTestId(list).getByRole('checkbox', { name })).toBeChecked();

  // A reload reads the choice back from the server.
  await page.reload();
  await page.getByTestId('nav-classify').click();
  await expect(page.getByTestId('classify-generator')).toHaveValue(name!);
  await expect(welcome).toHaveCount(0);
});
