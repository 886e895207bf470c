// The threaded build in Chromium: used by itself on a cross-origin isolated page (COOP/COEP), with results
// identical to one thread; the silent single-thread fallback without those headers, with the reason in timings;
// an abort that reaches the engine inside a running call through the shared flag (isolated pages only).
import assert from 'node:assert/strict';
import { fork } from 'node:child_process';
import path from 'node:path';
import { after, before, test } from 'node:test';

import { root } from '../js/helpers.mjs';
import { launch, watch } from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

async function openApiPage(extra) {
  const child = fork(path.join(root, 'scripts/serve.mjs'), ['--port', '0', '--quiet', ...extra], { stdio: 'ignore' });
  const port = await new Promise((resolve, reject) => {
    child.once('message', (m) => resolve(m.port));
    child.once('exit', (c) => reject(new Error(`server exited with ${c}`)));
  });
  const context = await browser.newContext();
  const page = await context.newPage();
  const problems = await watch(context, page, (u) => u.hostname === '127.0.0.1' || u.protocol === 'blob:' || u.protocol === 'data:');
  await page.goto(`http://127.0.0.1:${port}/tests/browser/pages/api.html`);
  await page.waitForSelector('body[data-ready="true"]', { state: 'attached' });
  return { page, problems, close: async () => { await context.close(); child.kill(); } };
}

// Runs in the page: the same fill-mask and seeded continuation with `threads` threads.
async function runBoth(threads) {
  const { FillMask, TextGenerator } = window.wasmformer;
  const opts = { threads, cache: false };
  const fm = await FillMask.load('/models/wasmformer-bert-mini/', opts);
  const gen = await TextGenerator.load('/models/wasmformer-gpt2-mini/', opts);
  const fill = await fm.fill('And God said, Let there be [MASK]: and there was light.', { top_k: 5 });
  const g = await gen.complete('It is a truth universally acknowledged', { max_new_tokens: 30, do_sample: true, seed: 5 });
  const out = { fill: fill.results, text: g.text, timings: g.timings, fillTimings: fill.timings, engine: await fm.engineInfo() };
  await fm.dispose();
  await gen.dispose();
  return out;
}

test('cross-origin isolated: the threaded build runs, with the same results as one thread', async () => {
  const { page, problems, close } = await openApiPage([]);
  try {
    assert.equal(await page.evaluate(() => self.crossOriginIsolated), true);
    const one = await page.evaluate(runBoth, 1);
    const four = await page.evaluate(runBoth, 4);
    const auto = await page.evaluate(runBoth, undefined);
    assert.equal(one.timings.threads, 1);
    assert.match(one.timings.threading, /one thread: one thread was asked for/);
    assert.equal(four.timings.threads, 4);
    assert.match(four.timings.threading, /4 threads \(pthreads\)/);
    assert.equal(four.fillTimings.threads, 4);
    assert.equal(four.engine.backend, 'worker');
    assert.ok(auto.timings.threads >= 1 && auto.timings.threads <= 8);
    assert.equal(auto.timings.threads, Math.min(8, await page.evaluate(() => navigator.hardwareConcurrency)));
    assert.deepEqual(four.fill, one.fill);
    assert.equal(four.text, one.text);
    assert.ok(one.text.length > 0);

    // an abort raised before the worker runs the call reaches the engine through the shared flag: the engine
    // stops at its first layer (the JS-side checks are bypassed here on purpose), and the model stays usable
    const r = await page.evaluate(async () => {
      const fm = await window.wasmformer.FillMask.load('/models/wasmformer-bert-mini/', { threads: 2, cache: false });
      const ctl = new AbortController();
      ctl.abort();
      let error;
      try {
        await fm._client.call(fm._handle, 'fillMask', { text: 'Let there be [MASK].', options: { top_k: 1 } }, ctl.signal);
      } catch (e) {
        error = { name: e.name, message: e.message };
      }
      let bad;  // a C++ error in the threaded build arrives as an Error with the core's message
      try {
        await fm.fill('no mask in this text');
      } catch (e) {
        bad = e.message;
      }
      const after = await fm.fill('Let there be [MASK].', { top_k: 1 });
      await fm.dispose();
      return { error, bad, after: after.results[0].length };
    });
    assert.deepEqual(r.error, { name: 'AbortError', message: 'cancelled' });
    assert.match(r.bad, /\[MASK\]/);
    assert.equal(r.after, 1);
    assert.deepEqual(problems, []);
  } finally {
    await close();
  }
});

test('not isolated: one thread, silently, and timings say why', async () => {
  const { page, problems, close } = await openApiPage(['--no-isolation']);
  try {
    assert.equal(await page.evaluate(() => self.crossOriginIsolated), false);
    const r = await page.evaluate(runBoth, 4);
    assert.equal(r.timings.threads, 1);
    assert.match(r.timings.threading, /not cross-origin isolated/);
    assert.ok(r.text.length > 0);
    assert.deepEqual(problems, []);
  } finally {
    await close();
  }
});
