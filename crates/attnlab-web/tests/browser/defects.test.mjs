// The defects of issue 21, each reproduced as a student met it, at the desktop size
// (1366 × 900). Every number the page shows is compared with the API's own answer.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startServer, launch, artifacts, post, open, consoleErrors, DESKTOP } from './harness.mjs';

let server, browser, page, problems;
before(async () => {
  server = await startServer();
  ({ browser, page, problems } = await launch({ viewport: DESKTOP }));
  await open(page, server);
});
after(async () => {
  await browser?.close();
  assert.equal(await server?.stop(), 0);
});

const shot = (name) => page.screenshot({ path: join(artifacts, `desktop-${name}.png`), fullPage: true });
const visible = (sel) => page.locator(sel).isVisible();
const errorText = (panel) => page.locator(`#${panel}-error`).innerText();
async function settled() { await page.waitForLoadState('networkidle'); }

test('1. rotation at large separations: no recursion, no 32k-character cell, chart and table from one answer', async () => {
  await page.click('#tab-rotation');
  await page.waitForSelector('#rotation-table');
  for (const max of ['20000', '100000']) {
    await page.fill('#rotation-omega', 'pi/2');
    await page.fill('#rotation-max', max);
    await page.waitForFunction((m) => document.getElementById('rotation-s').max === m, max, { timeout: 60000 });
    await page.waitForSelector('#rotation-plot');
    await settled();
    await page.locator('#rotation-s').fill('1');
    const api = (await post(server, 'rope score', { omega: 'pi/2', max_sep: Number(max) })).json;
    // The table and the chart speak about the same ω set (the old chart used to stay).
    assert.deepEqual(await page.$$eval('#rotation-table [data-omega]', (t) => t.map((c) => c.dataset.omega)), ['pi/2']);
    assert.equal(await page.locator('#rotation-plot text', { hasText: 'ω = pi/3' }).count(), 0);
    const repeats = await page.locator('#rotation-repeats').innerText();
    assert.ok(repeats.length < 200, `the repeats cell is ${repeats.length} characters`);
    assert.ok(repeats.includes(`${api.equal_to_zero_separation.length} in all`), repeats);
    const top = await page.locator('#rotation-chart').evaluate((e) => e.getBoundingClientRect().top + window.scrollY);
    assert.ok(top < 1500, `the chart starts ${top} px down`);
    const pathPoints = await page.$$eval('#rotation-plot path', (ps) => Math.max(...ps.map((p) => p.getAttribute('d').split('L').length)));
    assert.ok(pathPoints <= 2 * 900, `a curve of ${pathPoints} points (one or two per pixel column)`);
  }
  await shot('rotation-100000');
  assert.deepEqual(problems.pageErrors, []);
  await page.fill('#rotation-max', '24');
  await page.fill('#rotation-omega', 'pi/2,pi/3');
  await page.waitForFunction(() => document.getElementById('rotation-s').max === '24');
});

test('2. an error clears the previous result, and a good run clears the old error', async () => {
  // Shuffle: broken blocks JSON.
  await page.click('#tab-shuffle');
  await page.waitForSelector('#shuffle-badge');
  await page.locator('#panel-shuffle details.blocks summary').click();
  await page.fill('#shuffle-blocks', '{"Wq": [[1, 0], ');
  await page.waitForSelector('#shuffle-error:not([hidden])');
  assert.match(await errorText('shuffle'), /^Load blocks: not valid JSON/);
  assert.equal(await page.locator('#shuffle-badge').count(), 0, 'the old verdict is gone');
  assert.equal(await page.locator('#shuffle-product table, #shuffle-weights table').count(), 0, 'the old heat maps are gone');
  await page.fill('#shuffle-blocks', '');
  await page.waitForSelector('#shuffle-badge');
  assert.equal(await visible('#shuffle-error'), false);
  // Rotation: ω = abc, then a good ω.
  await page.click('#tab-rotation');
  await page.fill('#rotation-omega', 'abc');
  await page.waitForSelector('#rotation-error:not([hidden])');
  await settled();
  const bad = await post(server, 'rope score', { omega: 'abc', max_sep: 24 });
  assert.equal(bad.status, 400);
  assert.ok(!(await errorText('rotation')).includes('--'), await errorText('rotation'));
  assert.equal(await page.locator('#rotation-table, #rotation-plot, #identity-badge').count(), 0, 'no old table, chart or identity');
  await shot('rotation-error');
  await page.fill('#rotation-omega', 'pi/2');
  await page.waitForSelector('#rotation-table [data-omega="pi/2"]');
  await settled();
  assert.equal(await visible('#rotation-error'), false, 'the old error is gone');
  // The audit: a good run, then a broken pasted config.
  await page.click('#tab-audit');
  await page.check('input[name="audit-source"][value="omega"]');
  await page.fill('#audit-omega', 'pi/2,pi/3');
  await page.fill('#audit-context', '12');
  await page.click('#audit-run');
  await page.waitForSelector('#audit-verdict');
  await page.check('input[name="audit-source"][value="config"]');
  await page.fill('#audit-config', '{"rope_theta": ');
  await page.click('#audit-run');
  await page.waitForSelector('#audit-error:not([hidden])');
  assert.match(await errorText('audit'), /^config\.json: not valid JSON/);
  assert.equal(await page.locator('#audit-verdict').count(), 0, 'the old audit is gone');
  // Every command: a holding report, then invalid JSON.
  await page.click('#tab-console');
  await page.selectOption('#console-command', 'equivariance');
  await page.fill('#console-body', '{"perm": [2, 0, 3, 1]}');
  await page.click('#console-run');
  await page.waitForSelector('#console-out [data-outcome="holds"]');
  await page.fill('#console-body', '{"perm": ');
  await page.click('#console-run');
  await page.waitForSelector('#console-error:not([hidden])');
  assert.equal(await page.locator('#console-out > *').count(), 0, 'the old HOLDS report is gone');
  assert.deepEqual(consoleErrors(problems), []);
});

