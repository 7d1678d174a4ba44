// The Real model panel: a sentence's tokens and ids, one layer's attention heat map, the
// next-token distributions of the text and its permutation with and without RoPE, and the
// layer where order enters — each number compared with the API's own answer. Needs the
// SmolLM2 GGUF in the model cache (scripts/fetch-smollm2); without it the test says SKIPPED,
// and fails under CI.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startServer, launch, artifacts, post, overflow, open, consoleErrors, DESKTOP, PHONE } from './harness.mjs';

let server, browser, page, problems, missing;
before(async () => {
  server = await startServer();
  const info = await post(server, 'model info', { model: 'smollm2-135m' });
  if (info.status !== 200) {
    missing = info.json.error;
    if (process.env.CI) throw new Error(`the model panel needs the SmolLM2 GGUF under CI: ${missing}`);
    console.log(`SKIPPED model panel tests: ${missing}`);
    return;
  }
  ({ browser, page, problems } = await launch({ viewport: DESKTOP }));
  await open(page, server);
});
after(async () => {
  await browser?.close();
  const code = await server?.stop();
  assert.equal(code, 0, 'the server stops cleanly on Ctrl-C (exit 0)');
});

const TEXT = 'the cat sat on the mat';

/** Waits until the panel shows the order section for the current run. */
async function settled() {
  // A run is three requests on a 30-layer model (model order alone runs ~8 forwards); a debug
  // build on a loaded 2-core machine takes tens of seconds.
  await page.waitForSelector('#model-order-facts', { timeout: 240000 });
  await page.waitForFunction(() => document.getElementById('model-status').textContent === '', null, { timeout: 240000 });
  await page.waitForLoadState('networkidle');
}

test('the panel shows the tokens, the heat map and where order enters, as the API computes them', async (t) => {
  if (missing) return t.skip(missing);
  await page.click('#tab-model');
  await settled();
  const tok = (await post(server, 'model tokenize', { model: 'smollm2-135m', text: TEXT, values: 0 })).json;
  const ids = await page.$$eval('#model-token-table tr td:nth-child(2)', (tds) => tds.map((td) => Number(td.textContent)));
  assert.deepEqual(ids, tok.tokens.map((x) => x.id), 'the token ids are the API’s');
  // The layer list comes from the file: 30 layers, 9 heads.
  assert.equal(await page.$$eval('#model-layer option', (o) => o.length), 30);
  assert.equal(await page.$$eval('#model-head option', (o) => o.length), 9);

  const att = (await post(server, 'model attention', { model: 'smollm2-135m', text: TEXT, layer: 0, head: 0, pos: 'rope' })).json;
  const cells = await page.$$eval('#model-weights td', (tds) => tds.map((td) => Number(td.dataset.value)));
  assert.deepEqual(cells, att.weights.flat(), 'every heat-map cell is the API’s weight');
  for (const row of att.weights) {
    // Each row is a softmax: sums to 1 within f32 round-off (n terms of eps32 each).
    assert.ok(Math.abs(row.reduce((a, b) => a + b, 0) - 1) < 1e-5 * row.length);
  }
  const shares = await page.textContent('#model-shares');
  assert.ok(shares.includes('on the first token'), shares);

  const order = (await post(server, 'model order', { model: 'smollm2-135m', text: TEXT, top: 5 })).json;
  const facts = await page.textContent('#model-order-facts');
  const none = order.depth.find((d) => d.pos === 'none');
  assert.ok(none.first_moved !== null && none.first_moved >= 1, 'after one causal layer without RoPE the last position does not move');
  assert.ok(facts.includes(`first moves after layer ${none.first_moved}`), facts);
  assert.ok(facts.includes(order.bare_attention.equivariant ? 'equivariant' : 'NOT'), facts);
  const firstRope = await page.$$eval('.dist[data-pos="rope"] tr td:nth-child(2)', (tds) => tds.map((td) => td.textContent));
  const ropeDist = order.distributions.find((d) => d.pos === 'rope');
  assert.deepEqual(firstRope, ropeDist.text_top.map((e) => e.piece), 'the next tokens are the API’s');
  assert.ok(await page.$('#model-depth'), 'the layer-by-layer chart is drawn');
  await page.screenshot({ path: join(artifacts, 'model-desktop.png'), fullPage: true });
});

test('a new head or the rotation removed redraws the heat map from the API', async (t) => {
  if (missing) return t.skip(missing);
  await page.selectOption('#model-head', '3');
  await page.selectOption('#model-pos', 'none');
  await page.waitForFunction(() => /head 3 .*positions none/.test(document.querySelector('#model-heat h3')?.textContent || ''), null, { timeout: 240000 });
  await page.waitForLoadState('networkidle');
  const att = (await post(server, 'model attention', { model: 'smollm2-135m', text: TEXT, layer: 0, head: 3, pos: 'none' })).json;
  const cells = await page.$$eval('#model-weights td', (tds) => tds.map((td) => Number(td.dataset.value)));
  assert.deepEqual(cells, att.weights.flat());
  assert.equal(att.kv_head, 1, 'query head 3 shares key/value head 1 (9 heads over 3)');
});

test('a bad permutation names the field and clears the old results', async (t) => {
  if (missing) return t.skip(missing);
  await page.fill('#model-perm', '0,0,1');
  await page.click('#model-run');
  await page.waitForSelector('#model-error:not([hidden])', { timeout: 240000 });
  const msg = await page.textContent('#model-error');
  assert.ok(!/--[a-z]/.test(msg), `no CLI flag on the page: ${msg}`);
  assert.ok(/perm/i.test(msg), msg);
  assert.equal(await page.$('#model-order-facts'), null, 'no old answer beside the error');
  await page.fill('#model-perm', 'x,y');
  await page.click('#model-run');
  await page.waitForFunction(() => /Permutation/.test(document.getElementById('model-error').textContent), null, { timeout: 240000 });
  await page.fill('#model-perm', '');
  await page.click('#model-run');
  await settled();
  assert.ok(await page.isHidden('#model-error'), 'a good run clears the error');
});

test('at phone width nothing overflows the viewport', async (t) => {
  if (missing) return t.skip(missing);
  await page.setViewportSize(PHONE);
  await page.waitForTimeout(300);
  const wide = await page.evaluate(() => [...document.querySelectorAll('#panel-model *')].filter((e) => e.getBoundingClientRect().right > window.innerWidth + 1).slice(0, 5).map((e) => `${e.tagName}#${e.id}.${e.className}`));
  assert.ok(await overflow(page) <= 0, `the page is ${await overflow(page)} px wider than the phone: ${wide}`);
  await page.screenshot({ path: join(artifacts, 'model-phone.png'), fullPage: true });
  assert.deepEqual(consoleErrors(problems), [], 'no console error but the refused permutation’s 400');
  assert.deepEqual(problems.pageErrors, []);
  const outside = problems.requests.filter((u) => !u.startsWith(server.url) && !u.startsWith('data:'));
  assert.deepEqual(outside, [], 'nothing fetched from outside');
});
