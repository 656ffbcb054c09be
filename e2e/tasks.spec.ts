// Create a task in the Tasks view: validation as you type, saved in the data folder, listed.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { callApi, expect, openApp, shot, test } from './fixtures';
import { accessibilityProblems, lookAt, overflowing } from './look';

test('create a task, validated as you type and saved in the data folder', async ({ page, server }) => {
  await openApp(page);
  await page.getByTestId('nav-tasks').click();
  await expect(page.getByTestId('task-sst2')).toBeVisible();
  await page.getByTestId('task-new').click();

  // A blank form says nothing is wrong until a field is left or Save is pressed.
  const validity = page.getByTestId('task-validity');
  await expect(validity).toHaveCount(0);
  await expect(page.locator('.field-error')).toHaveCount(0);

  await page.getByTestId('task-id').fill('Bad Id');
  await expect(page.getByText('lower-case letters, digits, - and _ only')).toHaveCount(0);
  await page.getByTestId('task-id').blur();
  await expect(page.getByText('lower-case letters, digits, - and _ only')).toBeVisible();
  await page.getByTestId('task-id').fill('sst2');
  await expect(page.getByText('is a built-in task; choose another id')).toBeVisible();
  await page.getByTestId('task-id').fill('e2e-spam');
  await page.getByTestId('task-name').fill('Spam filter');
  await page.getByTestId('task-instruction').fill('Decide whether the message is spam or ham. Answer with one word: spam or ham.');
  await page.getByTestId('task-preserve').fill('whether it is spam');
  await page.getByTestId('label-0-name').fill('ham');
  await page.getByTestId('label-1-name').fill('spam');
  // Save with a problem left: it is said, with the focus on the first field to fix, and nothing is saved.
  await page.getByTestId('task-save').click();
  await expect(validity).toHaveText('2 to fix');
  await expect(page.getByText('label "ham" has no topics and the task has no shared topics')).toBeVisible();
  await expect(page.getByTestId('task-e2e-spam')).toHaveCount(0);
  await page.getByTestId('label-0-style').getByRole('textbox').fill('friendly, personal');
  await page.getByTestId('label-0-style').getByRole('textbox').press('Enter');
  await page.getByTestId('label-1-style').getByRole('textbox').fill('pushy');
  await page.getByTestId('label-1-style').getByRole('textbox').press('Enter');
  await page.getByTestId('task-topics').getByRole('textbox').fill('family, work, prizes');
  await page.getByTestId('task-topics').getByRole('textbox').press('Enter');
  await expect(validity).toHaveText('Valid');
  await page.getByTestId('task-save').click();

  await expect(page.getByTestId('task-e2e-spam')).toBeVisible();
  await expect(page.getByText('Saved task "Spam filter"')).toBeVisible();
  await lookAt(page, 'tasks');
  const file = join(server.dataDir, 'tasks', 'e2e-spam.json');
  expect(existsSync(file)).toBe(true);
  const saved = JSON.parse(readFileSync(file, 'utf8')) as { labels: { name: string; style: string[] }[]; topics: string[] };
  expect(saved.labels.map((l) => l.name)).toEqual(['ham', 'spam']);
  expect(saved.labels[0]!.style).toEqual(['friendly', 'personal']);
  expect(saved.topics).toEqual(['family', 'work', 'prizes']);
  const entry = await callApi<{ source: string }>('tasks.get', { id: 'e2e-spam' });
  expect(entry.source).toBe('user');

  // It survives a reload and is offered in Classify.
  await page.reload();
  await page.getByTestId('nav-classify').click();
  await expect(page.getByTestId('classify-task').locator('option', { hasText: 'Spam filter' })).toHaveCount(1);
});

test('the sidebar folds to a rail of icons on a narrow window, keeps its names for assistive technology, and stays folded after a reload', async ({ page }) => {
  await page.setViewportSize({ width: 1024, height: 700 });
  await openApp(page, '#/tasks');
  const main = page.locator('main.main');
  const before = (await main.boundingBox())!.width;
  await page.getByTestId('sidebar-toggle').click();
  await expect(page.getByTestId('sidebar-toggle')).toHaveAttribute('aria-expanded', 'false');
  const after = (await main.boundingBox())!.width;
  expect(after - before, 'the page gains the width the sidebar gave up').toBeGreaterThan(60);
  // Icons only on screen, the view names still there for a screen reader and a tooltip.
  await expect(page.getByTestId('nav-evaluate')).toHaveAccessibleName('Evaluate');
  await expect(page.getByTestId('nav-evaluate').locator('.nav-name')).toBeHidden();
  await page.getByRole('button', { name: 'Evaluate' }).click();
  await expect(page.getByRole('heading', { level: 1, name: 'Evaluate' })).toBeVisible();
  await shot(page, 'sidebar-collapsed-narrow');
  expect(await overflowing(page)).toEqual([]);
  expect(await accessibilityProblems(page)).toEqual([]);
  await page.reload();
  await expect(page.getByTestId('sidebar-toggle')).toHaveAttribute('aria-expanded', 'false');
  await page.getByTestId('sidebar-toggle').click();
  await expect(page.getByTestId('nav-evaluate').locator('.nav-name')).toBeVisible();
});