test('3. the identity permutation: the note says it was chosen (page and API agree)', async () => {
  await page.click('#tab-shuffle');
  await page.click('#shuffle-course');
  await page.waitForSelector('#shuffle-badge');
  await page.click('#shuffle-reset');
  await page.waitForFunction(() => document.getElementById('shuffle-perm').textContent === '[0, 1, 2, 3]' && document.getElementById('shuffle-note'));
  await settled();
  const api = (await post(server, 'equivariance', { perm: [0, 1, 2, 3] })).json;
  const note = await page.locator('#shuffle-note').innerText();
  assert.equal(note, api.note);
  assert.match(note, /the identity permutation was chosen/);
  assert.doesNotMatch(note, /only the identity permutation exists/);
  // One token really has only the identity.
  const one = (await post(server, 'equivariance', { n: 1, perm: [0] })).json;
  assert.match(one.note, /only the identity permutation exists for n = 1/);
});

test('4. the audit of pi/2,pi/3: no "null", no "—", the alias, the common period and the ±6 pair named', async () => {
  await page.click('#tab-audit');
  await page.check('input[name="audit-source"][value="omega"]');
  await page.fill('#audit-omega', 'pi/2,pi/3');
  for (const context of ['12', '13']) {
    await page.fill('#audit-context', context);
    await page.click('#audit-run');
    await page.waitForSelector('#audit-verdict');
    await settled();
    const findings = await page.locator('#audit-findings').innerText();
    assert.doesNotMatch(findings, /null|undefined|—/, findings);
    const resolve = (await post(server, 'rope resolve', { omega: 'pi/2,pi/3', context })).json;
    const row = await page.locator('#audit-findings [data-finding^="common period"]').innerText();
    assert.ok(row.includes(`common period is ${resolve.common_period}`), row);
    const [a, b] = resolve.pairwise.coinciding;
    assert.ok(row.includes(`+${a} and ${b} coincide`), row);
    if (context === '13') {
      const audit = (await post(server, 'rope audit', { omega: 'pi/2,pi/3', context: '13' })).json;
      assert.equal(audit.findings.resolution.kind, 'aliases');
      const res = await page.locator('#audit-findings [data-finding="resolution"]').innerText();
      assert.ok(res.includes(`separation ${audit.findings.resolution.separation} is indistinguishable from 0`), res);
    }
  }
  await shot('audit-pi2-pi3');
});

