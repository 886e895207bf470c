// Llama-style decoders (Llama, Qwen2, Mistral, Gemma, Gemma 2, Phi-3) through the package as users call it: Hugging Face folders (tokenizer.model with Llama's
// BOS, GPT-2's vocab.json + merges.txt for Qwen2) and llama.cpp GGUF files load, their tokenizers give the ids the
// PyTorch reference was fed, and greedy text generation continues exactly as the reference
// (tools/reference/make_decoder_fixtures.py → tests/data/fixtures/*/golden.safetensors).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { TextGenerator, pipeline } from 'wasmformer';
import { filesOf, fixture, readSafetensors, serve } from './helpers.mjs';

const PROMPT = 'The dog was found in a field near the river';
const cases = [
  { source: 'llama-tiny', golden: 'llama-tiny', arch: 'llama' },
  { source: 'llama-tiny-f32.gguf', golden: 'llama-tiny', arch: 'llama' },
  { source: 'llama-tiny-q8_0.gguf', golden: 'llama-tiny', arch: 'llama' },  // 8-bit weights: the same 12 greedy tokens here
  { source: 'qwen2-tiny', golden: 'qwen2-tiny', arch: 'qwen2' },
  { source: 'qwen2-tiny-bf16.gguf', golden: 'qwen2-tiny', arch: 'qwen2' },
  { source: 'mistral-tiny', golden: 'mistral-tiny', arch: 'mistral' },
  { source: 'gemma-tiny', golden: 'gemma-tiny', arch: 'gemma' },
  { source: 'gemma-tiny-f32.gguf', golden: 'gemma-tiny', arch: 'gemma' },
  { source: 'gemma2-tiny', golden: 'gemma2-tiny', arch: 'gemma2' },
  { source: 'phi3-tiny', golden: 'phi3-tiny', arch: 'phi3' },
  { source: 'phi3-tiny-f16.gguf', golden: 'phi3-tiny', arch: 'phi3' },
  // llama-tiny-q8_0.gguf split by tools/reference/gguf_split.py as gguf-split writes it: any part's path brings all
  // three; a folder of parts too
  { source: 'llama-tiny-q8_0-split/llama-tiny-q8_0-00002-of-00003.gguf', golden: 'llama-tiny', arch: 'llama' },
  { source: 'llama-tiny-q8_0-split-no-tensor-first', golden: 'llama-tiny', arch: 'llama' },
];

for (const c of cases) {
  test(`${c.source}: the reference's prompt ids and greedy continuation`, async () => {
    const g = readSafetensors(fixture(`${c.golden}/golden.safetensors`));
    const ids = Array.from(g.input_ids.data), want = Array.from(g.greedy_ids.data.slice(ids.length));
    const gen = await TextGenerator.load(fixture(c.source));
    assert.equal(gen.info.architecture, c.arch);
    assert.ok(gen.info.tasks.includes('text-generation'));
    assert.deepEqual(await gen.tokenizer.encode(PROMPT), ids);
    const out = await gen.complete(PROMPT, { max_new_tokens: want.length });
    assert.deepEqual(out.tokens.map((t) => t.id), want);
    await gen.dispose();
  });
}

test('text-generation pipeline on a GGUF llama: streams the same text it returns', async () => {
  const generator = await pipeline('text-generation', fixture('llama-tiny-f32.gguf'));
  const [{ generated_text }] = await generator(PROMPT, { max_new_tokens: 8 });
  assert.ok(generated_text.startsWith(PROMPT));
  assert.ok(generated_text.length > PROMPT.length);
  await generator.dispose();
});

test('split GGUF: the URL of one part fetches every part; given files lacking a part, the error names it', async () => {
  const dir = fixture('llama-tiny-q8_0-split');
  const srv = await serve(dir);
  try {
    const whole = await TextGenerator.load(fixture('llama-tiny-q8_0.gguf'));
    const split = await TextGenerator.load(`${srv.url}llama-tiny-q8_0-00001-of-00003.gguf`, { cache: false });
    const a = await whole.complete(PROMPT, { max_new_tokens: 6, output_scores: true }), b = await split.complete(PROMPT, { max_new_tokens: 6, output_scores: true });
    assert.deepEqual(b.tokens.map((t) => [t.id, t.logprob]), a.tokens.map((t) => [t.id, t.logprob]));
    for (const n of ['00001', '00002', '00003']) assert.ok(srv.requests.includes(`GET /llama-tiny-q8_0-${n}-of-00003.gguf`), srv.requests.join(', '));
    await Promise.all([whole.dispose(), split.dispose()]);
  } finally {
    await srv.close();
  }
  const files = filesOf(dir);
  delete files['llama-tiny-q8_0-00003-of-00003.gguf'];
  await assert.rejects(TextGenerator.load(files), /lacks llama-tiny-q8_0-00003-of-00003\.gguf/);
});
