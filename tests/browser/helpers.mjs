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
