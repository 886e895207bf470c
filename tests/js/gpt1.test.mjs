// GPT-1 through the package: TextGenerator on both checkpoint layouts (save_pretrained's with vocab.json + merges.txt,
// the hub's with tokenizer.json) continues the reference's prompts with its greedy ids
// (tools/reference/make_gpt1_fixtures.py wrote tests/data/fixtures/openai-gpt-tiny*/expected.json).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import { TextGenerator } from 'wasmformer';
import { fixture } from './helpers.mjs';

test('GPT-1: greedy continuations equal the reference, from either layout', async () => {
  for (const name of ['openai-gpt-tiny', 'openai-gpt-tiny-hub']) {
    const e = JSON.parse(readFileSync(`${fixture(name)}/expected.json`, 'utf8'));
    const gen = await TextGenerator.load(fixture(name));
    assert.deepEqual(gen.info.tasks, ['text-generation']);
    for (const c of e.greedy) {
      assert.deepEqual(await gen.tokenizer.encode(c.prompt), c.input_ids, c.prompt);
      const r = await gen.complete(c.prompt, { max_new_tokens: c.max_new_tokens, stop_at_eos: false });
      assert.deepEqual([...c.input_ids, ...r.tokens.map((t) => t.id)], c.output_ids, `${name}: ${c.prompt}`);
    }
    await gen.dispose();
  }
});
