// The offline static site (npm run build:site) opened from file:// in headless Chromium: models load from the
// embedded scripts, fill-mask, a seeded continuation, the chat and the translation work, and no request goes anywhere but the folder itself.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { root } from '../js/helpers.mjs';
import { launch, openOffline } from './helpers.mjs';

test('the static site works from file:// with no network', async () => {
  const out = path.join(root, 'build/site-test');
  execFileSync('node', [path.join(root, 'scripts/build-site.mjs'), 'build/site-test'], { cwd: root, stdio: 'ignore' });
  mkdirSync(path.join(root, 'build/artifacts'), { recursive: true });
  const browser = await launch();
  try {
    const { page, problems } = await openOffline(browser, path.join(out, 'index.html'));
    assert.match(await page.textContent('#model-status'), /Loaded .*gpt2/);
    await page.fill('#fill-text', 'And God said, Let there be [MASK].');
    await page.click('#fill-run');
    await page.waitForSelector('.cand');
    assert.equal((await page.$$('.cand')).length, 5);
    await page.click('#gen-tab');
    await page.fill('#gen-max', '20');
    await page.click('#gen-run');
    await page.waitForFunction(() => document.querySelector('#gen-output').dataset.finish && !document.querySelector('#gen-run').disabled);
    assert.ok((await page.textContent('#gen-continuation')).length > 0);
    // the chat model, from its embedded GGUF (its template rendered by the @huggingface/jinja bundled in demo.js): the
    // first visit's example answered, then a conversation of our own
    assert.equal(await page.$eval('.chat-log li.assistant', (li) => li.dataset.finish), 'eos');
    await page.click('#chat-tab');
    await page.click('#chat-new');
    await page.fill('#chat-input', 'And God said, Let there be light: and there was light.');
    await page.click('#chat-send');
    await page.waitForFunction(() => document.querySelector('.chat-log li.assistant')?.dataset.finish);
    assert.equal(await page.$eval('.chat-log li.assistant', (li) => li.dataset.finish), 'eos');
    assert.match(await page.textContent('.chat-log li.assistant'), /light/);
    // the translation model, from its embedded folder: the first visit's example translated (Hosea 6:6, held out of its training)
    assert.ok(await page.$eval('#tr-output', (o) => o.dataset.finish));
    assert.match(await page.textContent('#tr-output'), /misericordia/);
    await page.screenshot({ path: path.join(root, 'build/artifacts/site-file-url.png'), fullPage: true });
    assert.deepEqual(problems, []);
  } finally {
    await browser.close();
  }
});
