// The Session panel: answer one step, see it graded by the same engine (the API's report), and
// the next step offered.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startServer, launch, artifacts, consoleErrors } from './harness.mjs';

let server, browser, page, problems, commands;
before(async () => {
  server = await startServer();
  ({ browser, page, problems } = await launch());
  commands = (await (await fetch(server.url + 'api/commands')).json()).commands.map((c) => c.name);
  await page.goto(server.url);
  await page.waitForSelector('body[data-ready="true"]');
  await page.click('#tab-session');
});
after(async () => {
  await browser?.close();
  assert.equal(await server?.stop(), 0);
});

async function post(body) {
  const res = await fetch(server.url + 'api/session', { method: 'POST', body: JSON.stringify(body) });
  assert.equal(res.status, 200);
  return res.json();
}

test('one step: predict, run, compare, score', async (t) => {
  if (!commands.includes('session')) {
    await page.waitForSelector('#session-body .unavailable');
    t.skip('this server has no session yet');
    return;
  }
  const steps = (await post({ list: true })).steps;
  await page.waitForSelector('#session-title');
  const first = steps[0];
  assert.equal(await page.getAttribute('#session-title', 'data-step'), first.id);
  assert.equal(await page.locator('#session-question').textContent(), first.question);
  // Answer it (the first option the form offers) with a reason, and submit.
  const answer = first.answer_kind.kind === 'yes_no' ? 'yes' : first.answer_kind.kind === 'choice' ? first.answer_kind.options[0].key : null;
  assert.ok(answer, `a first step with a fixed set of answers (${first.answer_kind.kind})`);
  await page.check(`input[name="session-answer"][value="${answer}"]`);
  await page.fill('#session-reason', 'a guess');
  await page.click('#session-submit');
  await page.waitForSelector('#session-record');
  const api = await post({ answers: { [first.id]: { answer, reason: 'a guess' } } });
  const rec = api.steps.find((s) => s.id === first.id);
  assert.equal(await page.getAttribute('#session-record', 'data-correct'), String(rec.correct));
  assert.equal(await page.getAttribute('#session-score', 'data-correct'), String(api.score.correct));
  assert.equal(await page.getAttribute('#session-score', 'data-answered'), '1');
  // The next step is the first one the engine names as missing.
  await page.waitForFunction((id) => document.getElementById('session-title')?.dataset.step === id, api.missing[0]);
  await page.locator('#panel-session').screenshot({ path: join(artifacts, 'session.png') });
  // Progress survives a reload (kept in the page's storage, replayed through the engine).
  await page.reload();
  await page.waitForSelector('body[data-ready="true"]');
  await page.click('#tab-session');
  await page.waitForFunction((id) => document.getElementById('session-title')?.dataset.step === id, api.missing[0]);
  assert.equal(await page.getAttribute('#session-score', 'data-answered'), '1');
  assert.deepEqual(problems.console, []);
  assert.deepEqual(problems.pageErrors, []);
});

test('the course tour: the steps in order, predict → run → explain, each step\'s picture', async (t) => {
  if (!commands.includes('session')) { t.skip('this server has no session yet'); return; }
  const steps = (await post({ list: true })).steps;
  assert.deepEqual(await page.$$eval('#session-steps li', (l) => l.map((x) => x.dataset.step)), steps.map((s) => s.id));
  // Step 2 is the shuffle: answer it and see the engine's result, its explanation and its heat map.
  await page.waitForFunction((id) => document.getElementById('session-title')?.dataset.step === id, steps[1].id);
  assert.equal(await page.getAttribute('#session-steps li[aria-current="step"]', 'data-step'), steps[1].id);
  assert.equal(await page.locator('#session-step [data-phase="predict"]').count(), 1);
  await page.check('input[name="session-answer"][value="yes"]');
  await page.click('#session-submit');
  await page.waitForSelector('#session-record [data-phase="explain"]');
  await page.waitForSelector('#session-chart-map');
  const api = await post({ answers: { [steps[0].id]: { answer: 'yes', reason: 'a guess' }, [steps[1].id]: { answer: 'yes' } } });
  const rec = api.steps.find((s) => s.id === steps[1].id);
  assert.ok((await page.locator('#session-record [data-phase="explain"]').innerText()).includes(rec.explanation));
  assert.ok((await page.locator('#session-record [data-phase="run"]').innerText()).includes(rec.result.value ? 'yes' : 'no'));
  const product = await (await fetch(server.url + 'api/equivariance', { method: 'POST', body: JSON.stringify({ rng: 'numpy', seed: '0', n: 4, dim: 4, perm: [2, 0, 3, 1], product: true }) })).json();
  assert.deepEqual(await page.$$eval('#session-chart-map td', (c) => c.map((x) => Number(x.dataset.value))), product.product.difference.flat());
  assert.equal(await page.getAttribute(`#session-steps li[data-step="${steps[1].id}"]`, 'data-state'), rec.correct ? 'right' : 'wrong');
  await page.locator('#panel-session').screenshot({ path: join(artifacts, 'tour-step-2.png') });
  await page.evaluate(() => localStorage.removeItem('attnlab-session'));
  assert.deepEqual(problems.console, []);
  assert.deepEqual(problems.pageErrors, []);
});

