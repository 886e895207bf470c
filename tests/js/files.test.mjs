// Which files a model is read from: the committed model-files.json listings match their folders (regenerate with
// `node web/bin/model-files.mjs FOLDER`), and a folder served with one is loaded without a single probe.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { Model } from 'wasmformer';
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
