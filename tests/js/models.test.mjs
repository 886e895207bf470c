// The bundled models end to end through the package, as users run them: Hugging Face folders and GGUF files.
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';

import { FillMask, TextGenerator } from 'wasmformer';
import { root } from './helpers.mjs';

const BERT = path.join(root, 'models/wasmformer-bert-mini');
const GPT2 = path.join(root, 'models/wasmformer-gpt2-mini');
const BERT_GGUF = path.join(root, 'packages/models/wasmformer-bert-mini-q8_0.gguf');
const GPT2_GGUF = path.join(root, 'packages/models/wasmformer-gpt2-mini-q8_0.gguf');

async function fills(source, text) {
  const fm = await FillMask.load(source);
  const { results } = await fm.fill(text, { top_k: 5 });
  await fm.dispose();
  return results[0];
}

test('the bundled BERT: safetensors (F16) and GGUF (Q8_0) agree on every model-card example', async () => {
  const { fill_mask } = JSON.parse((await import('node:fs')).readFileSync(path.join(root, 'tools/train/examples.json'), 'utf8'));
  for (const text of fill_mask) {
    const [a, b] = [await fills(BERT, text), await fills(BERT_GGUF, text)];
    assert.equal(a.length, 5);
    assert.ok(a.reduce((s, c) => s + c.score, 0) <= 1.0001);
    const overlap = a.filter((c) => b.some((d) => d.token === c.token)).length;
    assert.ok(overlap >= 4, `${text}: ${a.map((c) => c.token_str)} vs ${b.map((c) => c.token_str)}`);
  }
});

// 80 held-out sentences (tests/data/bert-heldout.json, written by tools/train/heldout_sample.py), one word masked in
// each, drawn at random. The thresholds sit well under what the bundled model scores (see its model card) and well over
// what a model that ignores its context scores: the model committed before it left the masked-LM plateau got 3/80 and
// 15/80, a unigram guess ("the", ",", "and", …) does about as well.
const TOP1_MIN = 25; // the bundled model: 35/80 (F16 and Q8_0)
const TOP5_MIN = 38; // the bundled model: 49/80

test('the bundled BERT fills held-out sentences from their context (F16 and Q8_0)', async () => {
  const { items } = JSON.parse((await import('node:fs')).readFileSync(path.join(root, 'tests/data/bert-heldout.json'), 'utf8'));
  assert.equal(items.length, 80);
  for (const source of [BERT, BERT_GGUF]) {
    const fm = await FillMask.load(source);
    let top1 = 0;
    let top5 = 0;
    for (const { text, answer } of items) {
      const words = (await fm.fill(text, { top_k: 5 })).results[0].map((c) => c.token_str);
      top1 += words[0] === answer;
      top5 += words.includes(answer);
    }
    await fm.dispose();
    assert.ok(top1 >= TOP1_MIN && top5 >= TOP5_MIN, `${source}: top-1 ${top1}/80, top-5 ${top5}/80`);
  }
});

test('the bundled BERT answers in-domain model-card examples (chosen before it was trained) with the expected word first', async () => {
  assert.equal((await fills(BERT, 'In the beginning God created the heaven and the [MASK].'))[0].token_str, 'earth');
  assert.equal((await fills(BERT_GGUF, 'And the children of Israel went out of the land of [MASK].'))[0].token_str, 'egypt');
});

test('the bundled GPT-2 continues in English words, and its first greedy token is the same from safetensors and GGUF', async () => {
  const first = [];
  for (const source of [GPT2, GPT2_GGUF]) {
    const gen = await TextGenerator.load(source);
    const r = await gen.complete('And it came to pass, when', { max_new_tokens: 24 });
    const words = r.text.match(/[A-Za-z]+/g) ?? [];
    assert.ok(words.length >= 8, `${source}: ${JSON.stringify(r.text)}`);
    assert.ok(r.tokens.every((t) => t.logprob <= 0));
    first.push(r.tokens[0].id);
    await gen.dispose();
  }
  assert.equal(first[0], first[1]);
});
