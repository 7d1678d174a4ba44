// The HTML reports (`attnlab … --html FILE`) open in chromium with no network: no console
// error, no request but the file itself, the charts inline, readable with script disabled.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { launch, artifacts, overflow, DESKTOP } from './harness.mjs';

const dir = process.env.ATTNLAB_REPORTS;

test('every HTML report opens offline without errors or requests', { skip: !dir && 'ATTNLAB_REPORTS not set' }, async () => {
  const files = readdirSync(dir).filter((f) => f.endsWith('.html'));
  assert.ok(files.length > 0, `no reports in ${dir}`);
  const { browser, page, problems } = await launch({ offline: true, viewport: DESKTOP });
  try {
    for (const f of files) {
      const url = pathToFileURL(join(dir, f)).href;
      problems.requests.length = 0;
      await page.goto(url);
      await page.waitForLoadState('load');
      assert.deepEqual(problems.requests, [url], `${f}: only the file itself is loaded`);
      assert.deepEqual(problems.console, [], `${f}: console errors`);
      assert.deepEqual(problems.pageErrors, [], `${f}: page errors`);
      const source = readFileSync(join(dir, f), 'utf8');
      assert.ok(!/<script/i.test(source), `${f} has no script`);
      const outcome = await page.locator('.outcome').first().innerText();
      assert.match(outcome, /^(holds|fails)$/);
      const figures = await page.locator('figure svg').count();
      const declared = (source.match(/<figure id="chart-/g) || []).length;
      assert.equal(figures, declared, `${f}: every chart is an inline SVG`);
      // Nothing wider than the window at 1366: tables and the terminal text scroll in their box.
      assert.equal(await overflow(page), 0, `${f}: ${await page.evaluate(() => document.documentElement.scrollWidth)} px wide at 1366`);
      if (f === 'lab.html') {
        // Table (b) of the lab: one column per frequency of the set, one value per cell.
        const heads = await page.$$eval('th', (t) => t.map((x) => x.textContent));
        assert.ok(heads.includes('set[0]') && heads.includes('set[1]'), `columns ${heads.filter((x) => x.startsWith('set'))}`);
      }
      await page.screenshot({ path: join(artifacts, `report-${f.replace('.html', '')}.png`), fullPage: false });
    }
  } finally {
    await browser.close();
  }
});
