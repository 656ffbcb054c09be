// A remote model in browser mode: the test starts a real llama-server (built from the llama.cpp
// source node-llama-cpp ships, tools/build-llama-server.sh) on the tiny synthetic model, adds it
// in the Models page (probe first: kind, version, models, constrained output, context), then
// classifies through it from the Classify page by picking remote:NAME.
import { startLlamaServer, type RunningLlamaServer } from '../test/helpers/llama-server';
import { politeScript } from '../test/helpers/scripted-backend';
import { chatCompletion, fakeServer, json, type RecordedRequest } from '../test/unit/remote/fake-server';
import { callApi, expect, fillClassify, openApp, serverInfo, shot, test } from './fixtures';

let llama: RunningLlamaServer | undefined;

test.beforeAll(async () => {
  // Building llama-server on a fresh machine takes minutes; once built this is a second or two.
  test.setTimeout(1_200_000);
  llama = await startLlamaServer({ model: serverInfo().model, parallel: 2, threads: 1, alias: 'tiny' });
});

test.afterAll(async () => {
  await llama?.stop();
  await callApi('models.remote.remove', { name: 'e2e-llama' }).catch(() => undefined);
});

test('add a remote model (probed) and classify through it', async ({ page }) => {
  const url = llama!.url;
  await openApp(page, '#/models');
  const card = page.getByTestId('remote-card');
  await expect(card).toContainText('Remote models');
  await page.getByTestId('remote-urls').fill(url);
  // A server is probed before its model id is known: the ids it serves are listed to pick from.
  await page.getByTestId('remote-probe-btn').click();
  const probe = page.getByTestId('remote-probe-result');
  await expect(probe.getByTestId('remote-health')).toHaveText('up');
  await expect(probe.getByTestId('remote-probe')).toContainText('llama-server');
  await expect(probe.getByTestId('remote-probe')).toContainText('constrained output: GBNF grammar');
  await expect(probe.getByTestId('remote-probe')).toContainText('context 4,096');
  await shot(page, 'remote-probe');

  // A wrong id: the server answers, so it is up but does not serve that model (not "down").
  await page.getByTestId('remote-model').fill('no-such-model');
  await page.getByTestId('remote-probe-btn').click();
  await expect(probe.getByTestId('remote-health')).toHaveText('up · model not served');
  await expect(probe).toContainText('has no model "no-such-model"; it serves: tiny');
  // Adding it is refused with the served ones listed.
  await page.getByTestId('remote-name').fill('e2e-llama');
  await page.getByTestId('remote-add-btn').click();
  await expect(page.getByText(`has no model "no-such-model"; it serves: tiny`).first()).toBeVisible();

  // The served id is one click away.
  await probe.getByTestId('remote-served-model').filter({ hasText: 'tiny' }).click();
  await expect(page.getByTestId('remote-model')).toHaveValue('tiny');
  await page.getByTestId('remote-add-btn').click();
  const row = page.getByTestId('remote-row').filter({ hasText: 'remote:e2e-llama' });
  await expect(row).toBeVisible();
  await expect(row.getByTestId('remote-health')).toHaveText('up');
  await shot(page, 'remote-added');

  await fillClassify(page, 'remote:e2e-llama', { n: 2, k: 2, r: 2, input: 'A warm, funny and beautifully acted film.' });
  await page.getByTestId('classify-start').click();
  await expect(page.getByTestId('classify-status')).toContainText('Done', { timeout: 240_000 });
  const label = (await page.getByTestId('final-label').textContent())?.trim();
  expect(['negative', 'positive']).toContain(label);
  await expect(page.locator('[data-testid="variant-grid"] .vcell.pending')).toHaveCount(0);
  // A server batches requests as it likes: the same seed is not promised the same answer.
  await expect(page.getByTestId('deterministic')).toHaveText('not reproducible');
  await shot(page, 'remote-classify');
});

test('a server without constrained decoding: the result panel says the outputs were unconstrained', async ({ page }) => {
  // A generic OpenAI-compatible server (no llama-server, vLLM, Ollama or LM Studio endpoints) that
  // answers like a well-behaved model, so the free text parses into examples, paraphrases and votes.
  const script = politeScript({ answer: () => 'positive' });
  const generic = await fakeServer({
    'GET /v1/models': { object: 'list', data: [{ id: 'm', object: 'model' }] },
    'POST /v1/chat/completions': async (req: RecordedRequest, res: Parameters<typeof json>[0]) => {
      const body = req.body as { messages: { role: string; content: string }[]; temperature: number; top_p?: number; seed?: number };
      const system = body.messages.find((m) => m.role === 'system')?.content ?? '';
      const user = body.messages.find((m) => m.role === 'user')?.content ?? '';
      const out = await script({ prompt: { system, user }, maxTokens: 1, temperature: body.temperature, ...(body.top_p !== undefined ? { topP: body.top_p } : {}), ...(body.seed !== undefined ? { seed: body.seed } : {}) }, { index: 0, batch: 0, stage: 'evaluation' });
      json(res, 200, chatCompletion(typeof out === 'string' ? out : out.text, 'm'));
    },
  });
  try {
    await fillClassify(page, `openai+${generic.origin}/v1#m`, { n: 1, k: 2, r: 1, input: 'A warm, funny and beautifully acted film.' });
    await page.getByTestId('classify-start').click();
    await expect(page.getByTestId('classify-status')).toContainText('Done', { timeout: 240_000 });
    await expect(page.getByTestId('final-label')).toHaveText('positive');
    await expect(page.getByTestId('constrained')).toContainText('Generator outputs were unconstrained');
    await expect(page.getByTestId('constrained')).toContainText('evaluator outputs were unconstrained');
    await shot(page, 'remote-unconstrained');
  } finally {
    await generic.close();
  }
});
