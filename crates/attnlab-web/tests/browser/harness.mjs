// Shared set-up of the browser tests: start `attnlab serve` on a free loopback port, launch
// Debian's chromium through playwright-core (never a downloaded browser), collect console
// errors and every request that leaves the page's origin.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

export const artifacts = process.env.ATTNLAB_ARTIFACTS || join(process.cwd(), 'artifacts');
mkdirSync(artifacts, { recursive: true });

/** Starts the server; resolves to { url, stop }. */
export async function startServer() {
  const bin = process.env.ATTNLAB_BIN;
  if (!bin) throw new Error('ATTNLAB_BIN must name the attnlab binary (built with --features serve)');
  const child = spawn(bin, ['serve', '--addr', '127.0.0.1:0'], { stdio: ['ignore', 'ignore', 'pipe'] });
  const url = await new Promise((resolve, reject) => {
    let err = '';
    const timer = setTimeout(() => reject(new Error(`server did not start: ${err}`)), 20000);
    child.stderr.on('data', (d) => {
      err += d;
      const m = /listening on (http:\/\/\S+)/.exec(err);
      if (m) { clearTimeout(timer); resolve(m[1]); }
    });
    child.on('exit', (code) => reject(new Error(`server exited (${code}): ${err}`)));
  });
  const stop = () => new Promise((resolve) => {
    if (child.exitCode !== null) return resolve(child.exitCode);
    child.on('exit', (code, signal) => resolve(code ?? signal));
    child.kill('SIGINT');
  });
  return { url, stop, child };
}

/** Launches chromium headless with no network of its own; resolves to { browser, page, problems }. */
export const DESKTOP = { width: 1366, height: 900 };
export const PHONE = { width: 390, height: 844 };

export async function launch({ offline = false, viewport = { width: 1280, height: 900 } } = {}) {
  const args = [
    '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
    '--disable-background-networking', '--disable-component-update', '--disable-sync',
  ];
  if (offline) args.push('--host-resolver-rules=MAP * ~NOTFOUND');
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    args,
    headless: true,
  });
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  const problems = { console: [], requests: [], pageErrors: [] };
  page.on('console', (m) => { if (m.type() === 'error') problems.console.push(m.text()); });
  page.on('pageerror', (e) => problems.pageErrors.push(String(e)));
  page.on('request', (r) => problems.requests.push(r.url()));
  return { browser, page, problems };
}

/** The text of the element `selector` (trimmed). */
export async function text(page, selector) {
  return (await page.locator(selector).first().innerText()).trim();
}

/** POST /api/<command> (spaces as slashes) with `body`; resolves to { status, json }. */
export async function post(server, command, body, query = '') {
  const res = await fetch(server.url + 'api/' + command.split(' ').join('/') + query, { method: 'POST', body: JSON.stringify(body) });
  return { status: res.status, json: await res.json() };
}

/** How far the page is wider than its viewport (0 when nothing overflows). */
export async function overflow(page) {
  return page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
}

/** Opens the page and waits for it to be ready. */
export async function open(page, server) {
  await page.goto(server.url);
  await page.waitForSelector('body[data-ready="true"]');
}

/** Console errors other than the failed loads of answers that are the test's subject (400s). */
export function consoleErrors(problems, allowed = ['status of 400']) {
  return problems.console.filter((m) => !allowed.some((a) => m.includes(a)));
}
