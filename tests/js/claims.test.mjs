// The README's claims that no other test checked, against the package as a user imports it, with numbers compared to
// the PyTorch goldens of the fixtures (tests/data/fixtures/*/golden.safetensors):
//   1. BF16 and F16 safetensors checkpoints (converted here from the F32 fixtures)
//   2. GGUF version 2 files (and versions 1 and 4 refused, naming the version)
//   3. model folders whose tokenizer is only tokenizer.json
//   4. Hugging Face repo URLs and repo ids (with a revision) → the hub's URLs (a stand-in fetch: no network here)
//   5. downloads kept in the Cache API (Node has no `caches`: an in-memory CacheStorage stands in; the browser's own
//      Cache API is checked in tests/browser/claims-cache.test.mjs)
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';

import { CACHE_NAME, FillMask, TextGenerator, Tokenizer, clearCache, hubSource } from 'wasmformer';
import { fixture, logSoftmax, readSafetensors, root, serve } from './helpers.mjs';
import { bertTokenizerJson, gpt2TokenizerJson } from './hf-tokenizer-json.mjs';

const BERT = fixture('bert-tiny');
const GPT2 = fixture('gpt2-tiny');
// the texts the goldens were made from (their input_ids are checked below)
const BERT_TEXT = 'the capital of france is [MASK]. it has [MASK] people';
const GPT2_PROMPT = 'The dog was found in a field';

const tmpRoot = mkdtempSync(path.join(os.tmpdir(), 'wf-claims-'));
after(() => rmSync(tmpRoot, { recursive: true, force: true }));
const tmpDir = (name) => mkdtempSync(path.join(tmpRoot, `${name}-`));

// ------------------------------------------------------------------------------------------------ the goldens
const goldBert = readSafetensors(path.join(BERT, 'golden.safetensors'));
const goldGpt2 = readSafetensors(path.join(GPT2, 'golden.safetensors'));

const topIds = (p, k) => [...p.keys()].sort((a, b) => p[b] - p[a]).slice(0, k);

// per mask: the probabilities of every vocabulary entry, from the golden logits
const V_BERT = goldBert.mask_logits.shape[1];
const bertProbs = [0, 1].map((r) => logSoftmax(goldBert.mask_logits.data.subarray(r * V_BERT, (r + 1) * V_BERT)).map(Math.exp));
const V_GPT2 = goldGpt2.logits.shape[1];
const gpt2FirstLogProbs = logSoftmax(goldGpt2.logits.data.subarray((goldGpt2.logits.shape[0] - 1) * V_GPT2));
const GREEDY = Array.from(goldGpt2.greedy_ids.data);
const PROMPT_IDS = Array.from(goldGpt2.input_ids.data);

// Fill-mask of the golden text: top-5 ids per mask must be the golden top-5 (in order), every score within `relTol`
// (relative) of the golden probability. Returns the engine's results.
async function checkBert(source, opts, relTol, what) {
  const fm = await FillMask.load(source, opts);
  try {
    assert.deepEqual(await fm.tokenizer.encode(BERT_TEXT), Array.from(goldBert.input_ids.data), `${what}: input ids`);
    const { results } = await fm.fill(BERT_TEXT, { top_k: 5 });
    assert.equal(results.length, 2, `${what}: one list per mask`);
    results.forEach((list, m) => {
      assert.deepEqual(list.map((c) => c.token), topIds(bertProbs[m], 5), `${what}: top-5 ids of mask ${m}`);
      for (const c of list) {
        const want = bertProbs[m][c.token];
        assert.ok(Math.abs(c.score / want - 1) <= relTol, `${what}: mask ${m} token ${c.token}: score ${c.score}, golden ${want} (relative tolerance ${relTol})`);
      }
    });
    return { results, info: fm.info };
  } finally {
    await fm.dispose();
  }
}

