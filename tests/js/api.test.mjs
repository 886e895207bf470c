// The JavaScript API against the built package, in Node: every source kind, results equal to the PyTorch
// reference's (tests/data/fixtures/*/golden.safetensors), streaming, stop strings, abort, errors, dispose.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { FillMask, TextGenerator, Tokenizer, pipeline } from 'wasmformer';
import { filesOf, fixture, logSoftmax, nativeGenerate, readSafetensors, serve } from './helpers.mjs';

const BERT = fixture('bert-tiny');
const GPT2 = fixture('gpt2-tiny');

// The reference's answers: fill-mask's top ids and probabilities at each mask, GPT-2's greedy ids and the
// log-softmax of its prompt logits.
const BERT_TEXT = 'The capital of France is [MASK]. It has [MASK] people';
const GPT2_PROMPT = 'The dog was found in a field';
const bertGolden = readSafetensors(`${BERT}/golden.safetensors`);
const gptGolden = readSafetensors(`${GPT2}/golden.safetensors`);
function goldenTop(m, k) {  // [{ token, score }] at mask m, best first
  const V = bertGolden.mask_logits.shape[1];
  const lp = logSoftmax(bertGolden.mask_logits.data.subarray(m * V, (m + 1) * V));
  return lp.map((l, token) => ({ token, score: Math.exp(l) })).sort((a, b) => b.score - a.score || a.token - b.token).slice(0, k);
}
function checkFill(lists, k) {
  assert.equal(lists.length, 2);
  lists.forEach((list, m) => {
    const want = goldenTop(m, k);
    assert.deepEqual(list.map((c) => c.token), want.map((c) => c.token));
    list.forEach((c, i) => assert.ok(Math.abs(c.score - want[i].score) < 1e-6, `mask ${m} #${i}: ${c.score} vs ${want[i].score}`));
  });
}
const T = gptGolden.input_ids.shape[0];
const greedyIds = Array.from(gptGolden.greedy_ids.data.slice(T));
const lastRow = logSoftmax(gptGolden.logits.data.subarray((T - 1) * gptGolden.logits.shape[1], T * gptGolden.logits.shape[1]));

test('fill-mask equals the reference at every mask; a batch gives each text its own lists', async () => {
  const unmasker = await pipeline('fill-mask', BERT);
  checkFill(await unmasker(BERT_TEXT, { top_k: 5 }), 5);
  const [first] = await unmasker(BERT_TEXT, { top_k: 1 });
  assert.equal(first[0].sequence, '[CLS] the capital of france is ' + first[0].token_str + '. it has [MASK] people [SEP]');
  const batch = await unmasker(['a [MASK] b', BERT_TEXT], { top_k: 2 });
  assert.equal(batch.length, 2);
  assert.equal(batch[0].length, 2);
  checkFill(batch[1], 2);
  await unmasker.dispose();
});

test('text generation equals the reference: greedy ids, log-probabilities, seeded sampling', async () => {
  const gen = await TextGenerator.load(GPT2);
  const greedy = await gen.complete(GPT2_PROMPT, { max_new_tokens: greedyIds.length, output_scores: true });
  assert.deepEqual(greedy.tokens.map((t) => t.id), greedyIds);
  assert.equal(greedy.finish_reason, 'max_new_tokens');
  assert.ok(Math.abs(greedy.tokens[0].logprob - lastRow[greedyIds[0]]) < 1e-5);
  // log-probabilities on request only (a greedy step without them computes only the logits its choice needs): the same tokens
  const unscored = await gen.complete(GPT2_PROMPT, { max_new_tokens: greedyIds.length });
  assert.deepEqual(unscored.tokens.map((t) => t.id), greedyIds);
  assert.ok(unscored.tokens.every((t) => !('logprob' in t)), JSON.stringify(unscored.tokens[0]));
  const generator = await pipeline('text-generation', GPT2);
  const [{ generated_text }] = await generator(GPT2_PROMPT, { max_new_tokens: greedyIds.length });
  assert.equal(generated_text, GPT2_PROMPT + greedy.text);
  // sampling: a seed repeats, another seed differs; the log-probability is the model's, whatever the temperature
  const opts = { max_new_tokens: 12, do_sample: true, temperature: 2.5, seed: 1234, output_scores: true };
  const a = await gen.complete(GPT2_PROMPT, opts);
  const b = await gen.complete(GPT2_PROMPT, opts);
  assert.equal(a.text, b.text);
  assert.notEqual((await gen.complete(GPT2_PROMPT, { ...opts, seed: 4321 })).text, a.text);
  assert.ok(Math.abs(a.tokens[0].logprob - lastRow[a.tokens[0].id]) < 1e-5);
  // the generator is portable: wasm draws the same tokens as the native build for the same seed
  const portable = { max_new_tokens: 12, do_sample: true, temperature: 0.9, top_p: 0.95, seed: 1234 };
  assert.equal((await gen.complete('Once upon a time', portable)).text,
    nativeGenerate(GPT2, 'Once upon a time', ['--max-new-tokens', '12', '--sample', '--temperature', '0.9', '--top-p', '0.95', '--seed', '1234']));
  await gen.dispose();
  await generator.dispose();
});

