// A model that cannot do the job is named as such where it is chosen: a base model (a GGUF with no
// chat template: the real stories260K) gets a chip in the picker's list and a warning under the
// field once picked. It adds that model to its worker's library and takes it out afterwards.
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { callApi, expect, openApp, shot, test } from './fixtures';

const stories = resolve(dirname(fileURLToPath(import.meta.url)), '../../shared/models/stories260K.gguf');

test.afterAll(async () => {
  await callApi('models.remove', { path: stories }).catch(() => undefined);
});

test('a base model is marked in the picker and warned about once chosen', async ({ page, server }) => {
  test.skip(!existsSync(stories), `${stories} is absent: the real base model is read from the models beside the checkout`);
  await callApi('models.addFile', { path: stories });
  await openApp(page, '#/classify');
  const picker = page.getByTestId('classify-generator');
  await expect(page.getByTestId('no-chat-template')).toHaveCount(0);
  await picker.fill('stories');
  // The search matches it by its path; it is the only match.
  const option = page.getByTestId('model-options').getByRole('option');
  await expect(option).toHaveCount(1);
  await expect(option).toContainText('no chat template');
  await shot(page, 'picker-base-model');
  await picker.press('Enter');
  await expect(page.getByTestId('no-chat-template')).toContainText('has no chat template');
  // The instruction-tuned synthetic model (it has the Qwen2 template) clears it.
  await picker.fill(server.model);
  await picker.press('Escape');
  await expect(page.getByTestId('no-chat-template')).toHaveCount(0);
});
