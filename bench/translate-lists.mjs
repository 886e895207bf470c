// A list of texts translated one call per text against the same texts as lists of n (one decoder pass per step for
// a whole list: tasks/seq2seq.cpp's side-by-side batches, greedy or beam search), same process, alternating; prints
// the speed-up and whether the translations are identical.
//
//   node bench/translate-lists.mjs [--model models/wasmformer-translate-en-es] [--dtype q8_0] [--texts FILE] [--beams 4]
//
// FILE: one English text per line, or evaluate.py --sources' JSON (its "kjv" verses); by default the held-out sample
// build/translate-train/sources-500.json (tools/train/translate/evaluate.py --limit 500 --sources …).
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

import { Model } from '../web/src/index.node.js';

const { values } = parseArgs({ options: { model: { type: 'string', default: 'models/wasmformer-translate-en-es' }, dtype: { type: 'string', default: 'q8_0' },
  texts: { type: 'string', default: 'build/translate-train/sources-500.json' }, count: { type: 'string', default: '48' }, beams: { type: 'string', default: '1' } } });
const raw = readFileSync(values.texts, 'utf8');
const all = values.texts.endsWith('.json') ? JSON.parse(raw).map((v) => v.kjv) : raw.split('\n').filter((l) => l.trim());
const texts = all.slice(0, Number(values.count));
const m = await Model.load(values.model, { dtype: values.dtype, threads: 1 });
const beams = Number(values.beams);
const opts = { num_beams: beams, max_new_tokens: 64 };
await m.translate(texts.slice(0, 2), opts);  // warm-up
console.log(`${texts.length} texts, ${values.model} (${m.info.dtype}), ${beams > 1 ? `${beams} beams` : 'greedy'}, one thread`);
for (const n of [4, 8, 16, texts.length]) {
  let t0 = performance.now();
  const one = [];
  for (const t of texts) one.push((await m.translate(t, opts))[0][0].translation_text);
  const apart = performance.now() - t0;
  t0 = performance.now();
  const lists = [];
  for (let i = 0; i < texts.length; i += n) lists.push(...(await m.translate(texts.slice(i, i + n), opts)).map((r) => r[0].translation_text));
  const together = performance.now() - t0;
  const same = lists.filter((t, i) => t === one[i]).length;
  console.log(`lists of ${n}: one by one ${Math.round(apart)} ms, as lists ${Math.round(together)} ms: ${(apart / together).toFixed(2)}×; identical ${same}/${texts.length}`);
}
await m.dispose();
