// `node bench/ab-builds.mjs ROOT_A ROOT_B [--rounds N]`: two builds of the engine in one Node process, alternating
// (A B, then B A, …), on the engine alone — what a change to the engine bought, without a peer: text-classification of
// one 32-token text (DistilBERT-base), fill-mask at 128 tokens (BERT-base), and a 128-token GPT-2 small prompt + one
// token in f32 and at q8_0. ROOT_A and ROOT_B are checkouts whose dist/ holds a build (`npm run build:wasm`, or only
// `cmake --build build/wasm --target wasmformer-js` and its wasmformer.mjs / .wasm copied over another dist/); each
// needs node_modules (a symlink to this checkout's will do). Models from build/bench-models (npm run bench makes them).
// worker: false, threads: 1, cache: false. Prints the median and quartiles of each, per build.
//   git worktree add /tmp/base HEAD~1 && …build there… && node bench/ab-builds.mjs /tmp/base .
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
let rounds = 6;
const roots = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--rounds') rounds = Number(args[++i]);
  else roots.push(path.resolve(args[i]));
}
if (roots.length !== 2 || !(Number.isInteger(rounds) && rounds >= 1)) {
  console.error('usage: node bench/ab-builds.mjs ROOT_A ROOT_B [--rounds N]');
  process.exit(2);
}
const models = path.join(root, 'build/bench-models');
const opts = { worker: false, threads: 1, cache: false };
const words = 'the quick brown fox jumps over the lazy dog and then it runs far away into the deep dark forest where nobody can'.split(' ');
const text = (n, mask = -1) => Array.from({ length: n }, (_, i) => (i === mask ? '[MASK]' : words[i % words.length])).join(' ');
const classifyText = text(words.length), fillText = text(120, 60), prompt = text(128);

const engines = [];
for (const [name, dir] of [['A', roots[0]], ['B', roots[1]]]) {
  const wf = await import(path.join(dir, 'web/src/index.node.js'));
  engines.push({
    name,
    dir,
    work: {
      classify: await wf.pipeline('text-classification', path.join(models, 'distilbert-cls'), opts),
      fill: await wf.FillMask.load(path.join(models, 'bert-base'), opts),
      'gpt2 f32': await wf.pipeline('text-generation', path.join(models, 'gpt2-base'), { ...opts, dtype: 'f32' }),
      'gpt2 q8_0': await wf.pipeline('text-generation', path.join(models, 'gpt2-base'), { ...opts, dtype: 'q8_0' }),
    },
    ms: {},
  });
}
const run = {
  classify: (p) => p(classifyText),
  fill: (fm) => fm.fill(fillText, { top_k: 1 }),
  'gpt2 f32': (g) => g(prompt, { max_new_tokens: 1, do_sample: false }),
  'gpt2 q8_0': (g) => g(prompt, { max_new_tokens: 1, do_sample: false }),
};
for (const e of engines) for (const [k, w] of Object.entries(e.work)) await run[k](w);  // warm-up
for (let r = 0; r < rounds; r++)
  for (const e of r % 2 ? [...engines].reverse() : engines)
    for (const [k, w] of Object.entries(e.work)) {
      const t0 = performance.now();
      await run[k](w);
      (e.ms[k] ??= []).push(performance.now() - t0);
    }
const q = (a, p) => [...a].sort((x, y) => x - y)[Math.floor(p * (a.length - 1))];
for (const e of engines) {
  console.log(`${e.name} (${e.dir}):`);
  for (const [k, a] of Object.entries(e.ms))
    console.log(`  ${k.padEnd(10)} median ${q(a, 0.5).toFixed(1)} ms (quartiles ${q(a, 0.25).toFixed(1)}–${q(a, 0.75).toFixed(1)}, ${a.length} runs)`);
}
for (const e of engines) for (const w of Object.values(e.work)) w.dispose?.();
