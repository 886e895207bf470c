// The encoder pipelines through the package, as users call them (transformers.js's call shapes), on the fixtures
// whose outputs the PyTorch reference wrote (tools/reference/pipelines.py): the same labels, scores, entities and
// answers, with offsets as JavaScript string indices (the reference's are code points: texts with emoji tell them
// apart). In the worker (the default) and in the caller's thread.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import { Model, pipeline } from 'wasmformer';
import { fixture } from './helpers.mjs';

const golden = (name) => JSON.parse(readFileSync(`${fixture(name)}/golden-pipeline.json`, 'utf8'));
const near = (a, b, what) => assert.ok(Math.abs(a - b) < 1e-5, `${what}: ${a} vs ${b}`);
// code points → UTF-16 index
const js = (text, cp) => [...text].slice(0, cp).join('').length;

for (const worker of [true, false]) {
  const opts = { worker };
  const where = worker ? 'worker' : 'caller\'s thread';

  test(`text-classification, single texts, pairs and top_k, equal the reference (${where})`, async () => {
    for (const name of ['bert-tiny-cls', 'distilbert-tiny-multilabel', 'roberta-tiny-cls', 'modernbert-tiny-cls']) {
      const classify = await pipeline('sentiment-analysis', fixture(name), opts);
      for (const c of golden(name).cases) {
        const out = await classify(c.inputs, c.options);
        assert.equal(out.length, c.output.length, `${name} ${JSON.stringify(c)}`);
        out.forEach((o, i) => {
          assert.equal(o.label, c.output[i].label);
          near(o.score, c.output[i].score, name);
        });
      }
      // a batch: one object each (top_k 1), in input order
      const texts = golden(name).cases.filter((c) => typeof c.inputs === 'string').map((c) => c.inputs);
      const one = await Promise.all(texts.map((t) => classify(t)));
      const batch = await classify(texts);
      assert.deepEqual(batch.map((b) => b.label), one.map((o) => o[0].label));
      batch.forEach((b, i) => near(b.score, one[i][0].score, 'batch'));
      await classify.dispose();
    }
  });

  test(`text-classification from llama.cpp's GGUF of a ModernBERT classifier (cls.output, its labels) equals the reference (${where})`, async () => {
    const classify = await pipeline('text-classification', fixture('modernbert-tiny-cls.gguf'), opts);
    assert.ok(classify.model.info.tasks.includes('text-classification'));
    let cases = 0;
    for (const c of golden('modernbert-tiny-cls').cases) {
      if (typeof c.inputs !== 'string') continue;  // a GGUF's pair template is llama.cpp's, not the folder's
      const out = await classify(c.inputs, c.options);
      assert.equal(out.length, c.output.length, JSON.stringify(c));
      out.forEach((o, i) => {
        assert.equal(o.label, c.output[i].label);
        near(o.score, c.output[i].score, 'modernbert-tiny-cls.gguf');
      });
      ++cases;
    }
    assert.ok(cases > 0);
    await classify.dispose();
  });

  test(`token-classification, every aggregation strategy, offsets as string indices (${where})`, async () => {
    // WordPiece (BERT) and byte-level BPE (ModernBERT: characters split across tokens, words decoded twice)
    for (const name of ['bert-tiny-ner', 'modernbert-tiny-ner']) {
      const ner = await pipeline('ner', fixture(name), opts);
      for (const c of golden(name).cases) {
        const out = await ner(c.inputs, c.options);
        assert.equal(out.length, c.output.length, JSON.stringify(c.options));
        out.forEach((o, i) => {
          const w = c.output[i];
          assert.equal(o.entity ?? o.entity_group, w.entity ?? w.entity_group);
          assert.equal(o.word, w.word);
          near(o.score, w.score, 'score');
          assert.equal(o.start, js(c.inputs, w.start));
          assert.equal(o.end, js(c.inputs, w.end));
          assert.equal(c.inputs.slice(o.start, o.end).length > 0, true);
        });
      }
      await ner.dispose();
    }
  });

  // the Hugging Face folder, and the same model as a GGUF file with llama.cpp's modern-bert names and tokenizer
  for (const source of ['modernbert-tiny-mlm', 'modernbert-tiny-mlm.gguf'])
  test(`fill-mask on ModernBERT from ${source}: rotary positions, local and global layers, the tied decoder (${where})`, async () => {
    const unmasker = await pipeline('fill-mask', fixture(source), opts);
    for (const c of golden('modernbert-tiny-mlm').cases) {
      const out = await unmasker(c.inputs, c.options);
      assert.equal(out.length, c.output.length);
      out.forEach((o, i) => {
        assert.equal(o.token, c.output[i].token);
        assert.equal(o.token_str, c.output[i].token_str);
        assert.equal(o.sequence, c.output[i].sequence);
        near(o.score, c.output[i].score, 'score');
      });
    }
    await unmasker.dispose();
  });

  test(`question-answering over windows of a long context (${where})`, async () => {
    const qa = await pipeline('question-answering', fixture('distilbert-tiny-qa'), opts);
    for (const c of golden('distilbert-tiny-qa').cases) {
      const out = await qa(c.inputs.question, c.inputs.context, c.options);
      const want = Array.isArray(c.output) ? c.output : [c.output];
      const got = Array.isArray(out) ? out : [out];
      assert.equal(got.length, want.length);
      got.forEach((a, i) => {
        near(a.score, want[i].score, 'score');
        assert.equal(a.answer, want[i].answer);
        assert.equal(a.start, js(c.inputs.context, want[i].start));
        assert.equal(c.inputs.context.slice(a.start, a.end), a.answer);
      });
    }
    await qa.dispose();
  });

  test(`feature-extraction: pooling, normalize, and a sentence-transformers folder's own (${where})`, async () => {
    for (const name of ['bert-tiny-st', 'electra-tiny-disc']) {
      const extract = await pipeline('feature-extraction', fixture(name), opts);
      for (const c of golden(name).cases) {
        const t = await extract(c.inputs, c.options);
        assert.deepEqual(t.dims, c.output.dims);
        assert.equal(t.data.length, c.output.data.length);
        t.data.forEach((x, i) => near(x, c.output.data[i], `${name} ${i}`));
      }
      await extract.dispose();
    }
    // the folder says mean pooling and Normalize: without options, unit vectors of the mean
    const m = await Model.load(fixture('bert-tiny-st'), opts);
    assert.ok(m.info.tasks.includes('feature-extraction'));
    const t = await m.embed(['one sentence', 'and another, longer one']);
    assert.deepEqual(t.dims, [2, 16]);
    const [a, b] = t.tolist();
    near(Math.hypot(...a), 1, 'norm');
    near(Math.hypot(...b), 1, 'norm');
    const mean = await m.embed('one sentence', { pooling: 'mean', normalize: true });
    mean.data.forEach((x, i) => near(x, a[i], 'batch vs single'));
    await assert.rejects(m.embed('x', { pooling: 'max' }), /pooling must be one of none, mean, cls/);
    await assert.rejects(m.classify('x'), /text-classification: this model \(bert\) supports feature-extraction/);
    await m.dispose();
  });
}

test('a failed encoder call leaves the model usable; unknown options name the nearest', async () => {
  const classify = await pipeline('text-classification', fixture('bert-tiny-cls'));
  await assert.rejects(classify('x', { topk: 2 }), /unknown option "topk" \(use top_k\)|did you mean "top_k"/);
  await assert.rejects(classify('x', { function_to_apply: 'tanh' }), /function_to_apply must be one of default, softmax, sigmoid, none/);
  await assert.rejects(classify('x'.repeat((1 << 20) + 1)), /over the limit of 1048576 bytes/);
  assert.equal((await classify('x', { top_k: null })).length, 3);
  const qa = await pipeline('question-answering', fixture('distilbert-tiny-qa'));
  await assert.rejects(qa('q', 'context', { doc_stride: 500 }), /doc_stride \(500\) must be less than/);
  assert.equal(typeof (await qa('Who?', 'Nobody.')).answer, 'string');
  await classify.dispose();
  await qa.dispose();
});