test('a step\'s parameter changed before predicting: the question, the grading and the picture follow it', async (t) => {
  if (!commands.includes('session')) { t.skip('this server has no session yet'); return; }
  await page.evaluate(() => localStorage.removeItem('attnlab-session'));
  await page.reload();
  await page.waitForSelector('body[data-ready="true"]');
  await page.click('#tab-session');
  const steps = (await post({ list: true })).steps;
  await page.waitForFunction((id) => document.getElementById('session-title')?.dataset.step === id, steps[0].id);
  await page.check('input[name="session-answer"][value="yes"]');
  await page.click('#session-submit');
  await page.waitForFunction((id) => document.getElementById('session-title')?.dataset.step === id, steps[1].id);
  // A permutation that is not one: the engine's refusal names the parameter, nothing is graded.
  await page.fill('#session-set-perm', '0,0,1,2');
  await page.click('#session-apply');
  await page.waitForSelector('#session-error:not([hidden])');
  const msg = await page.textContent('#session-error');
  assert.ok(/perm/.test(msg) && !/--[a-z]/.test(msg), msg);
  // A real one: the question is the engine's at that setting.
  await page.fill('#session-set-perm', '1,0,3,2');
  await page.click('#session-apply');
  const listed = (await post({ list: true, settings: { [steps[1].id]: { perm: '1,0,3,2' } } })).steps.find((s) => s.id === steps[1].id);
  await page.waitForFunction((q) => document.getElementById('session-question')?.textContent === q, listed.question);
  assert.ok(await page.isHidden('#session-error'), 'a good value clears the error');
  assert.equal(await page.inputValue('#session-set-perm'), '1,0,3,2');
  await page.check('input[name="session-answer"][value="yes"]');
  await page.click('#session-submit');
  await page.waitForSelector('#session-chart-map');
  const api = await post({ answers: { [steps[0].id]: 'yes', [steps[1].id]: { answer: 'yes', perm: '1,0,3,2' } } });
  const rec = api.steps.find((s) => s.id === steps[1].id);
  assert.equal(await page.getAttribute('#session-record', 'data-correct'), String(rec.correct));
  assert.equal(rec.settings.perm, '1,0,3,2');
  const product = await (await fetch(server.url + 'api/equivariance', { method: 'POST', body: JSON.stringify({ rng: 'numpy', seed: '0', n: 4, dim: 4, perm: [1, 0, 3, 2], product: true }) })).json();
  assert.deepEqual(await page.$$eval('#session-chart-map td', (c) => c.map((x) => Number(x.dataset.value))), product.product.difference.flat(), 'the picture is at the student\'s permutation');
  await page.locator('#panel-session').screenshot({ path: join(artifacts, 'tour-step-parameter.png') });
  await page.evaluate(() => localStorage.removeItem('attnlab-session'));
  // The refused permutation is a 400 the page answers with its message (the test's subject).
  assert.deepEqual(consoleErrors(problems), []);
  assert.deepEqual(problems.pageErrors, []);
});