test('a stop string across token boundaries: nothing of it is streamed, the text ends before it', async () => {
  const gen = await TextGenerator.load(GPT2);
  const full = await gen.complete(GPT2_PROMPT, { max_new_tokens: 12 });
  const texts = full.tokens.map((t) => t.text);
  // from the second-to-last character of one token's text to the second character of the one after next
  const i = texts.findIndex((t, j) => j + 2 < texts.length && t.length >= 2 && texts[j + 2].length >= 2 && /^[\x20-\x7e]*$/.test(t + texts[j + 1] + texts[j + 2]));
  assert.ok(i >= 0, `no suitable tokens in ${JSON.stringify(texts)}`);
  const stop = texts[i].slice(-2) + texts[i + 1] + texts[i + 2].slice(0, 2);
  const at = full.text.indexOf(stop);
  const pieces = [];
  const s = gen.generate(GPT2_PROMPT, { max_new_tokens: 12, stop: [stop, 'never seen'] });
  for await (const p of s) {
    pieces.push(p);
    assert.ok(pieces.join('').length <= at, `streamed ${JSON.stringify(pieces.join(''))} past the stop string ${JSON.stringify(stop)}`);
  }
  assert.equal(s.result.finish_reason, 'stop');
  assert.equal(s.result.text, full.text.slice(0, at));
  assert.equal(pieces.join(''), s.result.text);
  await gen.dispose();
});

test('every generation option changes the output', async () => {
  const gen = await TextGenerator.load(GPT2);
  const base = { max_new_tokens: 16, do_sample: true, seed: 3 };
  const run = async (o) => (await gen.complete('Once upon a time', { ...base, ...o })).tokens.map((t) => t.id).join(' ');
  const ref = await run({});
  const changed = {
    max_new_tokens: { max_new_tokens: 5 },
    do_sample: { do_sample: false },
    temperature: { temperature: 0.3 },
    top_k: { top_k: 2 },
    top_p: { top_p: 0.05 },
    min_p: { min_p: 0.9 },
    repetition_penalty: { do_sample: false, repetition_penalty: 1.5 },
    no_repeat_ngram_size: { do_sample: false, no_repeat_ngram_size: 1 },
    seed: { seed: 4 },
    stop: { stop: [(await gen.complete('Once upon a time', base)).text.slice(3, 6)] },
  };
  const greedy = await run({ do_sample: false });
  for (const [name, o] of Object.entries(changed)) {
    const against = o.do_sample === false && name !== 'do_sample' ? greedy : ref;
    assert.notEqual(await run(o), against, `${name}: ${JSON.stringify(o)} gave the same tokens`);
  }
  // (stop_at_eos: the random-weight fixture never draws its end-of-text token in reach, so it cannot show here;
  // attention_layer changes what is returned beside the text, tested with the attention views)
  await gen.dispose();
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
  const check = async (source) => {
    const fm = await FillMask.load(source, { cache: false });
    checkFill((await fm.fill(BERT_TEXT, { top_k: 3 })).results, 3);
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
    checkFill((await fm.fill(BERT_TEXT, { top_k: 3 })).results, 3);
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

test("dtype 'q4' and 'q4_k' convert at load: under a third of f32's bytes, and it generates", async () => {
  const f32 = await TextGenerator.load(GPT2, { dtype: 'f32' });
  const f32Bytes = f32.info.weight_bytes;
  await f32.dispose();
  for (const [dtype, name] of [['q4', 'q4_0'], ['Q4_K', 'q4_k']]) {
    const gen = await TextGenerator.load(GPT2, { dtype });
    // the vocabulary matrix at q8_0; GPT-2 tiny is 32 wide, so q4_K's matrices take q4_K's fallback q5_0
    assert.equal(gen.info.dtype, `${name} (vocabulary matrices q8_0)`);
    assert.ok(gen.info.weight_bytes < f32Bytes / 3, `${dtype}: ${gen.info.weight_bytes} < ${f32Bytes} / 3 bytes`);
    const out = await gen.complete('The dog', { max_new_tokens: 6, output_scores: true });
    assert.ok(out.tokens.length > 0 && out.tokens.every((t) => Number.isFinite(t.logprob)), JSON.stringify(out.tokens));
    await gen.dispose();
  }
  await assert.rejects(TextGenerator.load(GPT2, { dtype: 'int4' }), /dtype "int4" is not supported \(use auto, as_stored/);
});

test('a single GGUF file loads from a path, bytes, a File and a URL', async () => {
  const { readFileSync } = await import('node:fs');
  const file = fixture('gpt2-tiny-q8_0.gguf');
  const bytes = new Uint8Array(readFileSync(file));
  // the exporter's Q8_0 blocks differ from the engine's own conversion by one rounding step in about 0.2 % of
  // blocks (tests/test-gguf.cpp), not enough to change this greedy continuation of the safetensors checkpoint
  // converted to q8_0 at load
  const ref = await TextGenerator.load(GPT2, { dtype: 'q8_0' });
  const want = (await ref.complete('The dog', { max_new_tokens: 8 })).text;
  await ref.dispose();
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