// Greedy continuation of the golden prompt: prompt + 12 tokens must be the golden greedy_ids; the first token's
// log-probability within `lpTol` of the golden one. Returns the engine's result.
async function checkGpt2(source, opts, lpTol, what) {
  const gen = await TextGenerator.load(source, opts);
  try {
    assert.deepEqual(await gen.tokenizer.encode(GPT2_PROMPT), PROMPT_IDS, `${what}: prompt ids`);
    const r = await gen.complete(GPT2_PROMPT, { max_new_tokens: GREEDY.length - PROMPT_IDS.length, output_scores: true });
    assert.deepEqual([...PROMPT_IDS, ...r.tokens.map((t) => t.id)], GREEDY, `${what}: greedy ids`);
    const want = gpt2FirstLogProbs[r.tokens[0].id];
    assert.ok(Math.abs(r.tokens[0].logprob - want) <= lpTol, `${what}: first token log-prob ${r.tokens[0].logprob}, golden ${want} (tolerance ${lpTol})`);
    return { result: r, info: gen.info };
  } finally {
    await gen.dispose();
  }
}

// ----------------------------------------------------------------------------------- half-precision checkpoints
const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);

// f32 → bf16 bits, round to nearest even (NaN stays NaN)
function toBf16(x) {
  f32[0] = x;
  const u = u32[0];
  if ((u & 0x7fffffff) > 0x7f800000) return (u >>> 16) | 0x40;
  return ((u + 0x7fff + ((u >>> 16) & 1)) >>> 16) & 0xffff;
}

// f32 → IEEE half bits, round to nearest even, subnormals included, overflow to infinity
function toF16(x) {
  f32[0] = x;
  const u = u32[0];
  const sign = (u >>> 16) & 0x8000, exp = (u >>> 23) & 0xff;
  let mant = u & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  const e = exp - 112;  // the half's biased exponent
  if (e >= 31) return sign | 0x7c00;
  const round = (h, rem, half) => (rem > half || (rem === half && (h & 1)) ? h + 1 : h);
  if (e <= 0) {  // a half subnormal (or zero): the value in units of 2^-24
    const shift = 126 - exp;
    if (shift > 24) return sign;
    mant |= 0x800000;
    return sign | round(mant >>> shift, mant & ((1 << shift) - 1), 1 << (shift - 1));
  }
  return sign | round((e << 10) | (mant >>> 13), mant & 0x1fff, 0x1000);  // a carry moves into the exponent, as it should
}

const bf16ToF32 = (h) => { u32[0] = h << 16; return f32[0]; };

// Writes a safetensors file: tensors { name: { dtype, shape, bytes } }, the header padded with spaces to 8 bytes.
function writeSafetensors(file, tensors) {
  const header = {};
  const parts = [];
  let off = 0;
  for (const [name, { dtype, shape, bytes }] of Object.entries(tensors)) {
    header[name] = { dtype, shape, data_offsets: [off, off + bytes.byteLength] };
    off += bytes.byteLength;
    parts.push(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  }
  let h = JSON.stringify(header);
  h += ' '.repeat((8 - (h.length % 8)) % 8);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(h.length));
  writeFileSync(file, Buffer.concat([len, Buffer.from(h, 'utf8'), ...parts]));
}

// A copy of a fixture folder with its model.safetensors converted: 'BF16' / 'F16', or 'F32-of-BF16' (the BF16
// values widened back to F32: the same numbers as the BF16 file, stored as F32).
function convertedFolder(dir, kind) {
  const out = tmpDir(`${path.basename(dir)}-${kind}`);
  for (const n of readdirSync(dir))
    if (!['model.safetensors', 'golden.safetensors', 'model-files.json'].includes(n)) copyFileSync(path.join(dir, n), path.join(out, n));
  const tensors = {};
  for (const [name, { dtype, shape, data }] of Object.entries(readSafetensors(path.join(dir, 'model.safetensors')))) {
    assert.equal(dtype, 'F32');
    if (kind === 'F32-of-BF16') {
      tensors[name] = { dtype: 'F32', shape, bytes: Float32Array.from(data, (x) => bf16ToF32(toBf16(x))) };
    } else {
      const bits = Uint16Array.from(data, kind === 'BF16' ? toBf16 : toF16);
      tensors[name] = { dtype: kind, shape, bytes: bits };  // little-endian host (x86, wasm)
    }
  }
  writeSafetensors(path.join(out, 'model.safetensors'), tensors);
  return out;
}

