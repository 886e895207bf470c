// The JavaScript API against the built package, in Node: every source kind, results equal to the native build,
// streaming, abort, errors, dispose.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { FillMask, TextGenerator, Tokenizer, pipeline } from 'wasmformer';
import { filesOf, fixture, nativeFillMask, nativeGenerate, serve } from './helpers.mjs';

const BERT = fixture('bert-tiny');
const GPT2 = fixture('gpt2-tiny');

test('fill-mask equals the native build, one mask and several', async () => {
  const unmasker = await pipeline('fill-mask', BERT);
  for (const text of ['The capital of France is [MASK].', 'Paris is [MASK] and [MASK] too.']) {
    const got = await unmasker(text, { top_k: 5 });
    const want = nativeFillMask(BERT, text, 5);
    const lists = want.length === 1 ? [got] : got;
    assert.equal(lists.length, want.length);
    lists.forEach((list, m) => list.forEach((c, i) => {
      assert.equal(c.token_str, want[m][i].token_str);
      assert.equal(c.sequence, want[m][i].sequence);
      assert.ok(Math.abs(c.score - want[m][i].score) < 1e-4);
    }));
  }
  const batch = await unmasker(['a [MASK] b', 'c [MASK] d'], { top_k: 2 });
  assert.equal(batch.length, 2);
  assert.equal(batch[0].length, 2);
  await unmasker.dispose();
});

test('text generation equals the native build: greedy and seeded sampling', async () => {
  const gen = await TextGenerator.load(GPT2);
  const greedy = await gen.complete('Once upon a time', { max_new_tokens: 12 });
  assert.equal(greedy.text, nativeGenerate(GPT2, 'Once upon a time', ['--max-new-tokens', '12']));
  assert.equal(greedy.finish_reason, 'max_new_tokens');
  assert.equal(greedy.tokens.length, 12);
  const opts = { max_new_tokens: 12, do_sample: true, temperature: 0.9, top_p: 0.95, seed: 1234 };
  const a = await gen.complete('Once upon a time', opts);
  const b = await gen.complete('Once upon a time', opts);
  assert.equal(a.text, b.text);
  assert.equal(a.text, nativeGenerate(GPT2, 'Once upon a time', ['--max-new-tokens', '12', '--sample', '--temperature', '0.9', '--top-p', '0.95', '--seed', '1234']));
  const generator = await pipeline('text-generation', GPT2);
  const [{ generated_text }] = await generator('Once upon a time', { max_new_tokens: 12 });
  assert.equal(generated_text, 'Once upon a time' + greedy.text);
  await gen.dispose();
  await generator.dispose();
});

test('streaming yields whole characters, and abort stops within a token with the model still usable', async () => {
  const gen = await TextGenerator.load(GPT2);
  const pieces = [];
  const s = gen.generate('\u4e2d\u6587', { max_new_tokens: 30 });
  for await (const p of s) pieces.push(p);
  for (const p of pieces) assert.equal(Buffer.from(p, 'utf8').toString('utf8'), p);
  assert.equal(pieces.join(''), s.result.text);
  const ctl = new AbortController();
  const run = gen.generate('Hello', { max_new_tokens: 40, signal: ctl.signal });
  let n = 0;
  await assert.rejects(async () => {
    for await (const _ of run) if (++n === 3) ctl.abort();
  }, (e) => {
    assert.equal(e.name, 'AbortError');  // one outcome for every API: an AbortError, with what was generated
    assert.equal(e.result.finish_reason, 'aborted');
    assert.ok(e.result.tokens.length <= 4, `stopped after ${e.result.tokens.length} tokens`);
    return true;
  });
  const again = await gen.complete('Hello', { max_new_tokens: 3 });
  assert.equal(again.tokens.length, 3);
  await gen.dispose();
});

test('every source kind loads: path, map of buffers, Blobs, File objects, a URL of a folder without a listing (probed)', async () => {
  const want = nativeFillMask(BERT, 'hello [MASK].', 3)[0].map((c) => c.token_str);
  const check = async (source) => {
    const fm = await FillMask.load(source, { cache: false });
    const { results } = await fm.fill('hello [MASK].', { top_k: 3 });
    assert.deepEqual(results[0].map((c) => c.token_str), want);
    await fm.dispose();
  };
  const files = filesOf(BERT);
  await check(files);
  await check(Object.fromEntries(Object.entries(files).map(([k, v]) => [k, v.buffer.slice(v.byteOffset, v.byteOffset + v.byteLength)])));
  await check(Object.fromEntries(Object.entries(files).map(([k, v]) => [k, new Blob([v])])));
  await check(Object.entries(files).map(([k, v]) => new File([v], k)));
  const srv = await serve(BERT, { hide: ['model-files.json'] });
  try {
    const events = [];
    const fm = await FillMask.load(srv.url, { progress_callback: (e) => events.push(e) });
    const { results } = await fm.fill('hello [MASK].', { top_k: 3 });
    assert.deepEqual(results[0].map((c) => c.token_str), want);
    const totals = events.filter((e) => e.status === 'progress_total');
    const total = totals[0].total;
    assert.ok(total > 4_000_000, 'total known up front');
    assert.equal(totals.at(-1).loaded, total);
    assert.ok(srv.requests.some((r) => r.startsWith('HEAD /config.json')));  // no model-files.json there: probed
    await fm.dispose();
  } finally {
    await srv.close();
  }
});

