// The Resolution & audit panel: run a preset audit; the verdict comes first and is the API's,
// then its charts and findings.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startServer, launch, artifacts } from './harness.mjs';

let server, browser, page, problems, commands;
before(async () => {
  server = await startServer();
  ({ browser, page, problems } = await launch());
  commands = (await (await fetch(server.url + 'api/commands')).json()).commands.map((c) => c.name);
  await page.goto(server.url);
  await page.waitForSelector('body[data-ready="true"]');
  await page.click('#tab-audit');
});
after(async () => {
  await browser?.close();
  assert.equal(await server?.stop(), 0);
});

test('a preset audit shows the verdict, the charts and the findings', { timeout: 180000 }, async (t) => {
  if (!commands.includes('rope audit')) {
    await page.waitForSelector('#audit-body .unavailable');
    t.skip('this server has no rope audit yet');
    return;
  }
  const presets = await (await fetch(server.url + 'api/presets')).json();
  assert.equal(await page.locator('#audit-preset option').count(), presets.length);
  await page.selectOption('#audit-preset', 'llama-2-7b');
  await page.selectOption('#audit-dtype', 'bf16');
  await page.click('#audit-run');
  await page.waitForSelector('#audit-verdict', { timeout: 170000 });
  const res = await fetch(server.url + 'api/rope/audit?charts=svg', { method: 'POST', body: JSON.stringify({ preset: 'llama-2-7b', dtype: 'bf16' }) });
  const api = await res.json();
  assert.equal(await page.locator('#audit-verdict').textContent(), api.report.verdict);
  // Verdict first, then the charts, then the findings.
  const order = await page.$$eval('#audit-out > *', (els) => els.map((e) => e.id || (e.firstElementChild && e.firstElementChild.id)).filter(Boolean));
  assert.deepEqual(order.slice(0, 4), ['audit-verdict', 'audit-source-line', 'audit-charts', 'audit-findings']);
  const charts = await page.$$eval('#audit-charts img', (imgs) => imgs.map((i) => i.dataset.chart));
  assert.deepEqual(charts, api.charts.map((c) => c.name));
  const decay = await page.locator('#audit-findings [data-finding^="decay"] td:last-child').textContent();
  assert.ok(decay.includes(String(api.report.findings.decay.first_negative ?? api.report.findings.decay.kind)), decay);
  await page.locator('#panel-audit').screenshot({ path: join(artifacts, 'audit.png') });
  // A pasted config that is not JSON is refused in the page; one with a bad value by the server.
  await page.check('input[name="audit-source"][value="config"]');
  await page.fill('#audit-config', '{"rope_theta": -1, "hidden_size": 64, "num_attention_heads": 1}');
  await page.click('#audit-run');
  await page.waitForSelector('#audit-error:not([hidden])');
  const bad = await fetch(server.url + 'api/rope/audit', { method: 'POST', body: JSON.stringify({ config: { rope_theta: -1, hidden_size: 64, num_attention_heads: 1 }, dtype: 'bf16' }) });
  assert.equal(bad.status, 400);
  assert.equal(await page.locator('#audit-error').textContent(), (await bad.json()).error);
  assert.deepEqual(problems.console.filter((m) => !m.includes('status of 400')), []);
  assert.deepEqual(problems.pageErrors, []);
});
