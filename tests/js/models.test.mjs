// The bundled models end to end through the package, as users run them: Hugging Face folders and GGUF files.
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';

import { FillMask, TextGenerator } from '../../web/src/index.js';
import { root } from './helpers.mjs';

const BERT = path.join(root, 'models/wasmformer-bert-mini');
const GPT2 = path.join(root, 'models/wasmformer-gpt2-mini');

test('the bundled BERT fills in-domain masks: "Let there be [MASK]." → light', async () => {
  for (const source of [BERT, path.join(root, 'models/gguf/wasmformer-bert-mini-q8_0.gguf')]) {
    const fm = await FillMask.load(source);
    const { results } = await fm.fill('And God said, Let there be [MASK].', { top_k: 5 });
    assert.ok(results[0].some((c) => c.token_str === 'light'), `${source}: ${results[0].map((c) => c.token_str).join(', ')}`);
    const { results: r2 } = await fm.fill('In the beginning God created the heaven and the [MASK].', { top_k: 5 });
    assert.ok(r2[0].some((c) => c.token_str === 'earth'), `${source}: ${r2[0].map((c) => c.token_str).join(', ')}`);
    await fm.dispose();
  }
});

test('the bundled GPT-2 continues text in English words, the same way from safetensors and GGUF', async () => {
  const texts = [];
  for (const source of [GPT2, path.join(root, 'models/gguf/wasmformer-gpt2-mini-q8_0.gguf')]) {
    const gen = await TextGenerator.load(source);
    const r = await gen.complete('And it came to pass, when', { max_new_tokens: 24 });
    const words = r.text.match(/[A-Za-z]+/g) ?? [];
    assert.ok(words.length >= 8, `${source}: ${JSON.stringify(r.text)}`);
    assert.ok(r.tokens.every((t) => t.logprob <= 0));
    texts.push(r.text);
    await gen.dispose();
  }
  // q8_0 weights: the first greedy words agree with the f16 checkpoint
  assert.equal(texts[1].split(' ').slice(0, 3).join(' '), texts[0].split(' ').slice(0, 3).join(' '));
});
