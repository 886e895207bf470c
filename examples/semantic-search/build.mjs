// Builds the semantic-search page: embeds corpus.json at build time (in Node, with the package), stores the
// vectors quantized to int8 (a scale per verse) in one script file, and writes a static page that embeds the query
// in the browser and ranks every verse by cosine similarity. The page works from any static host and from file://
// (one classic script, the engine inlined, the model and the vectors in script files: a file:// page can fetch
// nothing).
//
//   node examples/semantic-search/build.mjs [--model <folder or .gguf>] [--corpus corpus.json] [--out build/semantic-search]
//
// Default model: the bundled sentence-embedding model (wasmformer-models' feature-extraction GGUF).
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Model, terminate } from 'wasmformer';
import { models } from 'wasmformer-models';
import { singleFileScript } from '../../scripts/single-file.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const modelPath = arg('model', models['feature-extraction'] ? fileURLToPath(models['feature-extraction']) : null);
if (!modelPath) throw new Error('no --model given and wasmformer-models has no feature-extraction model');
const corpus = JSON.parse(readFileSync(arg('corpus', path.join(here, 'corpus.json')), 'utf8'));
const out = path.resolve(arg('out', path.join(root, 'build/semantic-search')));

// the model's files, as the page will load them (name → base64)
const files = {};
if (statSync(modelPath).isFile()) {
  files[path.basename(modelPath)] = readFileSync(modelPath).toString('base64');
} else {
  const walk = (dir, prefix) => {
    for (const n of readdirSync(dir)) {
      const p = path.join(dir, n);
      if (statSync(p).isDirectory()) walk(p, `${prefix}${n}/`);
      else if (!/^golden|\.md$/.test(n)) files[prefix + n] = readFileSync(p).toString('base64');
    }
  };
  walk(modelPath, '');
}

// embed the corpus: unit vectors, each stored as int8 with its scale (cosine = scale · Σ q·x for a unit query x)
const t0 = performance.now();
const m = await Model.load(modelPath);
const texts = corpus.verses.map((v) => v.text);
const E = m.info.n_embd;
const q8 = new Int8Array(texts.length * E), scales = new Float32Array(texts.length);
for (let i = 0; i < texts.length; i += 64) {
  const { data } = await m.embed(texts.slice(i, i + 64), { pooling: 'mean', normalize: true });
  for (let r = 0; r < data.length / E; r++) {
    const row = data.subarray(r * E, (r + 1) * E);
    const scale = Math.max(...row.map(Math.abs)) / 127 || 1;
    scales[i + r] = scale;
    for (let j = 0; j < E; j++) q8[(i + r) * E + j] = Math.round(row[j] / scale);
  }
}
await m.dispose();
terminate();
const seconds = (performance.now() - t0) / 1000;

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const b64 = (a) => Buffer.from(a.buffer, a.byteOffset, a.byteLength).toString('base64');
writeFileSync(path.join(out, 'model.js'), `globalThis.WF_SEARCH_MODEL = ${JSON.stringify(files)};\n`);
writeFileSync(path.join(out, 'corpus.js'), `globalThis.WF_SEARCH_CORPUS = ${JSON.stringify({
  source: corpus.source, dims: E, keys: corpus.verses.map((v) => v.key), texts, vectors: b64(q8), scales: b64(scales) })};\n`);

// the page's script: the single-file engine (wasm inlined), the worker from a Blob URL, as for the offline demo
writeFileSync(path.join(out, 'search.js'), await singleFileScript(path.join(here, 'search.js')));
writeFileSync(path.join(out, 'index.html'), readFileSync(path.join(here, 'index.html'), 'utf8'));
const size = (f) => (statSync(path.join(out, f)).size / 1e6).toFixed(2);
console.log(`embedded ${texts.length} verses (${E} dimensions) in ${seconds.toFixed(1)} s; wrote ${path.relative(root, out)}/: index.html, ` +
            `search.js (${size('search.js')} MB), model.js (${size('model.js')} MB), corpus.js (${size('corpus.js')} MB)`);
console.log(`open it: file://${path.join(out, 'index.html')}`);
if (!existsSync(path.join(root, 'dist/wasmformer-single.mjs'))) console.warn('dist/wasmformer-single.mjs is missing: run npm run build:wasm');