// Tolerances against the F32 goldens. Rounding a weight to bf16 (8 significant bits) moves it by up to 2^-9
// relative, to f16 (11 bits) by up to 2^-12. Through these tiny models (logits ~2, nearly flat distributions) the
// measured deviation of a softmax score is 1.1 % for bf16 and 0.12 % for f16 (the 8× ratio of the two roundings);
// the tolerances allow about 3× that, well under what a wrongly decoded weight type gives (a truncating or
// byte-swapped decoder moves every score by far more and reorders the top 5, whose neighbours are 0.7 % apart
// at the closest). A log-probability moves by about the relative score error: 0.03 and 0.005.
const TOL = { BF16: { score: 0.03, logprob: 0.03 }, F16: { score: 0.005, logprob: 0.005 } };

test('claim 1: the converters round to nearest even (checked on ties and subnormals)', () => {
  assert.equal(toBf16(1), 0x3f80);
  assert.equal(toBf16(1 + 2 ** -8), 0x3f80);               // a tie: to the even 1.0
  assert.equal(toBf16(1 + 3 * 2 ** -8), 0x3f82);           // a tie: to the even 1 + 2^-6
  assert.equal(toBf16(1 + 2 ** -8 + 2 ** -20), 0x3f81);    // above the tie: up
  assert.equal(toBf16(-2.5), 0xc020);
  assert.equal(toF16(1), 0x3c00);
  assert.equal(toF16(1 + 2 ** -11), 0x3c00);               // a tie: to even
  assert.equal(toF16(1 + 3 * 2 ** -11), 0x3c02);
  assert.equal(toF16(65504), 0x7bff);
  assert.equal(toF16(65520), 0x7c00);                      // rounds past the largest half: infinity
  assert.equal(toF16(2 ** -24), 0x0001);                   // the smallest subnormal
  assert.equal(toF16(2 ** -25), 0x0000);                   // a tie with zero: to even (zero)
  assert.equal(toF16(3 * 2 ** -25), 0x0002);               // a tie: to even
  assert.equal(toF16(2 ** -14 - 2 ** -25), 0x0400);        // rounds up into the normals
  assert.equal(toF16(-0.1), 0xae66);
});

for (const kind of ['BF16', 'F16']) {
  test(`claim 1: a ${kind} safetensors checkpoint gives the golden fill-mask and greedy continuation, stored or widened`, async () => {
    const bert = convertedFolder(BERT, kind);
    const gpt2 = convertedFolder(GPT2, kind);
    const stored = readFileSync(path.join(bert, 'model.safetensors'));
    assert.match(stored.subarray(8, 200).toString(), new RegExp(`"dtype":"${kind}"`));
    // the default keeps the checkpoint's type but widens half matrices to f32 (a model under 1 GiB) ...
    const autoB = await checkBert(bert, {}, TOL[kind].score, `${kind} bert (auto)`);
    assert.match(autoB.info.dtype, /widened to f32/);
    const autoG = await checkGpt2(gpt2, {}, TOL[kind].logprob, `${kind} gpt2 (auto)`);
    assert.match(autoG.info.dtype, /widened to f32/);
    // ... and 'as_stored' runs the half-precision matmul kernels on the stored bits: the same results
    const asB = await checkBert(bert, { dtype: 'as_stored' }, TOL[kind].score, `${kind} bert (as_stored)`);
    const asG = await checkGpt2(gpt2, { dtype: 'as_stored' }, TOL[kind].logprob, `${kind} gpt2 (as_stored)`);
    assert.equal(asB.info.dtype, 'as_stored');
    assert.ok(asB.info.weight_bytes < autoB.info.weight_bytes, `as_stored keeps ${kind}: ${asB.info.weight_bytes} < ${autoB.info.weight_bytes} bytes`);
    asB.results.forEach((list, m) => list.forEach((c, i) => assert.ok(Math.abs(c.score / autoB.results[m][i].score - 1) < 1e-5)));
    asG.result.tokens.forEach((t, i) => assert.ok(Math.abs(t.logprob - autoG.result.tokens[i].logprob) < 1e-5));
  });
}