test('5. form validation names the field; seeds above 2^53 survive; no CLI flag on the page', async () => {
  await page.click('#tab-audit');
  await page.check('input[name="audit-source"][value="base"]');
  await page.fill('#audit-context', '');
  for (const [base, want] of [['abc', /^Base θ: “abc” is not a finite number/], ['1e400', /^Base θ: “1e400” is not a finite number/], ['', /^Base θ: required/], ['-3', /^Base θ: “-3” is not above 0/]]) {
    await page.fill('#audit-base', base);
    await page.click('#audit-run');
    await page.waitForSelector('#audit-error:not([hidden])');
    assert.match(await errorText('audit'), want);
  }
  await page.fill('#audit-base', '10000');
  await page.fill('#audit-dim', 'x');
  await page.click('#audit-run');
  assert.match(await errorText('audit'), /^Rotary dimension: /);
  await page.click('#tab-rotation');
  for (const v of ['', 'many', '2.5']) {
    await page.fill('#rotation-max', v);
    await page.waitForFunction(() => !document.getElementById('rotation-error').hidden);
    assert.match(await errorText('rotation'), /^Largest separation: /);
  }
  // A value only the server can judge: its message names the page's field, not --max-sep.
  await page.fill('#rotation-max', '2000000');
  await page.waitForFunction(() => /2000000/.test(document.getElementById('rotation-error').textContent));
  assert.ok(!(await errorText('rotation')).includes('--'), await errorText('rotation'));
  await page.fill('#rotation-max', '24');
  // Shuffle: letters in Index scale, seeds, a numpy seed out of its range.
  await page.click('#tab-shuffle');
  await page.selectOption('#shuffle-pos', 'index');
  await page.fill('#shuffle-scale', 'abc');
  await page.waitForSelector('#shuffle-error:not([hidden])');
  assert.match(await errorText('shuffle'), /^Index scale: “abc” is not a finite number/);
  await page.fill('#shuffle-scale', '0.1');
  await page.selectOption('#shuffle-pos', 'none');
  await page.selectOption('#shuffle-rng', 'std');
  const sent = [];
  page.on('request', (r) => { if (r.url().includes('/api/equivariance')) sent.push(r.postData()); });
  await page.fill('#shuffle-seed', '9007199254740993');
  await page.waitForFunction(() => /seed 9007199254740993/.test(document.getElementById('shuffle-verdict').textContent));
  // The terminal's text of the same answer: the server ran with every digit.
  assert.match(await page.locator('#shuffle-text-out').textContent(), /seed 9007199254740993,/);
  assert.ok(sent.some((b) => b.includes('"seed":"9007199254740993"')), 'the seed went as a string');
  await page.fill('#shuffle-seed', '18446744073709551616');
  await page.waitForSelector('#shuffle-error:not([hidden])');
  assert.match(await errorText('shuffle'), /^Seed: /);
  await page.selectOption('#shuffle-rng', 'numpy');
  await page.fill('#shuffle-seed', '18446744073709551615');
  await page.waitForFunction(() => /numpy/.test(document.getElementById('shuffle-error').textContent));
  const err = await errorText('shuffle');
  assert.ok(/seed/i.test(err) && err.includes('“Generator”') && !err.includes('--'), err);
  await page.fill('#shuffle-seed', '0');
  await page.waitForSelector('#shuffle-badge');
  assert.deepEqual(consoleErrors(problems), []);
});

test('6. session: the CLI\'s number formatting, −4 refused for s > 0, a calm COMPLETE badge, the review', async () => {
  const steps = (await post(server, 'session', { list: true })).json.steps;
  const wrongish = (s) => ({ yes_no: 'no', choice: s.answer_kind.options?.[0].key, integer: '1', integer_or_none: 'none', numbers: Array(s.answer_kind.count).fill('0.5').join(', ') }[s.answer_kind.kind]);
  // Every step answered except the first repeat of π/2.
  const target = steps.findIndex((s) => s.id === 'rope_repeat_half_pi');
  const answers = Object.fromEntries(steps.slice(0, target).map((s) => [s.id, { answer: wrongish(s) }]));
  await page.evaluate((a) => localStorage.setItem('attnlab-session', JSON.stringify({ answers: a, base: null })), answers);
  await page.reload();
  await page.waitForSelector('body[data-ready="true"]');
  await page.click('#tab-session');
  await page.waitForFunction(() => document.getElementById('session-title')?.dataset.step === 'rope_repeat_half_pi');
  const answered = await page.getAttribute('#session-score', 'data-answered');
  await page.fill('#session-answer-text', '-4');
  await page.click('#session-submit');
  await page.waitForSelector('#session-error:not([hidden])');
  assert.match(await errorText('session'), /a separation s > 0/);
  assert.equal(await page.getAttribute('#session-score', 'data-answered'), answered, '−4 was not graded');
  // The rest, then the end: the badge and the review.
  const rest = Object.fromEntries(steps.slice(target).map((s) => [s.id, { answer: wrongish(s) }]));
  await page.evaluate((a) => localStorage.setItem('attnlab-session', JSON.stringify({ answers: a, base: null })), { ...answers, ...rest });
  await page.reload();
  await page.waitForSelector('body[data-ready="true"]');
  await page.click('#tab-session');
  await page.waitForSelector('#session-done');
  const api = (await post(server, 'session', { answers: { ...answers, ...rest } }, '?text=1')).json;
  const badge = await page.locator('#session-done-badge');
  if (!api.report.full_marks) {
    assert.equal(await badge.innerText(), 'COMPLETE');
    const bg = await badge.evaluate((e) => getComputedStyle(e).backgroundColor);
    assert.notEqual(bg, 'rgb(251, 222, 222)', 'COMPLETE is not painted as a failure');
  }
  const wrong = api.report.steps.filter((s) => !s.correct);
  assert.equal(await page.getAttribute('#session-review', 'data-wrong'), String(wrong.length));
  // The scores of rope_scores as the CLI prints them (its text is the terminal's rendering).
  const scores = wrong.find((s) => s.id === 'rope_scores');
  assert.ok(scores, 'the rope scores prediction was wrong');
  const shown = await page.locator('#session-review li[data-step="rope_scores"] .review-computed').innerText();
  assert.ok(api.report && api.text.includes(shown), `“${shown}” is in the terminal's text`);
  assert.doesNotMatch(shown, /e-1[0-9]/, shown);
  await shot('session-review');
  await page.evaluate(() => localStorage.removeItem('attnlab-session'));
  assert.deepEqual(consoleErrors(problems), []);
});

