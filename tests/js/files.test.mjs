// Which files a model is read from: the committed model-files.json listings match their folders (regenerate with
// `node web/bin/model-files.mjs FOLDER`), and a folder served with one is loaded without a single probe.
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';

import { FillMask, Model } from 'wasmformer';
import { MANIFEST, listing } from '../../web/bin/model-files.mjs';
import { fixture, root, serve } from './helpers.mjs';

const FOLDERS = ['models/wasmformer-bert-mini', 'models/wasmformer-gpt2-mini', 'tests/data/fixtures/bert-tiny', 'tests/data/fixtures/gpt2-tiny'];

test('every committed model-files.json lists its folder as it is', () => {
  for (const f of FOLDERS) {
    const file = path.join(root, f, MANIFEST);
    assert.ok(existsSync(file), `${f} has no ${MANIFEST}`);
    assert.deepEqual(JSON.parse(readFileSync(file, 'utf8')), listing(path.join(root, f)), `${f}/${MANIFEST} is stale: node web/bin/model-files.mjs ${f}`);
  }
});

test('a folder with model-files.json loads with no probing: one GET per file it needs', async () => {
  const srv = await serve(fixture('bert-tiny'));
  try {
    const m = await Model.load(srv.url, { cache: false });
    assert.deepEqual(m.info.tasks, ['feature-extraction', 'fill-mask']);
    assert.deepEqual(srv.requests.sort(), ['GET /config.json', 'GET /model-files.json', 'GET /model.safetensors', 'GET /tokenizer_config.json', 'GET /vocab.txt']);
    await m.dispose();
  } finally {
    await srv.close();
  }
});

// A map of file names to URL objects (what wasmformer-models gives for its folder model, each file where a bundler
// put it, under the bundler's own name): loaded as the folder is, each file asked for only when the engine wants it.
test('a map of file names to URL objects loads as its folder does: file:, http and data: URLs; a missing file is named', async () => {
  const dir = fixture('bert-tiny');
  const text = 'the [MASK] of the land';
  const folder = await FillMask.load(dir);
  const want = (await folder.fill(text, { top_k: 5 })).results;
  await folder.dispose();
  const names = readdirSync(dir).filter((n) => n !== 'golden.safetensors');
  // file: URLs (read from disk in Node), under other names than the keys, as a bundler renames them
  const renamed = mkdtempSync(path.join(os.tmpdir(), 'wf-url-map-'));
  for (const n of names) copyFileSync(path.join(dir, n), path.join(renamed, `${n.replace('.', '-3f9a1c.')}`));
  const fromDisk = Object.fromEntries(names.map((n) => [n, pathToFileURL(path.join(renamed, n.replace('.', '-3f9a1c.')))]));
  const a = await FillMask.load(fromDisk);
  assert.deepEqual((await a.fill(text, { top_k: 5 })).results, want);
  await a.dispose();
  // http URLs: one GET per file the engine needs (none for the others), each size known before the first byte
  const srv = await serve(dir);
  try {
    const urls = Object.fromEntries(names.map((n) => [n, new URL(n, srv.url)]));
    // the small files as data: URLs, as Vite inlines files under 4 KB
    for (const n of ['config.json', 'tokenizer_config.json'])
      urls[n] = new URL(`data:application/json;base64,${readFileSync(path.join(dir, n)).toString('base64')}`);
    const progress = [];
    const b = await FillMask.load(urls, { cache: false, progress_callback: (e) => e.status === 'progress_total' && progress.push(e) });
    assert.deepEqual((await b.fill(text, { top_k: 5 })).results, want);
    assert.deepEqual(srv.requests.sort(), ['GET /model.safetensors', 'GET /vocab.txt']);
    assert.ok(progress.length && progress.every((e) => e.total > 0), 'every size is known before the first byte');
    await b.dispose();
    // a file that is not there: its name and URL in the error, and the engine still loads the next model
    const missing = { ...urls, 'vocab.txt': new URL('no-such-vocab.txt', srv.url) };
    await assert.rejects(FillMask.load(missing, { cache: false }), /vocab\.txt: http:\/\/127\.0\.0\.1:\d+\/no-such-vocab\.txt: not found/);
    const c = await FillMask.load(fromDisk);
    assert.deepEqual((await c.fill(text, { top_k: 5 })).results, want);
    await c.dispose();
  } finally {
    await srv.close();
    rmSync(renamed, { recursive: true, force: true });
  }
});