test('claim 1: widening BF16 is exact: the same results as the same numbers stored as F32', async () => {
  // the README: F16/BF16 matrices widened to f32 ... "exact". The F32 copy of the bf16-rounded weights runs the F32
  // path, which the other tests check against PyTorch; every score and log-prob must be identical.
  for (const [dir, kind] of [[BERT, 'bert'], [GPT2, 'gpt2']]) {
    const half = convertedFolder(dir, 'BF16');
    const wide = convertedFolder(dir, 'F32-of-BF16');
    if (kind === 'bert') {
      const run = async (src) => {
        const fm = await FillMask.load(src);
        const { results } = await fm.fill(BERT_TEXT, { top_k: 50 });
        await fm.dispose();
        return results;
      };
      assert.deepEqual(await run(half), await run(wide));
    } else {
      const run = async (src) => {
        const gen = await TextGenerator.load(src);
        const r = await gen.complete(GPT2_PROMPT, { max_new_tokens: 12 });
        await gen.dispose();
        return r.tokens;
      };
      assert.deepEqual(await run(half), await run(wide));
    }
  }
});

// ------------------------------------------------------------------------------------------------- GGUF v2
// GGUF v2 and v3 have the same layout: v2 made the tensor and metadata counts and the string and array lengths
// 64-bit (v1 had them 32-bit); v3 only added big-endian files (told apart by the byte order of the version field).
// So a little-endian v3 file with its version set to 2 is a valid v2 file; with 1 its counts would be misread.
function ggufWithVersion(file, version) {
  const b = new Uint8Array(readFileSync(file));
  assert.equal(new TextDecoder().decode(b.subarray(0, 4)), 'GGUF');
  const dv = new DataView(b.buffer);
  assert.equal(dv.getUint32(4, true), 3, 'the fixture is GGUF v3');
  dv.setUint32(4, version, true);
  return b;
}

test('claim 2: GGUF version 2 files load and give what the same file as version 3 gives; versions 1 and 4 are refused by name', async () => {
  const gptFile = fixture('gpt2-tiny-q8_0.gguf');
  const bertFile = fixture('bert-tiny-q8_0.gguf');
  const gen = async (src) => {
    const g = await TextGenerator.load(src);
    const r = await g.complete(GPT2_PROMPT, { max_new_tokens: 12, output_scores: true });
    await g.dispose();
    return r.tokens;
  };
  const fill = async (src) => {
    const f = await FillMask.load(src);
    const { results } = await f.fill(BERT_TEXT, { top_k: 10 });
    await f.dispose();
    return results;
  };
  const v3 = await gen(readFileSync(gptFile));
  assert.deepEqual(await gen(ggufWithVersion(gptFile, 2)), v3);
  // q8_0 weights, still the golden model: the first greedy token is the golden one
  assert.equal(v3[0].id, GREEDY[PROMPT_IDS.length]);
  assert.ok(Math.abs(v3[0].logprob - gpt2FirstLogProbs[v3[0].id]) < 0.05);
  const b3 = await fill(readFileSync(bertFile));
  assert.deepEqual(await fill(ggufWithVersion(bertFile, 2)), b3);
  b3.forEach((list, m) => assert.ok(topIds(bertProbs[m], 10).includes(list[0].token), `mask ${m}: q8_0 top-1 among the golden top 10`));
  // a v2 file from a path and from a File as well (the name ends in .gguf; the version is read from the bytes)
  const dir = tmpDir('gguf');
  writeFileSync(path.join(dir, 'gpt2-v2.gguf'), ggufWithVersion(gptFile, 2));
  assert.deepEqual(await gen(path.join(dir, 'gpt2-v2.gguf')), v3);
  assert.deepEqual(await gen([new File([ggufWithVersion(gptFile, 2)], 'gpt2-v2.gguf')]), v3);
  for (const v of [1, 4])
    await assert.rejects(TextGenerator.load(ggufWithVersion(gptFile, v)), (e) => {
      assert.match(e.message, new RegExp(`GGUF version ${v} is not supported \\(versions 2 and 3 are\\)`));
      return true;
    });
  // big-endian v3 (the version field byte-swapped) is named as such
  await assert.rejects(TextGenerator.load(ggufWithVersion(gptFile, 0x03000000)), /big-endian/);
});

// ------------------------------------------------------------------------------------- tokenizer.json folders
// A model folder as recent Hugging Face repos have it: config.json, model.safetensors, tokenizer.json (and
// tokenizer_config.json), no vocab.txt / vocab.json / merges.txt. The fixtures' vocabularies are the genuine
// bert-base-uncased and gpt2 ones that hf-tokenizer-json.mjs builds tokenizer.json files from.
function tokenizerJsonFolder(dir, json) {
  const out = tmpDir(`${path.basename(dir)}-tokjson`);
  for (const n of ['config.json', 'model.safetensors', 'tokenizer_config.json']) copyFileSync(path.join(dir, n), path.join(out, n));
  writeFileSync(path.join(out, 'tokenizer.json'), JSON.stringify(json));
  return out;
}

