// The Rotation panel: change ω, move the separation slider, read cos(sω), the first repeat and
// the identity check — each compared with the API's own answer.
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
  await page.click('#tab-rotation');
});
after(async () => {
  await browser?.close();
  assert.equal(await server?.stop(), 0);
});

async function post(command, body) {
  const res = await fetch(server.url + 'api/' + command, { method: 'POST', body: JSON.stringify(body) });
  assert.equal(res.status, 200, await res.clone().text());
  return res.json();
}

test('scores, first repeats and the identity follow ω and the slider', async (t) => {
  if (!commands.includes('rope score')) {
    // The panel must say it is missing, not pretend.
    await page.waitForSelector('#rotation-body .unavailable');
    t.skip('this server has no rope score yet');
    return;
  }
  await page.fill('#rotation-omega', 'pi/3,pi/4');
  await page.fill('#rotation-max', '30');
  await page.waitForFunction(() => document.querySelector('#rotation-table [data-omega="pi/4"]') && document.querySelector('#rotation-s').max === '30');
  await page.locator('#rotation-s').fill('8');
  await page.waitForFunction(() => document.getElementById('rotation-s-out').textContent === '8');
  const score = await post('rope/score', { omega: 'pi/3,pi/4', max_sep: 30 });
  const shown = Number(await page.locator('#rotation-table [data-omega="pi/4"]').textContent());
  assert.equal(shown, Number(score.separations[8].scores[1].toPrecision(6)), 'cos(8·π/4) as the API computes it');
  assert.equal(Number(await page.locator('#rotation-mean').textContent()), Number(score.separations[8].mean.toPrecision(6)));
  for (const w of ['pi/3', 'pi/4']) {
    const p = await post('rope/period', { omega: w });
    assert.equal(await page.locator(`[data-repeat="${w}"]`).textContent(), String(p.first_repeat));
    // The chart marks that first repeat.
    assert.equal(await page.locator(`#rotation-plot line[data-mark="repeat"][data-x="${p.first_repeat}"]`).count(), 1);
  }
  assert.equal(await page.locator('#rotation-plot line[data-mark="slider"]').getAttribute('data-x'), '8');
  const id = await post('rope/identity', { omega: 'pi/3,pi/4', trials: 200 });
  await page.waitForSelector('#identity-badge');
  assert.equal(await page.getAttribute('#identity-badge', 'data-holds'), String(id.holds));
  assert.equal(Number(await page.locator('#identity-numbers [data-field="tolerance"]').textContent()).toPrecision(4), id.tolerance.toPrecision(4));
  await page.locator('#panel-rotation').screenshot({ path: join(artifacts, 'rotation.png') });
  assert.deepEqual(problems.console, []);
  assert.deepEqual(problems.pageErrors, []);
});
