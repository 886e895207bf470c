// The engine's translations of the evaluated verses (evaluate.py --sources), as the demo makes them: the bundled
// model loaded with dtype q8_0 (or --dtype), beam search with the folder's generation_config.json (num_beams 4) and
// greedy, max_new_tokens = 2 × source tokens + 16 as evaluate.py. evaluate.py --hyps scores the file it writes.
//
//   node tools/train/translate/engine-translate.mjs build/translate-train/sources-500.json build/translate-train/engine-500.json
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

import { Model } from '../../../web/src/index.node.js';

const { values, positionals } = parseArgs({ allowPositionals: true, options: {
  model: { type: 'string', default: 'models/wasmformer-translate-en-es' }, dtype: { type: 'string', default: 'q8_0' } } });
const [sourcesFile, outFile] = positionals;
if (!outFile) throw new Error('usage: engine-translate.mjs SOURCES.json OUT.json [--model DIR] [--dtype q8_0]');
const verses = JSON.parse(readFileSync(sourcesFile, 'utf8'));
const model = await Model.load(values.model, { dtype: values.dtype });
const hyps = {}, minutes = {};
for (const [name, beams] of [['greedy', 1], ['beam4', 4]]) {
  for (const eng of ['kjv', 'web']) {
    const key = `${name} ${eng}`, t0 = performance.now();
    hyps[key] = [];
    for (const v of verses) {
      const n = (await model.tokenizer.encode(v[eng])).length;
      const [[r]] = await model.translate(v[eng], { num_beams: beams, max_new_tokens: Math.min(2 * n + 16, 511) });
      hyps[key].push(r.translation_text);
    }
    minutes[key] = Math.round((performance.now() - t0) / 600) / 100;
    console.error(`${key}: ${verses.length} verses in ${minutes[key]} min`);
  }
}
writeFileSync(outFile, JSON.stringify({ engine: `wasmformer ${values.dtype} (${model.info.dtype}), one thread, Node ${process.version}`,
  options: { max_new_tokens: '2 × source tokens + 16 (≤ 511)', num_beams: [1, 4] }, keys: verses.map((v) => v.key), hyps, minutes }, null, 1));
await model.dispose();
