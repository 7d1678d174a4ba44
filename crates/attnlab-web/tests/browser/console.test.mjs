// The "Every command" panel: any command of the server, its report as the terminal shows it and
// the CLI's charts, the same as the API's answer.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startServer, launch, artifacts } from './harness.mjs';

let server, browser, page, problems;
before(async () => {
  server = await startServer();
  ({ browser, page, problems } = await launch());
  await page.goto(server.url);
  await page.waitForSelector('body[data-ready="true"]');
});
after(async () => {
  await browser?.close();
  assert.equal(await server?.stop(), 0);
});

test('the lab runs from the page with its text and every chart', async () => {
  await page.click('#tab-console');
  await page.selectOption('#console-command', 'lab');
  await page.fill('#console-body', '{"context": 13}');
  await page.click('#console-run');
  await page.waitForSelector('#console-out [data-outcome]');
  const res = await fetch(server.url + 'api/lab?charts=svg&text=1', { method: 'POST', body: '{"context": 13}' });
  const answer = await res.json();
  assert.equal(await page.getAttribute('#console-out [data-outcome]', 'data-outcome'), answer.outcome);
  assert.equal(await page.locator('#console-out .report-text').textContent(), answer.text);
  const shown = await page.$$eval('#console-out img[data-chart]', (imgs) => imgs.map((i) => i.dataset.chart));
  assert.deepEqual(shown, answer.charts.map((c) => c.name));
  assert.ok(shown.length > 0);
  await page.locator('#panel-console').screenshot({ path: join(artifacts, 'every-command-lab.png') });
});

test('a bad request shows the server\'s one-line error', async () => {
  await page.selectOption('#console-command', 'equivariance');
  await page.fill('#console-body', '{"perm": [0, 0, 1, 2]}');
  await page.click('#console-run');
  await page.waitForSelector('#console-error:not([hidden])');
  const res = await fetch(server.url + 'api/equivariance', { method: 'POST', body: '{"perm": [0, 0, 1, 2]}' });
  assert.equal(res.status, 400);
  assert.equal(await page.locator('#console-error').innerText(), (await res.json()).error);
  // The 400 is the answer under test, not a page fault: Chromium logs it as a failed load.
  assert.deepEqual(problems.console.filter((m) => !m.includes('status of 400')), []);
  assert.deepEqual(problems.pageErrors, []);
});
