// Which files a model is read from: the committed model-files.json listings match their folders (regenerate with
// `node web/bin/model-files.mjs FOLDER`), and a folder served with one is loaded without a single probe.
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';

import { FillMask, Model } from 'wasmformer';
import { MANIFEST, listing } from '../../web/bin/model-files.mjs';
import { fixture, root, serve } from './helpers.mjs';

const FOLDERS = ['models/wasmformer-bert-mini', 'models/wasmformer-gpt2-mini', 'models/wasmformer-embed-mini', 'models/wasmformer-chat-mini',
                 'models/wasmformer-translate-en-es', 'tests/data/fixtures/bert-tiny', 'tests/data/fixtures/gpt2-tiny'];

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

// The top 5 of a fixed text from a FillMask, or from the model a source loads (then disposed).
async function fills(m) {
  const own = !(m instanceof FillMask);
  if (own) m = await FillMask.load(m);
  try {
    return (await m.fill('the [MASK] of the land', { top_k: 5 })).results;
  } finally {
    if (own) await m.dispose();
  }
}

// A map of file names to URL objects (what wasmformer-models gives for its folder model, each file where a bundler
// put it, under the bundler's own name): loaded as the folder is, each file asked for only when the engine wants it.
test('a map of file names to URL objects loads as its folder does: file:, http and data: URLs; a missing file is named', async () => {
  const dir = fixture('bert-tiny');
  const want = await fills(dir);
  const names = readdirSync(dir).filter((n) => n !== 'golden.safetensors');
  // file: URLs (read from disk in Node), under other names than the keys, as a bundler renames them
  const renamed = mkdtempSync(path.join(os.tmpdir(), 'wf-url-map-'));
  for (const n of names) copyFileSync(path.join(dir, n), path.join(renamed, `${n.replace('.', '-3f9a1c.')}`));
  const fromDisk = Object.fromEntries(names.map((n) => [n, pathToFileURL(path.join(renamed, n.replace('.', '-3f9a1c.')))]));
  const a = await FillMask.load(fromDisk);
  assert.deepEqual(await fills(a), want);
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
    assert.deepEqual(await fills(b), want);
    assert.deepEqual(srv.requests.sort(), ['GET /model.safetensors', 'GET /vocab.txt']);
    assert.ok(progress.length && progress.every((e) => e.total > 0), 'every size is known before the first byte');
    await b.dispose();
    // a file that is not there: its name and URL in the error, and the engine still loads the next model
    const missing = { ...urls, 'vocab.txt': new URL('no-such-vocab.txt', srv.url) };
    await assert.rejects(FillMask.load(missing, { cache: false }), /vocab\.txt: http:\/\/127\.0\.0\.1:\d+\/no-such-vocab\.txt: not found/);
    const c = await FillMask.load(fromDisk);
    assert.deepEqual(await fills(c), want);
    await c.dispose();
  } finally {
    await srv.close();
    rmSync(renamed, { recursive: true, force: true });
  }
});

// A download that breaks off (the connection dropped) goes on from the first byte not yet read: with a Range request
// where the server honours it, else from the whole file again, its first bytes skipped; after three failed tries the
// error names the file and the byte. cut(n): how many times the server drops model.safetensors after its first MiB.
async function flakyServer(dir, { cut, ranges }) {
  const requests = [];
  let cuts = 0;
  const server = http.createServer((req, res) => {
    const name = decodeURIComponent(new URL(req.url, 'http://x').pathname).slice(1);
    requests.push(`${req.method} ${name}${req.headers.range ? ` ${req.headers.range}` : ''}`);
    let body;
    try {
      body = readFileSync(path.join(dir, name));
    } catch {
      res.writeHead(404);
      return res.end();
    }
    const m = ranges && /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    const from = m ? Number(m[1]) : 0;
    const headers = { 'content-type': 'application/octet-stream', 'content-length': body.length - from };
    if (m) headers['content-range'] = `bytes ${from}-${body.length - 1}/${body.length}`;
    res.writeHead(m ? 206 : 200, headers);
    if (name === 'model.safetensors' && cuts < cut) {
      cuts++;
      res.write(body.subarray(from, from + (1 << 20)));
      return setTimeout(() => res.socket.destroy(), 20);
    }
    res.end(body.subarray(from));
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  return { url: `http://127.0.0.1:${server.address().port}/`, requests, close: () => new Promise((r) => { server.closeAllConnections(); server.close(r); }) };
}

test('a download that breaks off is resumed (Range, or the whole file again) and gives the same model; three breaks more are an error', async () => {
  const dir = fixture('bert-tiny');
  const want = await fills(dir);
  for (const ranges of [true, false]) {
    const srv = await flakyServer(dir, { cut: 2, ranges });
    try {
      const fm = await FillMask.load(srv.url, { cache: false });
      assert.deepEqual(await fills(fm), want);
      await fm.dispose();
      const gets = srv.requests.filter((r) => r.startsWith('GET model.safetensors'));
      assert.equal(gets.length, 3, gets.join(', '));
      assert.equal(gets[0], 'GET model.safetensors');
      // the tries ask for what is missing: further on each time where the server honours Range (each answer drops after
      // its first MiB), from the same byte where it sends the whole file again
      const at = gets.slice(1).map((r) => Number(/bytes=(\d+)-$/.exec(r)?.[1]));
      assert.ok(at[0] > 0 && (ranges ? at[1] > at[0] : at[1] === at[0]), gets.join(', '));
    } finally {
      await srv.close();
    }
  }
  const srv = await flakyServer(dir, { cut: 4, ranges: false });  // each answer starts again and drops after its first MiB
  try {
    await assert.rejects(FillMask.load(srv.url, { cache: false }), /model\.safetensors: the download broke off at byte \d+ and could not be resumed \(3 tries; /);
    assert.equal(srv.requests.filter((r) => r.startsWith('GET model.safetensors')).length, 4);
  } finally {
    await srv.close();
  }
});
