// The Shuffle panel: shuffle a sequence, read the verdict and its numbers, add the index signal
// and watch the symmetry break; every number is compared with the API's own answer.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startServer, launch, artifacts, text } from './harness.mjs';

let server, browser, page, problems;
before(async () => {
  server = await startServer();
  ({ browser, page, problems } = await launch());
  await page.goto(server.url);
  await page.waitForSelector('body[data-ready="true"]');
});
after(async () => {
  await browser?.close();
  const code = await server?.stop();
  assert.equal(code, 0, 'the server stops cleanly on Ctrl-C (exit 0)');
});

async function post(command, body) {
  const res = await fetch(server.url + 'api/' + command, { method: 'POST', body: JSON.stringify(body) });
  assert.equal(res.status, 200);
  return res.json();
}

/** Waits until the verdict shown is for the permutation shown and returns [verdict, numbers]. */
async function shown(expectedPerm) {
  await page.waitForFunction((p) => {
    const perm = document.getElementById('shuffle-perm').textContent;
    return perm === p && document.getElementById('shuffle-badge');
  }, expectedPerm);
  // Let the latest request settle.
  await page.waitForLoadState('networkidle');
  const verdict = await page.getAttribute('#shuffle-badge', 'data-verdict');
  const cells = await page.$$eval('#shuffle-numbers td', (tds) => Object.fromEntries(tds.map((t) => [t.dataset.field, t.textContent])));
  return [verdict, cells];
}

test('shuffling the bare layer: the verdict holds, with the API numbers', async () => {
  // A sequence of tokens instead of the course program's random rows (the page's default).
  await page.selectOption('#shuffle-input', 'text');
  await page.fill('#shuffle-text', 'A B . A B');
  await page.waitForFunction(() => document.querySelectorAll('#shuffle-tokens li').length === 5);
  await page.click('#shuffle-shuffle');
  const perm = await text(page, '#shuffle-perm');
  const order = JSON.parse(perm);
  assert.notDeepEqual(order, [0, 1, 2, 3, 4], 'the shuffle moved something');
  const [verdict, cells] = await shown(perm);
  const api = await post('equivariance', { text: 'A B . A B', perm: order, pos: 'none', mask: 'none', dtype: 'f64', rng: 'numpy', seed: 0, layer: 'attention' });
  assert.equal(verdict, 'holds');
  assert.equal(api.verdict, 'holds');
  assert.ok(api.margin < 1, `margin ${api.margin} < 1`);
  // The page shows the API's numbers, formatted as the CLI does (4 significant digits).
  assert.equal(Number(cells['max abs error']).toPrecision(3), Number(api.max_abs_error.toPrecision(4)).toPrecision(3));
  assert.equal(Number(cells['tolerance']).toPrecision(4), api.tolerance.toPrecision(4));
  // Heat maps: the shuffled weights are the original ones with rows and columns permuted.
  const w0 = await page.$$eval('#weights-original td', (t) => t.map((c) => Number(c.dataset.value)));
  const w1 = await page.$$eval('#weights-permuted td', (t) => t.map((c) => Number(c.dataset.value)));
  const n = order.length;
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) {
    const a = w1[i * n + j], b = w0[order[i] * n + order[j]];
    assert.ok(Math.abs(a - b) <= 1e-12, `A(ΠX)[${i}][${j}] = ${a} vs A(X)[${order[i]}][${order[j]}] = ${b}`);
  }
  const moved = await page.$$eval('#output-permuted tr.hl', (r) => r.length);
  assert.equal(moved, order.filter((o, i) => o !== i).length, 'every moved row is highlighted');
  await page.locator('#panel-shuffle').screenshot({ path: join(artifacts, 'shuffle-holds.png') });
});

test('adding the index signal breaks the symmetry, by the margin the API computes', async () => {
  const perm = await text(page, '#shuffle-perm');
  await page.selectOption('#shuffle-pos', 'index');
  await page.waitForFunction(() => document.getElementById('shuffle-badge')?.dataset.verdict === 'breaks');
  const [verdict, cells] = await shown(perm);
  assert.equal(verdict, 'breaks');
  const api = await post('equivariance', { text: 'A B . A B', perm: JSON.parse(perm), pos: 'index', index_scale: 0.1, mask: 'none', dtype: 'f64', rng: 'numpy', seed: 0, layer: 'attention' });
  assert.equal(api.verdict, 'breaks');
  assert.ok(api.margin > 1);
  assert.equal(Number(cells['margin (error ÷ tolerance; below 1 holds)']).toPrecision(4), api.margin.toPrecision(4));
  await page.locator('#panel-shuffle').screenshot({ path: join(artifacts, 'shuffle-breaks.png') });
  // Keyboard: move the first token right and the permutation follows.
  await page.focus('#shuffle-tokens li:first-child');
  await page.keyboard.press('ArrowRight');
  const after = JSON.parse(await text(page, '#shuffle-perm'));
  const before = JSON.parse(perm);
  assert.deepEqual(after, [before[1], before[0], ...before.slice(2)]);
  await page.selectOption('#shuffle-pos', 'none');
  await page.selectOption('#shuffle-layer', 'rnn');
  await page.waitForFunction(() => document.getElementById('shuffle-badge')?.dataset.verdict === 'breaks');
  assert.deepEqual(problems.console, []);
  assert.deepEqual(problems.pageErrors, []);
  assert.ok(problems.requests.every((u) => u.startsWith(server.url)), `only the server was asked: ${problems.requests.filter((u) => !u.startsWith(server.url))}`);
});
