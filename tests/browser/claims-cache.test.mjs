// The README's claim that URL and hub downloads are "cached with the Cache API", in headless Chromium: the package's
// worker keeps each downloaded file in the cache named CACHE_NAME, a second load of the same folder asks the server
// for no file (only for its model-files.json listing), with the same (golden) results; cache: false and
// clearCache() download again. The server answers with `cache-control: no-store`, so the browser's HTTP cache
// cannot be what spares the requests.
import assert from 'node:assert/strict';
import { createReadStream, existsSync, statSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { after, before, test } from 'node:test';

import { fixture, readSafetensors, root } from '../js/helpers.mjs';
import { launch, watch } from './helpers.mjs';

const TYPES = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript', '.mjs': 'text/javascript', '.json': 'application/json', '.wasm': 'application/wasm' };
const FOLDER = '/tests/data/fixtures/bert-tiny/';
const FILES = ['config.json', 'model.safetensors', 'tokenizer_config.json', 'vocab.txt'];
const TEXT = 'the capital of france is [MASK]. it has [MASK] people';

// the golden top-5 of each mask (PyTorch's logits)
const gold = readSafetensors(fixture('bert-tiny/golden.safetensors')).mask_logits;
const V = gold.shape[1];
const GOLDEN_TOP5 = [0, 1].map((r) => {
  const row = gold.data.subarray(r * V, (r + 1) * V);
  return [...row.keys()].sort((a, b) => row[b] - row[a]).slice(0, 5);
});

let browser, server, origin;
const requests = [];
// the server honours Range requests (206), or answers them with the whole file; with stallAt set, a whole-file GET
// stops after that many bytes until the client goes away (or 20 s pass), so that a load aborted past that point is
// aborted before the file is whole, however fast the machine
const serving = { ranges: true, stallAt: 0 };

before(async () => {
  server = http.createServer((req, res) => {
    const name = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    requests.push(`${req.method} ${name}${req.headers.range ? ` ${req.headers.range}` : ''}`);
    const file = path.join(root, name);
    if (!file.startsWith(root + path.sep) || !existsSync(file) || !statSync(file).isFile()) {
      res.writeHead(404, { 'cache-control': 'no-store' });
      return res.end();
    }
    const { size, mtimeMs } = statSync(file);
    const range = serving.ranges && /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    const from = range ? Number(range[1]) : 0;
    res.writeHead(range ? 206 : 200, { 'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream', 'content-length': size - from,
                                       'cache-control': 'no-store', etag: `"${size}-${Math.round(mtimeMs)}"`,
                                       ...(range && { 'content-range': `bytes ${from}-${size - 1}/${size}` }) });
    if (req.method === 'HEAD') return res.end();
    if (!serving.stallAt || from !== 0 || size <= serving.stallAt) return createReadStream(file, { start: from }).pipe(res);
    const stallAt = serving.stallAt;
    createReadStream(file, { end: stallAt - 1 }).on('end', () => {
      const rest = setTimeout(() => createReadStream(file, { start: stallAt }).pipe(res), 20000);
      res.on('close', () => clearTimeout(rest));
    }).pipe(res, { end: false });
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${server.address().port}`;
  browser = await launch();
});
after(async () => {
  await browser?.close();
  server?.closeAllConnections?.();
  await new Promise((r) => server?.close(r) ?? r());
});

// In the page: load the folder, fill the golden text, and wait (up to 10 s) until the cache holds `expect` entries.
async function loadOnce({ folder, opts, expect }) {
  const { FillMask, CACHE_NAME } = window.wasmformer;
  const fm = await FillMask.load(folder, opts);
  const { results } = await fm.fill('the capital of france is [MASK]. it has [MASK] people', { top_k: 5 });
  await fm.dispose();
  let keys = [];
  for (let i = 0; i < 100; i++) {
    keys = (await (await caches.open(CACHE_NAME)).keys()).map((r) => new URL(r.url).pathname).sort();
    if (keys.length >= expect) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return { ids: results.map((l) => l.map((c) => c.token)), scores: results.map((l) => l.map((c) => c.score)), keys, cacheName: CACHE_NAME };
}

const fileGets = () => requests.filter((r) => r.startsWith(`GET ${FOLDER}`) && !r.endsWith('/model-files.json')).map((r) => r.slice(4 + FOLDER.length)).sort();

// The cache's keys (path and query, sorted) once done(keys) holds, polled for up to 10 s: the cache is written beside
// the download, not before the load returns.
async function cacheKeys(page, done) {
  let keys = [];
  for (let i = 0; i < 100; i++, await new Promise((r) => setTimeout(r, 100))) {
    keys = await page.evaluate(async () => (await (await caches.open(window.wasmformer.CACHE_NAME)).keys()).map((r) => new URL(r.url).pathname + new URL(r.url).search).sort());
    if (done(keys)) break;
  }
  return keys;
}

// A fresh context on the API page, ready; fn(page) runs there, then no request may have failed or left the origin.
async function onApiPage(fn) {
  const context = await browser.newContext();
  const page = await context.newPage();
  const problems = await watch(context, page, (u) => u.origin === origin || u.protocol === 'blob:' || u.protocol === 'data:');
  try {
    await page.goto(`${origin}/tests/browser/pages/api.html`);
    await page.waitForSelector('body[data-ready="true"]', { state: 'attached' });
    await fn(page);
    assert.deepEqual(problems, []);
  } finally {
    await context.close();
  }
}

test('browser: a folder URL is kept in the Cache API; the second load downloads no file; cache: false and clearCache() download again', async () => {
  await onApiPage(async (page) => {
    assert.equal(await page.evaluate(() => isSecureContext && typeof caches === 'object'), true);

    const first = await page.evaluate(loadOnce, { folder: FOLDER, opts: {}, expect: FILES.length });
    assert.equal(first.cacheName, 'wasmformer-v1');
    assert.deepEqual(first.ids, GOLDEN_TOP5);
    assert.deepEqual(fileGets(), FILES);
    assert.deepEqual(first.keys, FILES.map((n) => FOLDER + n), 'every file the model needed is in the cache');

    requests.length = 0;
    const second = await page.evaluate(loadOnce, { folder: FOLDER, opts: {}, expect: FILES.length });
    assert.deepEqual(fileGets(), [], 'the second load read every file from the cache');
    assert.deepEqual(second.ids, first.ids);
    assert.deepEqual(second.scores, first.scores);

    requests.length = 0;
    await page.evaluate(loadOnce, { folder: FOLDER, opts: { cache: false }, expect: 0 });
    assert.deepEqual(fileGets(), FILES, 'cache: false downloads');

    await page.evaluate(() => window.wasmformer.clearCache());
    assert.deepEqual(await page.evaluate(async () => (await caches.keys()).filter((k) => k === window.wasmformer.CACHE_NAME)), []);
    requests.length = 0;
    const third = await page.evaluate(loadOnce, { folder: FOLDER, opts: {}, expect: FILES.length });
    assert.deepEqual(fileGets(), FILES, 'after clearCache() the files are downloaded again');
    assert.deepEqual(third.ids, GOLDEN_TOP5);
  });
});

// A map of file names to URL objects (wasmformer-models' translation model is given so, each file where the bundler put
// it): in the page's worker, http files through the same cache, a data: URL (Vite inlines small files so) read as
// is; and a task the imported default models do not cover is named in the error.
test('browser: a map of file names to URLs loads (data: URLs too) and is cached like a folder; a default model that is not there is named', async () => {
  await onApiPage(async (page) => {
    const config = (await import('node:fs')).readFileSync(path.join(root, FOLDER, 'config.json')).toString('base64');
    const load = ({ folder, config }) => (async () => {
      const { FillMask } = window.wasmformer;
      const map = {
        'config.json': new URL(`data:application/json;base64,${config}`),
        'model.safetensors': new URL(`${folder}model.safetensors`, location.href),
        'tokenizer_config.json': new URL(`${folder}tokenizer_config.json`, location.href),
        'vocab.txt': new URL(`${folder}vocab.txt`, location.href),
      };
      const fm = await FillMask.load(map);
      const { results } = await fm.fill('the capital of france is [MASK]. it has [MASK] people', { top_k: 5 });
      await fm.dispose();
      return results.map((l) => l.map((c) => c.token));
    })();
    await page.evaluate(() => window.wasmformer.clearCache());
    requests.length = 0;
    assert.deepEqual(await page.evaluate(load, { folder: FOLDER, config }), GOLDEN_TOP5);
    assert.deepEqual(fileGets(), ['model.safetensors', 'tokenizer_config.json', 'vocab.txt'], 'one GET per http file, none for the data: one');
    const cached = await cacheKeys(page, (k) => k.length >= 3);
    assert.deepEqual(cached, ['model.safetensors', 'tokenizer_config.json', 'vocab.txt'].map((n) => FOLDER + n));
    requests.length = 0;
    assert.deepEqual(await page.evaluate(load, { folder: FOLDER, config }), GOLDEN_TOP5);
    assert.deepEqual(fileGets(), [], 'the second load read every file from the cache');

    const err = await page.evaluate(async () => {
      globalThis[Symbol.for('wasmformer.defaultModels')] = { 'fill-mask': { source: 'x.gguf' } };
      try {
        await window.wasmformer.pipeline('summarization');
        return null;
      } catch (e) {
        return e.message;
      }
    });
    assert.equal(err, 'no model given for summarization, and the imported default models have none for it (they cover fill-mask): pass a model');
  });
});

// A big file (16 MiB or more) is cached in parts as it arrives: a load cut short (here aborted once 20 of BERT-mini's
// 25.4 MB are in) leaves its first part in the cache, and the next load asks the server only for the rest, with a
// Range request; once whole, nothing is downloaded again. A server that ignores ranges gets the file asked for whole.
test('browser: a big file\'s download cut short goes on from its cached parts next time (Range); then it is read from the cache alone', async () => {
  const BIG = '/models/wasmformer-bert-mini/';
  const TEXT = 'And the children of Israel went out of the land of [MASK].';
  const load = ({ folder, text, abortAt }) => (async () => {
    const { FillMask } = window.wasmformer;
    const ctl = new AbortController();
    const progress_callback = (e) => { if (abortAt && e.status === 'progress' && e.file === 'model.safetensors' && e.loaded >= abortAt) ctl.abort(); };
    try {
      const fm = await FillMask.load(folder, { signal: ctl.signal, progress_callback });
      const { results } = await fm.fill(text, { top_k: 5 });
      await fm.dispose();
      return results[0].map((c) => [c.token, c.score]);
    } catch (e) {
      return e.name;
    }
  })();
  const bigGets = () => requests.filter((r) => r.startsWith(`GET ${BIG}model.safetensors`)).map((r) => r.slice(`GET ${BIG}model.safetensors`.length).trim());
  await onApiPage(async (page) => {
    const want = await page.evaluate(load, { folder: BIG, text: TEXT });  // the reference: a whole download
    assert.equal(want.length, 5);
    await page.evaluate(() => window.wasmformer.clearCache());
    for (const ranges of [true, false]) {
      serving.ranges = ranges;
      requests.length = 0;
      serving.stallAt = 21 << 20;  // the abort's message reaches the download before its end, on any machine
      assert.equal(await page.evaluate(load, { folder: BIG, text: TEXT, abortAt: 20 << 20 }), 'AbortError');
      serving.stallAt = 0;
      let cached = await cacheKeys(page, (k) => k.includes(`${BIG}model.safetensors?wasmformer-part=0`));
      assert.ok(cached.includes(`${BIG}model.safetensors?wasmformer-part=0`), cached.join(', '));
      assert.ok(!cached.includes(`${BIG}model.safetensors`) && !cached.includes(`${BIG}model.safetensors?wasmformer-part=1`), cached.join(', '));
      requests.length = 0;
      assert.deepEqual(await page.evaluate(load, { folder: BIG, text: TEXT }), want);
      // with ranges: the rest from byte 16 MiB; without: the Range request answered whole, which is then read whole
      assert.deepEqual(bigGets(), [`bytes=${16 << 20}-`], requests.join(', '));
      cached = await cacheKeys(page, (k) => k.includes(`${BIG}model.safetensors?wasmformer-part=1`));
      assert.ok(cached.includes(`${BIG}model.safetensors?wasmformer-part=1`), cached.join(', '));
      requests.length = 0;
      assert.deepEqual(await page.evaluate(load, { folder: BIG, text: TEXT }), want);
      assert.deepEqual(bigGets(), [], 'the third load reads both parts from the cache');
      await page.evaluate(() => window.wasmformer.clearCache());
    }
    serving.ranges = true;
  });
});