const TOKENIZER_STRINGS = ['Hello, World!', BERT_TEXT, GPT2_PROMPT, ' \tH\u00e4LLo!how  \n Are yoU?  ', "don't you'll I'M we've 1234.5",
  'caf\u00e9 na\u00efve \u751f\u6d3b\u7684\u771f\u8c1b', '\u{1F468}\u200d\u{1F469}\u200d\u{1F467} emoji', 'unaffable tokenization', '   leading and trailing   ',
  'x'.repeat(120), '[MASK] [SEP] <|endoftext|>'];

test('claim 3: folders whose tokenizer is only tokenizer.json give the golden outputs and tokenize as the vocabulary files do', async () => {
  const bert = tokenizerJsonFolder(BERT, bertTokenizerJson());
  const gpt2 = tokenizerJsonFolder(GPT2, gpt2TokenizerJson());
  assert.deepEqual(readdirSync(bert).sort(), ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json']);
  // F32 weights: the golden outputs to float rounding
  await checkBert(bert, {}, 1e-4, 'bert (tokenizer.json)');
  await checkGpt2(gpt2, {}, 1e-4, 'gpt2 (tokenizer.json)');
  for (const [json, vocabDir] of [[bert, BERT], [gpt2, GPT2]]) {
    const a = await Tokenizer.load(json);
    const b = await Tokenizer.load(vocabDir);
    for (const s of TOKENIZER_STRINGS) {
      const ids = await b.encode(s);
      assert.deepEqual(await a.encode(s), ids, `${path.basename(vocabDir)}: ${JSON.stringify(s)}`);
      assert.deepEqual(await a.encode(s, { add_special_tokens: false }), await b.encode(s, { add_special_tokens: false }));
      assert.equal(await a.decode(ids), await b.decode(ids));
    }
    await a.dispose();
    await b.dispose();
  }
});

// --------------------------------------------------------------------------------------- Hugging Face hub
// No network here: the package downloads with fetch, so a stand-in fetch answers the hub's two kinds of URL for the
// repos it is given (GET https://huggingface.co/api/models/{repo}/tree/{revision}: the file list as the hub sends
// it, GET/HEAD https://huggingface.co/{repo}/resolve/{revision}/{file}: the file) and 404 for anything else. In Node
// the package's worker has its own fetch, so these loads run with { worker: false } (the package's documented way
// to give it a fetch).
// { worker: false } with one thread, which starts fastest (the threaded engine's pool no longer keeps a process
// alive: see the next test).
const LOCAL = { worker: false, threads: 1 };

test('{ worker: false } in Node: a script that has disposed its models exits (threads at their default)', async () => {
  const { spawn } = await import('node:child_process');
  const script = `import { FillMask, terminate } from 'wasmformer';
    const fm = await FillMask.load(${JSON.stringify(BERT)}, { worker: false });
    await fm.fill('a [MASK] b');
    await fm.dispose();
    terminate();
    console.log('done');`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  const code = await new Promise((resolve) => {
    const timer = setTimeout(() => { child.kill('SIGKILL'); resolve('still running 5 s after it was done'); }, 5000);
    child.on('exit', (c) => { clearTimeout(timer); resolve(c); });
  });
  assert.match(out, /done/);
  assert.equal(code, 0);
});

function fakeHub(repos /* { 'org/name': { revision: folder } } */, files = (dir) => readdirSync(dir).filter((n) => !['golden.safetensors', 'model-files.json'].includes(n))) {
  const requests = [];
  const routes = new Map();
  for (const [repo, revs] of Object.entries(repos))
    for (const [rev, dir] of Object.entries(revs)) {
      const r = encodeURIComponent(rev);
      const names = files(dir);
      const list = names.map((n) => {
        const size = readFileSync(path.join(dir, n)).length;
        // the hub lists large files with their LFS pointer (size there is the pointer's, lfs.size the file's)
        return n.endsWith('.safetensors') ? { type: 'file', oid: 'x', size: 134, path: n, lfs: { oid: 'y', size, pointerSize: 134 } } : { type: 'file', oid: 'x', size, path: n };
      });
      list.push({ type: 'directory', oid: 'z', size: 0, path: 'onnx' }, { type: 'file', oid: 'w', size: 9999999, path: 'pytorch_model.bin' }, { type: 'file', oid: 'v', size: 12, path: 'onnx/model.onnx' });
      routes.set(`https://huggingface.co/api/models/${repo}/tree/${r}`, () => new Response(JSON.stringify(list), { headers: { 'content-type': 'application/json' } }));
      for (const n of names)
        routes.set(`https://huggingface.co/${repo}/resolve/${r}/${n}`, (method) => {
          const body = readFileSync(path.join(dir, n));
          return new Response(method === 'HEAD' ? null : body, { headers: { 'content-length': String(body.length), 'content-type': 'application/octet-stream' } });
        });
    }
  const fetchFn = async (input, init = {}) => {
    const url = typeof input === 'string' ? input : input.url ?? String(input);
    const method = init.method ?? 'GET';
    requests.push(`${method} ${url}`);
    if (init.signal?.aborted) throw Object.assign(new Error('aborted'), { name: 'AbortError' });
    const route = routes.get(url);
    return route ? route(method) : new Response('{"error":"Repository not found"}', { status: 404, headers: { 'content-type': 'application/json' } });
  };
  return { fetch: fetchFn, requests };
}

const BERT_FILES = ['config.json', 'model.safetensors', 'tokenizer_config.json', 'vocab.txt'];
const hubUrls = (repo, rev, names) => [`GET https://huggingface.co/api/models/${repo}/tree/${encodeURIComponent(rev)}`,
  ...names.map((n) => `GET https://huggingface.co/${repo}/resolve/${encodeURIComponent(rev)}/${n}`)].sort();

test('claim 4: Hugging Face repo URLs and ids (with a revision) are fetched from the hub\'s URLs, and load the model', async () => {
  const hub = fakeHub({
    'google-bert/bert-base-uncased': { main: BERT, 'refs/pr/7': BERT, 'v1.0': BERT },
    'openai-community/gpt2': { main: GPT2 },
  });
  const saved = globalThis.fetch;
  globalThis.fetch = hub.fetch;  // what the package uses when no fetch is given
  try {
    // the README's example, as written
    await checkBert('https://huggingface.co/google-bert/bert-base-uncased', { ...LOCAL, cache: false }, 1e-4, 'hub URL');
    assert.deepEqual(hub.requests.sort(), hubUrls('google-bert/bert-base-uncased', 'main', BERT_FILES));  // the list, then only what is needed
    // a repo id with a revision (a pull request's ref: encoded as the hub wants it)
    hub.requests.length = 0;
    await checkBert('google-bert/bert-base-uncased', { ...LOCAL, cache: false, revision: 'refs/pr/7' }, 1e-4, 'hub id at a revision');
    assert.deepEqual(hub.requests.sort(), hubUrls('google-bert/bert-base-uncased', 'refs/pr/7', BERT_FILES));
    // a /tree/{revision} URL names its revision
    hub.requests.length = 0;
    await checkBert('https://huggingface.co/google-bert/bert-base-uncased/tree/v1.0', { ...LOCAL, cache: false }, 1e-4, 'hub tree URL');
    assert.deepEqual(hub.requests.sort(), hubUrls('google-bert/bert-base-uncased', 'v1.0', BERT_FILES));
    // a GPT-2 repo id, its files through the same URLs
    hub.requests.length = 0;
    await checkGpt2('openai-community/gpt2', { ...LOCAL, cache: false }, 1e-4, 'gpt2 hub id');
    assert.deepEqual(hub.requests.sort(), hubUrls('openai-community/gpt2', 'main', ['config.json', 'merges.txt', 'model.safetensors', 'tokenizer_config.json', 'vocab.json']));
    // a missing repo, and a revision the repo does not have: errors that name the repo, the revision and the URL
    await assert.rejects(FillMask.load('google-bert/no-such-model', { ...LOCAL, cache: false }),
      { message: 'google-bert/no-such-model (revision main): no such model on the Hugging Face hub, or it is private (https://huggingface.co/api/models/google-bert/no-such-model/tree/main: HTTP 404)' });
    await assert.rejects(FillMask.load('https://huggingface.co/google-bert/bert-base-uncased', { ...LOCAL, cache: false, revision: 'v9' }),
      /google-bert\/bert-base-uncased \(revision v9\): .*https:\/\/huggingface\.co\/api\/models\/google-bert\/bert-base-uncased\/tree\/v9: HTTP 404/);
  } finally {
    globalThis.fetch = saved;
  }
  // the { fetch } option does the same without touching the global; it needs { worker: false } and says so
  const hub2 = fakeHub({ 'google-bert/bert-base-uncased': { main: BERT } });
  await checkBert('google-bert/bert-base-uncased', { ...LOCAL, cache: false, fetch: hub2.fetch }, 1e-4, 'hub id, fetch option');
  assert.deepEqual(hub2.requests.sort(), hubUrls('google-bert/bert-base-uncased', 'main', BERT_FILES));
  await assert.rejects(FillMask.load('google-bert/bert-base-uncased', { fetch: hub2.fetch }), /a custom fetch works with \{ worker: false \} only/);
  // how sources map to the hub, as the package exports it
  assert.deepEqual(hubSource('google-bert/bert-base-uncased'), { type: 'hub', repo: 'google-bert/bert-base-uncased', revision: 'main', hub: 'https://huggingface.co' });
  assert.deepEqual(hubSource('https://huggingface.co/models/google-bert/bert-base-uncased', { revision: 'abc' }).revision, 'abc');
  assert.equal(hubSource('https://huggingface.co/org/name/resolve/main/model-q8_0.gguf'), null);  // one file: a plain URL
  assert.equal(hubSource('https://example.com/org/name'), null);
});

test('claim 4: a .gguf file URL on the hub is fetched as that one URL', async () => {
  const url = 'https://huggingface.co/org/gpt2-gguf/resolve/main/gpt2-tiny-q8_0.gguf';
  const body = readFileSync(fixture('gpt2-tiny-q8_0.gguf'));
  const requests = [];
  const fetchFn = async (u, init = {}) => {
    requests.push(`${init.method ?? 'GET'} ${u}`);
    return u === url ? new Response(body, { headers: { 'content-length': String(body.length) } }) : new Response('', { status: 404 });
  };
  const gen = await TextGenerator.load(url, { ...LOCAL, cache: false, fetch: fetchFn });
  assert.equal((await gen.complete(GPT2_PROMPT, { max_new_tokens: 1 })).tokens[0].id, GREEDY[PROMPT_IDS.length]);
  await gen.dispose();
  assert.deepEqual(requests, [`GET ${url}`]);
  await assert.rejects(TextGenerator.load(url.replace('gpt2-tiny', 'missing'), { ...LOCAL, cache: false, fetch: fetchFn }),
    { message: `${url.replace('gpt2-tiny', 'missing')}: not found` });
});

// ------------------------------------------------------------------------------------------------ Cache API
// The package caches with globalThis.caches where it runs the downloads (the Web Worker in browsers). Node has no
// Cache API, so a minimal in-memory CacheStorage (open / match / put / delete, as the package uses them) stands
// in, with { worker: false } so that the downloads run in this thread where the stand-in is.
function memoryCaches() {
  const stores = new Map();
  const pending = [];
  const key = (req) => (typeof req === 'string' ? req : req.url);
  const makeCache = () => {
    const entries = new Map();
    return {
      entries,
      async match(req) {
        const e = entries.get(key(req));
        return e && new Response(e.body.slice(), { status: e.status, headers: e.headers });
      },
      put(req, res) {
        const p = (async () => {
          const body = new Uint8Array(await res.arrayBuffer());  // as a browser's put: resolves once the body is read
          entries.set(key(req), { body, status: res.status, headers: [...res.headers] });
        })();
        pending.push(p);
        return p;
      },
      async delete(req) { return entries.delete(key(req)); },
      async keys() { return [...entries.keys()].map((url) => ({ url })); },
    };
  };
  return {
    stores,
    opened: [],
    settled: () => Promise.allSettled(pending),
    async open(name) {
      this.opened.push(name);
      if (!stores.has(name)) stores.set(name, makeCache());
      return stores.get(name);
    },
    async has(name) { return stores.has(name); },
    async delete(name) { return stores.delete(name); },
    async keys() { return [...stores.keys()]; },
  };
}

async function withCaches(fn) {
  const had = Object.getOwnPropertyDescriptor(globalThis, 'caches');
  const standIn = memoryCaches();
  globalThis.caches = standIn;
  try {
    return await fn(standIn);
  } finally {
    if (had) Object.defineProperty(globalThis, 'caches', had);
    else delete globalThis.caches;
  }
}

const weightGets = (requests) => requests.filter((r) => /^GET \/(?!model-files\.json)/.test(r));

test('claim 5: downloads are kept in the Cache API: a second load from a URL reads no file from the server', async () => {
  await withCaches(async (caches) => {
    const srv = await serve(BERT);
    try {
      await checkBert(srv.url, LOCAL, 1e-4, 'first load');
      await caches.settled();
      assert.deepEqual(caches.opened, [CACHE_NAME]);
      assert.deepEqual([...caches.stores.get(CACHE_NAME).entries.keys()].sort(), BERT_FILES.map((n) => srv.url + n));
      assert.deepEqual(weightGets(srv.requests).sort(), BERT_FILES.map((n) => `GET /${n}`));
      srv.requests.length = 0;
      await checkBert(srv.url, LOCAL, 1e-4, 'second load, from the cache');
      assert.deepEqual(weightGets(srv.requests), [], 'no file downloaded again');
      // cache: false neither reads nor writes the cache
      srv.requests.length = 0;
      const before = caches.opened.length;
      await checkBert(srv.url, { ...LOCAL, cache: false }, 1e-4, 'cache: false');
      assert.equal(caches.opened.length, before);
      assert.deepEqual(weightGets(srv.requests).sort(), BERT_FILES.map((n) => `GET /${n}`));
      // clearCache() empties it: the next load downloads again
      await clearCache();
      assert.equal(await caches.has(CACHE_NAME), false);
      srv.requests.length = 0;
      await checkBert(srv.url, LOCAL, 1e-4, 'after clearCache');
      assert.deepEqual(weightGets(srv.requests).sort(), BERT_FILES.map((n) => `GET /${n}`));
    } finally {
      await srv.close();
    }
  });
  // hub downloads are cached the same way (the file list is asked for again; the files are not)
  await withCaches(async (caches) => {
    const hub = fakeHub({ 'google-bert/bert-base-uncased': { main: BERT } });
    await checkBert('google-bert/bert-base-uncased', { ...LOCAL, fetch: hub.fetch }, 1e-4, 'hub, first load');
    await caches.settled();
    hub.requests.length = 0;
    await checkBert('google-bert/bert-base-uncased', { ...LOCAL, fetch: hub.fetch }, 1e-4, 'hub, second load');
    assert.deepEqual(hub.requests, ['GET https://huggingface.co/api/models/google-bert/bert-base-uncased/tree/main']);
  });
});

// The package makes no claim that it revalidates cached files (a file replaced by one of the same size is not
// noticed: it has no ETag check). But when the folder's own listing (model-files.json, or the hub's file list)
// gives a file a size the cached copy does not have, the cached copy is stale by the package's own evidence, and
// the load should download the file again rather than fail.
test('claim 5: a cached file whose size no longer matches the folder\'s listing is downloaded again', async () => {
  await withCaches(async (caches) => {
    const dir = tmpDir('changing');
    for (const n of readdirSync(BERT)) if (n !== 'golden.safetensors') copyFileSync(path.join(BERT, n), path.join(dir, n));
    const { writeListing } = await import('../../web/bin/model-files.mjs');
    writeListing(dir);
    const srv = await serve(dir);
    try {
      await checkBert(srv.url, LOCAL, 1e-4, 'the F32 folder');
      await caches.settled();
      // the folder's owner replaces the weights with a BF16 copy (half the size) and updates the listing
      copyFileSync(path.join(convertedFolder(BERT, 'BF16'), 'model.safetensors'), path.join(dir, 'model.safetensors'));
      writeListing(dir);
      srv.requests.length = 0;
      const { info } = await checkBert(srv.url, LOCAL, TOL.BF16.score, 'the folder after the change');
      assert.match(info.dtype, /widened/, 'the new (BF16) file was loaded');
      assert.ok(srv.requests.includes('GET /model.safetensors'), 'the changed file was downloaded');
    } finally {
      await srv.close();
    }
  });
});
