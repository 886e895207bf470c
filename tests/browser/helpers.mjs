// Shared by the browser tests: Debian's Chromium headless with the flags this machine needs, and a page watcher
// that collects page errors, console errors and any request outside the allowed origins.
import { chromium } from 'playwright-core';

export function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
           '--disable-component-update', '--disable-sync'],
  });
}

// allowed(url: URL) → true for requests that may go out; everything else is aborted and reported.
export async function watch(context, page, allowed) {
  const problems = [];
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console error: ${m.text()}`); });
  await context.route('**/*', (route) => {
    const u = new URL(route.request().url());
    if (!allowed(u)) {
      problems.push(`request not allowed: ${u.href}`);
      return route.abort();
    }
    return route.continue();
  });
  return problems;
}

// A page opened from file:// that may reach nothing but its own folder (file:, blob:, data:), once it says it is
// ready (body[data-ready="true"]).
export async function openOffline(browser, htmlPath) {
  const context = await browser.newContext();
  const page = await context.newPage();
  const problems = await watch(context, page, (u) => ['file:', 'blob:', 'data:'].includes(u.protocol));
  await page.goto('file://' + htmlPath);
  await page.waitForSelector('body[data-ready="true"]', { timeout: 120000 });
  return { page, problems };
}
