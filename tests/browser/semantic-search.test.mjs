// examples/semantic-search built with the bundled sentence-embedding model and opened from file:// in headless
// Chromium: the query is embedded in the page, verses are ranked, and no request leaves the folder. A verse's own
// words find it first; the same verse in modern English (the World English Bible's wording, a paraphrase the model
// never saw: the corpus is books it held out) finds it among the first three.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { test } from 'node:test';

import { root } from '../js/helpers.mjs';
import { launch, openOffline } from './helpers.mjs';

test('the semantic-search example works from file:// and ranks by meaning', async () => {
  const out = path.join(root, 'build/semantic-search-test');
  execFileSync('node', [path.join(root, 'examples/semantic-search/build.mjs'), '--out', out], { cwd: root, stdio: 'ignore' });
  const browser = await launch();
  try {
    const { page, problems } = await openOffline(browser, path.join(out, 'index.html'));
    const search = async (q) => {
      await page.fill('#query', q);
      await page.waitForFunction((t) => document.body.dataset.searched === t, q);
      return page.$$eval('.hit', (hits) => hits.map((h) => h.dataset.key));
    };
    const own = await search('To every thing there is a season, and a time to every purpose under the heaven:');
    assert.equal(own.length, 10);
    assert.equal(own[0], 'Ecclesiastes 3:1');
    const paraphrase = await search('For everything there is a season, and a time for every purpose under heaven');
    assert.ok(paraphrase.slice(0, 3).includes('Ecclesiastes 3:1'), paraphrase.join(', '));
    assert.match(await page.textContent('#timing'), /query embedded in [\d.]+ ms, 1573 verses ranked in [\d.]+ ms/);
    assert.deepEqual(problems, []);
  } finally {
    await browser.close();
  }
});
