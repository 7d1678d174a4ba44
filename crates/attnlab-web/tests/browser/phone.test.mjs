// The page on a phone (390 × 844): nothing wider than the viewport, tables scrolling in their
// own box, chart text at least 11 px, heat-map cells and tabs reachable by keyboard.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { startServer, launch, artifacts, open, overflow, consoleErrors, PHONE } from './harness.mjs';

let server, browser, page, problems;
before(async () => {
  server = await startServer();
  ({ browser, page, problems } = await launch({ viewport: PHONE }));
  await open(page, server);
});
after(async () => {
  await browser?.close();
  assert.equal(await server?.stop(), 0);
});

/** The smallest rendered text of the panel's charts, in CSS pixels. */
async function smallestChartText(panel) {
  return page.evaluate(async (id) => {
    const sizes = [];
    for (const s of document.querySelectorAll(`#${id} svg`)) {
      if (!s.clientWidth) continue;
      const vb = s.viewBox.baseVal;
      const scale = vb && vb.width ? s.clientWidth / vb.width : 1;
      for (const t of s.querySelectorAll('text')) sizes.push(parseFloat(getComputedStyle(t).fontSize) * scale);
    }
    // The server's charts are images of SVG: their font sizes times the image's scale.
    for (const img of document.querySelectorAll(`#${id} img[data-chart]`)) {
      const src = decodeURIComponent(img.src.split(',')[1]);
      const doc = new DOMParser().parseFromString(src, 'image/svg+xml');
      const root = doc.documentElement;
      const vb = (root.getAttribute('viewBox') || '').split(/[ ,]+/).map(Number);
      const natural = vb.length === 4 ? vb[2] : Number(root.getAttribute('width'));
      const scale = img.clientWidth / natural;
      const fonts = [...src.matchAll(/font-size(?:="|:\s*)([0-9.]+)/g)].map((m) => Number(m[1]));
      if (fonts.length) sizes.push(Math.min(...fonts) * scale);
    }
    return sizes.length ? Math.min(...sizes) : null;
  }, panel);
}

/** Every table of the panel sits in a box that scrolls sideways (or fits). */
async function tablesContained(panel) {
  return page.evaluate((id) => [...document.querySelectorAll(`#${id} table`)].filter((t) => {
    const r = t.getBoundingClientRect();
    if (r.width === 0) return false;
    if (r.right <= window.innerWidth + 0.5) return false;
    // Wider than the screen: it must be inside a scrolling box no wider than the screen.
    let e = t.parentElement;
    while (e && e !== document.body) {
      const s = getComputedStyle(e);
      if ((s.overflowX === 'auto' || s.overflowX === 'scroll') && e.getBoundingClientRect().right <= window.innerWidth + 0.5) return false;
      e = e.parentElement;
    }
    return true;
  }).map((t) => t.id || t.className || 'table'), panel);
}

async function check(panel, name) {
  await page.waitForLoadState('networkidle');
  assert.equal(await overflow(page), 0, `${name}: the page is wider than the phone`);
  assert.deepEqual(await tablesContained(panel), [], `${name}: tables that break out of the screen`);
  const pres = await page.$$eval(`#${panel} pre`, (ps) => ps.map((p) => getComputedStyle(p).whiteSpace));
  assert.ok(pres.every((w) => w === 'pre'), `${name}: box-drawing tables keep their lines (${pres})`);
  const smallest = await smallestChartText(panel);
  if (smallest !== null) assert.ok(smallest >= 11, `${name}: chart text ${smallest.toFixed(1)} px`);
  await page.screenshot({ path: join(artifacts, `phone-${name}.png`), fullPage: true });
}

test('every panel fits a phone; its tables scroll in their own box; chart text ≥ 11 px', { timeout: 240000 }, async () => {
  await page.waitForSelector('#product-diff');
  await check('panel-shuffle', 'shuffle');
  await page.click('#tab-rotation');
  await page.waitForSelector('#rotation-plot');
  await page.waitForSelector('#identity-badge');
  await check('panel-rotation', 'rotation');
  await page.click('#tab-audit');
  await page.selectOption('#audit-preset', 'llama-2-7b');
  await page.fill('#audit-context', '4096');
  await page.click('#audit-run');
  await page.waitForSelector('#audit-verdict', { timeout: 200000 });
  await page.locator('#panel-audit details.terminal summary').click();
  await check('panel-audit', 'audit');
  await page.click('#tab-session');
  await page.waitForSelector('#session-title');
  await check('panel-session', 'session');
  await page.click('#tab-console');
  await page.selectOption('#console-command', 'lab');
  await page.fill('#console-body', '{}');
  await page.click('#console-run');
  await page.waitForSelector('#console-out [data-outcome]');
  await check('panel-console', 'every-command');
  assert.deepEqual(consoleErrors(problems), []);
  assert.deepEqual(problems.pageErrors, []);
});

test('keyboard: Tab reaches a heat-map cell, arrows move its readout; tabs take Home and End', async () => {
  await page.click('#tab-shuffle');
  await page.waitForSelector('#product-diff');
  const stops = await page.$$eval('#product-diff td', (t) => t.filter((c) => c.tabIndex === 0).length);
  assert.equal(stops, 1, 'one tab stop per heat map (roving)');
  await page.focus('#product-diff td[tabindex="0"]');
  const readout = page.locator('#product-diff').locator('xpath=ancestor::div[contains(@class,"heat")]').locator('.readout');
  assert.match(await readout.innerText(), /^position 0 ←2, dim 0: /);
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowDown');
  assert.match(await readout.innerText(), /^position 1 ←0, dim 1: /);
  assert.equal(await page.evaluate(() => document.activeElement.dataset.value !== undefined && document.activeElement.tabIndex), 0);
  await page.keyboard.press('End');
  assert.match(await readout.innerText(), /^position 1 ←0, dim 3: /);
  // Tab from outside lands on the cell last visited.
  await page.focus('#shuffle-course');
  let reached = false;
  for (let k = 0; k < 40 && !reached; k++) {
    await page.keyboard.press('Tab');
    reached = await page.evaluate(() => document.activeElement.closest && !!document.activeElement.closest('#product-diff'));
  }
  assert.ok(reached, 'Tab reaches the difference heat map');
  // Tabs: End selects the last, Home the first.
  await page.focus('#tab-shuffle');
  await page.keyboard.press('End');
  assert.equal(await page.getAttribute('#tab-console', 'aria-selected'), 'true');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'tab-console');
  await page.keyboard.press('Home');
  assert.equal(await page.getAttribute('#tab-shuffle', 'aria-selected'), 'true');
  assert.deepEqual(consoleErrors(problems), []);
});