test('abort mid-download stops the load, and the next load works', async () => {
  const srv = await serve(GPT2, { slow: true });
  try {
    const ctl = new AbortController();
    let seen = 0;
    const p = TextGenerator.load(srv.url, {
      signal: ctl.signal,
      progress_callback: (e) => { if (e.status === 'progress' && ++seen === 5) ctl.abort(); },
    });
    await assert.rejects(p, (e) => e.name === 'AbortError' || /abort/i.test(e.message));
  } finally {
    await srv.close();
  }
  const gen = await TextGenerator.load(GPT2);
  assert.equal((await gen.complete('Hi', { max_new_tokens: 2 })).tokens.length, 2);
  await gen.dispose();
});

test('errors are Errors with the core message; a bad call does not break the next; dispose is final', async () => {
  const fm = await FillMask.load(BERT);
  await assert.rejects(fm.fill('no mask here'), { message: /no \[MASK\] token/ });
  await assert.rejects(fm.fill('[MASK]', { top_k: 0 }), { message: /top_k must be/ });
  assert.equal((await fm.fill('ok [MASK]', { top_k: 1 })).results[0].length, 1);
  const gen = await TextGenerator.load(GPT2);
  await assert.rejects(gen.complete('x', { temperature: -1 }), { message: /temperature/ });
  await assert.rejects(gen.complete('x', { top_p: 2 }), { message: /top_p/ });
  assert.equal((await gen.complete('x', { max_new_tokens: 1 })).tokens.length, 1);
  await fm.dispose();
  await assert.rejects(fm.fill('[MASK]'), { message: /disposed/ });
  await assert.rejects(FillMask.load(GPT2), { message: /fill-mask needs a model that can run it; this one \(gpt2\) supports: text-generation/ });
  await assert.rejects(TextGenerator.load(GPT2, { dtype: 'f32', memory_budget: 1 << 20 }), { message: /over the budget of 1 MiB/ });
  await assert.rejects(FillMask.load({ 'config.json': '{"model_type": "bert", "hidden_size": 770}' }), { message: /model.safetensors/ });
  const broken = { ...filesOf(BERT), 'config.json': '{"model_type": "bert", "hidden_size": 770, "num_attention_heads": 12}' };
  await assert.rejects(FillMask.load(broken), { message: /770.*not a multiple.*12/ });
  await gen.dispose();
});

test('tokenizers on their own and through a model', async () => {
  const vocab = filesOf(fixture('bert-tiny'))['vocab.txt'];
  const tok = await Tokenizer.load({ 'vocab.txt': vocab });
  assert.deepEqual(await tok.encode(' \tH\u00e4LLo!how  \n Are yoU?  '), [101, 2534, 2080, 999, 2129, 2024, 2017, 1029, 102]);
  assert.equal(await tok.decode([101, 7592, 102], { skip_special_tokens: true }), 'hello');
  const gen = await TextGenerator.load(GPT2);
  assert.deepEqual(await gen.tokenizer.encode('The dog'), [464, 3290]);
  const lone = await gen.tokenizer.encode('a\ud800b');  // a lone surrogate arrives as U+FFFD (TextEncoder)
  assert.equal(await gen.tokenizer.decode(lone), 'a\ufffdb');
  await tok.dispose();
  await gen.dispose();
});

test('a single GGUF file loads from a path, bytes, a File and a URL', async () => {
  const { readFileSync } = await import('node:fs');
  const file = fixture('gpt2-tiny-q8_0.gguf');
  const bytes = new Uint8Array(readFileSync(file));
  const want = nativeGenerate(GPT2, 'The dog', ['--max-new-tokens', '8', '--format', 'q8_0']);
  const check = async (source) => {
    const gen = await TextGenerator.load(source, { cache: false });
    assert.equal((await gen.complete('The dog', { max_new_tokens: 8 })).text, want);
    await gen.dispose();
  };
  await check(file);
  await check(bytes.buffer);
  await check([new File([bytes], 'gpt2-tiny-q8_0.gguf')]);
  const srv = await serve(fixture('.'));
  try {
    await check(srv.url + 'gpt2-tiny-q8_0.gguf');
  } finally {
    await srv.close();
  }
});

test('the committed tokenizer files are the genuine ones (SHA-256 as published)', async () => {
  const { createHash } = await import('node:crypto');
  const { readFileSync } = await import('node:fs');
  const path = await import('node:path');
  const dir = path.join(fixture('..'), 'tokenizers');
  const lines = readFileSync(path.join(dir, 'SHA256SUMS'), 'utf8').trim().split('\n');
  assert.ok(lines.length >= 9);
  for (const line of lines) {
    const [hash, file] = line.split(/\s+/);
    assert.equal(createHash('sha256').update(readFileSync(path.join(dir, file))).digest('hex'), hash, file);
  }
  // the three published upstream hashes (tests/data/tokenizers/README.md)
  assert.match(readFileSync(path.join(dir, 'SHA256SUMS'), 'utf8'), /07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3  bert\/vocab.txt/);
  assert.match(readFileSync(path.join(dir, 'SHA256SUMS'), 'utf8'), /196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783  gpt2\/encoder.json/);
  assert.match(readFileSync(path.join(dir, 'SHA256SUMS'), 'utf8'), /1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5  gpt2\/vocab.bpe/);
});
