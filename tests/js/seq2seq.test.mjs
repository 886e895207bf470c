// Translation (Marian, T5) through the package, as users call it: pipeline('translation') with transformers.js's output shape
// and Model.translate with every hypothesis; the sequences equal the PyTorch reference's
// (tools/reference/make_marian_fixtures.py wrote tests/data/fixtures/marian-tiny*/expected.json), greedy and beam search,
// with the cross-attention weights; errors name the option. In the worker (the default) and in the caller's thread.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import { Model, pipeline } from 'wasmformer';
import { fixture } from './helpers.mjs';

const expected = (name) => JSON.parse(readFileSync(`${fixture(name)}/expected.json`, 'utf8'));

for (const worker of [true, false]) {
  const where = worker ? 'worker' : 'caller\'s thread';

  test(`translation: the reference's greedy and beam sequences, through the package (${where})`, async () => {
    for (const name of ['marian-tiny', 'marian-tiny-relu', 't5-tiny', 't5-tiny-gated']) {
      const m = await Model.load(fixture(name), { worker });
      assert.ok(m.info.tasks.includes('translation'), m.info.tasks.join());
      let n = 0;
      for (const c of expected(name).generate) {
        assert.deepEqual(await m.tokenizer.encode(c.source_text), c.source_ids, c.source_text);
        const [hyps] = await m.translate(c.source_text, c.options);
        assert.deepEqual(hyps.map((h) => [c.sequences[0][0], ...h.token_ids]), c.sequences, `${name} ${JSON.stringify(c.options)}`);
        n++;
      }
      assert.ok(n >= 10, `${name}: only ${n} cases ran`);
      await m.dispose();
    }
  });

  test(`translation pipeline: transformers.js's flat list, output_attentions, clear errors (${where})`, async () => {
    const translate = await pipeline('translation', fixture('marian-tiny'), { worker });
    const texts = ['In the beginning God created the heaven and the earth.', 'And God said, Let there be light.'];
    const one = await translate(texts[0], { num_beams: 1, max_new_tokens: 8 });
    assert.equal(one.length, 1);
    assert.equal(typeof one[0].translation_text, 'string');
    const two = await translate(texts, { num_beams: 3, num_return_sequences: 2, max_new_tokens: 8 });
    assert.equal(two.length, 4);
    const detailed = await translate.model.translate(texts, { num_beams: 3, num_return_sequences: 2, max_new_tokens: 8 });
    assert.deepEqual(two.map((t) => t.translation_text), detailed.flat().map((h) => h.translation_text));
    const [withAttn] = await translate(texts[1], { num_beams: 1, max_new_tokens: 5, output_attentions: true });
    const ca = withAttn.cross_attentions;
    assert.equal(ca.weights.length, ca.target_tokens.length);
    for (const step of ca.weights)
      for (const layer of step)
        for (const head of layer) {
          assert.equal(head.length, ca.source_tokens.length);
          assert.ok(Math.abs(head.reduce((a, b) => a + b, 0) - 1) < 1e-4, 'each head\'s weights sum to 1');
        }
    await assert.rejects(translate('Hello', { num_beams: 2, num_return_sequences: 3 }), /num_return_sequences \(3\) must not exceed num_beams \(2\)/);
    await assert.rejects(translate('Hello', { num_beem: 2 }), /did you mean "num_beams"/);
    // still usable
    assert.equal((await translate('Hello', { num_beams: 1, max_new_tokens: 3 })).length, 1);
    // streaming: the pieces make the greedy translation; beam search comes as one piece; an abort keeps what came
    const m = translate.model;
    const streamed = 'The LORD is my shepherd; I shall not want.';
    const s = m.translateStream(streamed, { num_beams: 1, max_new_tokens: 10 });
    const pieces = [];
    for await (const p of s) pieces.push(p);
    const [[whole]] = await m.translate(streamed, { num_beams: 1, max_new_tokens: 10 });
    assert.equal(pieces.join(''), whole.translation_text);
    assert.ok(pieces.length > 1, pieces.join('|'));
    assert.deepEqual(s.result.results[0].token_ids, whole.token_ids);
    const b = m.translateStream(texts[0], { num_beams: 3, max_new_tokens: 8 });
    const beamPieces = [];
    for await (const p of b) beamPieces.push(p);
    const [[best]] = await m.translate(texts[0], { num_beams: 3, max_new_tokens: 8 });
    assert.deepEqual(beamPieces, best.translation_text ? [best.translation_text] : []);
    const ctl = new AbortController();
    const a = m.translateStream(streamed, { num_beams: 1, max_new_tokens: 10, signal: ctl.signal });
    await assert.rejects(async () => {
      for await (const p of a) ctl.abort();
    }, (e) => e.name === 'AbortError' && e.result.finish_reason === 'aborted' && e.result.token_ids.length >= 1);
    assert.equal((await translate('Hello', { num_beams: 1, max_new_tokens: 3 })).length, 1);
    await translate.dispose();
  });

  test(`summarization and text2text-generation with T5: transformers.js's keys, the same ids as translate (${where})`, async () => {
    const summarize = await pipeline('summarization', fixture('t5-tiny'), { worker });
    const text = 'summarize: In the beginning God created the heaven and the earth.';
    const [s] = await summarize(text, { num_beams: 2, max_new_tokens: 6 });
    const [[h]] = await summarize.model.text2text(text, { num_beams: 2, max_new_tokens: 6 });
    assert.equal(s.summary_text, h.generated_text);
    const t2t = await pipeline('text2text-generation', fixture('t5-tiny-gated'), { worker });
    const [g] = await t2t('translate English to German: Jesus wept.', { max_new_tokens: 5 });
    assert.equal(typeof g.generated_text, 'string');
    await summarize.dispose();
    await t2t.dispose();
  });
}