test('7. Shuffle shows the product; "Course program" is the numpy course program; the defaults are the CLI\'s', async () => {
  await page.reload();
  await page.waitForSelector('body[data-ready="true"]');
  await page.waitForSelector('#product-diff');
  await settled();
  // The page opens on the course program with the CLI's default generator.
  const cliDefault = (await post(server, 'equivariance', {})).json;
  assert.equal(await page.locator('#shuffle-rng').inputValue(), cliDefault.rng);
  assert.equal(await page.locator('#shuffle-perm').innerText(), '[2, 0, 3, 1]');
  const api = (await post(server, 'equivariance', { perm: [2, 0, 3, 1], product: true })).json;
  assert.equal(api.rng, 'numpy'); assert.equal(api.n, 4); assert.equal(api.dim, 4); assert.equal(api.seed, 0);
  const cells = async (id) => page.$$eval(`#${id} td`, (t) => t.map((c) => Number(c.dataset.value)));
  assert.deepEqual(await cells('product-fpx'), api.product.f_of_permuted.flat());
  assert.deepEqual(await cells('product-pfx'), api.product.permuted_f.flat());
  assert.deepEqual(await cells('product-diff'), api.product.difference.flat());
  // Coloured against the tolerance: every entry within it, as the verdict says.
  const over = await page.locator('#product-diff td.over').count();
  assert.equal(over, api.product.difference.flat().filter((v) => Math.abs(v) > api.tolerance).length);
  assert.equal(over, 0);
  assert.ok((await page.locator('#product-verdict').innerText()).startsWith('HOLDS'));
  await shot('shuffle-product');
  // Break it with the index signal: entries above the tolerance turn red.
  await page.selectOption('#shuffle-pos', 'index');
  await page.waitForFunction(() => document.getElementById('shuffle-badge')?.dataset.verdict === 'breaks');
  await settled();
  const broken = (await post(server, 'equivariance', { perm: [2, 0, 3, 1], product: true, pos: 'index', index_scale: 0.1 })).json;
  assert.equal(await page.locator('#product-diff td.over').count(), broken.product.difference.flat().filter((v) => Math.abs(v) > broken.tolerance).length);
  assert.ok(await page.locator('#product-diff td.over').count() > 0);
  // One click back to the course program.
  await page.fill('#shuffle-seed', '5');
  await page.selectOption('#shuffle-rng', 'std');
  await page.click('#shuffle-course');
  await page.waitForFunction(() => document.getElementById('shuffle-badge')?.dataset.verdict === 'holds');
  await settled();
  assert.deepEqual(await cells('product-diff'), api.product.difference.flat());
  assert.equal(await page.locator('#shuffle-seed').inputValue(), '0');
  assert.equal(await page.locator('#shuffle-rng').inputValue(), 'numpy');
  assert.deepEqual(consoleErrors(problems), []);
});

