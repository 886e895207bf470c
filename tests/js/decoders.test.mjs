// Llama-style decoders (Llama, Qwen2, Mistral, Gemma, Gemma 2, Phi-3) through the package as users call it: Hugging Face folders (tokenizer.model with Llama's
// BOS, GPT-2's vocab.json + merges.txt for Qwen2) and llama.cpp GGUF files load, their tokenizers give the ids the
// PyTorch reference was fed, and greedy text generation continues exactly as the reference
// (tools/reference/make_decoder_fixtures.py → tests/data/fixtures/*/golden.safetensors).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { TextGenerator, pipeline } from 'wasmformer';
import { fixture, readSafetensors } from './helpers.mjs';

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