test('8. a non-RoPE config (BERT): the page shows what the API answers', async () => {
  const bert = { model_type: 'bert', architectures: ['BertModel'], hidden_size: 768, num_attention_heads: 12, max_position_embeddings: 512, position_embedding_type: 'absolute' };
  await page.click('#tab-audit');
  await page.check('input[name="audit-source"][value="config"]');
  await page.fill('#audit-config', JSON.stringify(bert));
  await page.fill('#audit-context', '');
  await page.click('#audit-run');
  await page.waitForSelector('#audit-error:not([hidden]), #audit-verdict');
  const answer = await post(server, 'rope audit', { config: bert, dtype: 'bf16' });
  if (answer.status === 400) {
    assert.equal(await errorText('audit'), answer.json.error.replace(/--[a-z-]+/g, (f) => f));
    assert.equal(await page.locator('#audit-verdict').count(), 0);
  } else {
    assert.equal(answer.status, 200);
    assert.equal(await page.locator('#audit-verdict').innerText(), answer.json.verdict);
  }
  assert.deepEqual(consoleErrors(problems), []);
});

test('9. a long frequency-set request: the estimate first, a clock, a cancel that works', { timeout: 120000 }, async () => {
  await page.click('#tab-audit');
  await page.check('input[name="audit-source"][value="omega"]');
  await page.fill('#audit-omega', 'pi/2,pi/3');
  await page.fill('#audit-context', '1M');
  const est = (await post(server, 'rope audit', { omega: 'pi/2,pi/3', context: '1M', dtype: 'bf16' }, '?estimate=1')).json;
  assert.ok(est.ops > 0 && est.bytes > 0, JSON.stringify(est));
  await page.click('#audit-run');
  await page.waitForFunction((t) => document.getElementById('audit-status').textContent.includes(t), est.text);
  assert.equal(await page.locator('#audit-run').isDisabled(), true);
  assert.equal(await visible('#audit-cancel'), true);
  await page.waitForFunction(() => /Auditing… [1-9]/.test(document.getElementById('audit-status').textContent), null, { timeout: 10000 });
  await shot('audit-long-running');
  const t0 = Date.now();
  await page.click('#audit-cancel');
  await page.waitForFunction(() => /Cancelled after/.test(document.getElementById('audit-status').textContent));
  assert.ok(Date.now() - t0 < 2000, 'cancel answers at once');
  assert.equal(await page.locator('#audit-run').isDisabled(), false);
  assert.equal(await visible('#audit-cancel'), false);
  assert.equal(await visible('#audit-error'), false);
  // The server stopped the computation: a small audit gets a worker at once.
  const t1 = Date.now();
  const small = await post(server, 'rope audit', { omega: 'pi/2,pi/3', context: '12', skip_min_base: true });
  assert.equal(small.status, 200);
  assert.ok(Date.now() - t1 < 20000, `a small audit after the cancel took ${Date.now() - t1} ms`);
  assert.deepEqual(consoleErrors(problems), []);
  assert.deepEqual(problems.pageErrors, []);
});

test('rotation you can see: unit circles, the score fixed when both positions shift, L and the common period on the chart', async () => {
  await page.click('#tab-rotation');
  await page.fill('#rotation-omega', 'pi/2,pi/3');
  await page.fill('#rotation-context', '16');
  await page.waitForSelector('#rotation-plot line[data-mark="context"]', { state: 'attached' });
  await settled();
  await page.locator('#rotation-s').fill('3');
  const score = (await post(server, 'rope score', { omega: 'pi/2,pi/3', max_sep: 24 })).json;
  const resolve = (await post(server, 'rope resolve', { omega: 'pi/2,pi/3', context: '16' })).json;
  const want = Number(score.separations[3].mean.toPrecision(6));
  const angles = [];
  for (const i of ['0', '5', '11']) {
    await page.locator('#rotation-i').fill(i);
    await page.waitForFunction((v) => document.getElementById('rotation-i-out').textContent === v, i);
    assert.equal(Number(await page.locator('#rotation-pair-score').innerText()), want, `score at i = ${i}, j = i + 3`);
    angles.push(await page.getAttribute('#rotation-circles svg[data-plane="0"]', 'data-q-angle'));
  }
  assert.equal(new Set(angles).size, 3, 'q turns as i moves');
  assert.equal(await page.locator('#rotation-circles svg.circle').count(), 2, 'one circle per plane');
  assert.equal(await page.getAttribute('#rotation-plot line[data-mark="context"]', 'data-x'), String(resolve.context - 1));
  assert.equal(await page.getAttribute('#rotation-plot line[data-mark="common-period"]', 'data-x'), String(resolve.common_period));
  assert.equal(await page.getAttribute('#rotation-resolution', 'data-resolves'), String(resolve.resolves));
  await shot('rotation-circles');
  assert.deepEqual(consoleErrors(problems), []);
  assert.deepEqual(problems.pageErrors, []);
});
