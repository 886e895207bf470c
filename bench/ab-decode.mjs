// `node bench/ab-decode.mjs ROOT_A ROOT_B [--threads N] [--rounds N] [--models m,…]`: two builds' greedy decode,
// alternating (A B, then B A, …): a 9-word prompt + 32 tokens per run, one model at a time, loaded by each build —
// what bench/ab-builds.mjs times for decode, without loading its other models first (Marian, BERT, …), and at any
// thread count. Models: a GGUF name under build/bench-models/gguf (`llama-q8_0.gguf`), or a folder of
// build/bench-models with a dtype (`gpt2-base:q4_k`); npm run bench makes them. ROOT_A and ROOT_B are as for
// bench/ab-builds.mjs (a dist/ with a build, node_modules). Prints per model the medians and B / A per round.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { alternate, quantile as q } from './ab-work.mjs';

const here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
let threads = 2, rounds = 10, models = 'llama-q4_0.gguf,llama-q8_0.gguf,llama-q4_k_m.gguf,gpt2-base:q8_0,gpt2-base:q4_0,gpt2-base:q4_k,gpt2-base:f32';
const roots = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--threads') threads = Number(args[++i]);
  else if (args[i] === '--rounds') rounds = Number(args[++i]);
  else if (args[i] === '--models') models = args[++i];
  else roots.push(path.resolve(args[i]));
}
if (roots.length !== 2 || !(Number.isInteger(threads) && threads >= 1) || !(Number.isInteger(rounds) && rounds >= 1)) {
  console.error('usage: node bench/ab-decode.mjs ROOT_A ROOT_B [--threads N] [--rounds N] [--models m,…]');
  process.exit(2);
}
const builds = await Promise.all(roots.map((r) => import(path.join(r, 'web/src/index.node.js'))));
const prompt = 'the quick brown fox jumps over the lazy dog';
console.log(`A: ${roots[0]}\nB: ${roots[1]}\n${threads} thread${threads > 1 ? 's' : ''}, ${rounds} rounds, ${prompt.split(' ').length}-word prompt + 32 greedy tokens`);
for (const m of models.split(',')) {
  const [name, dtype] = m.split(':');
  const source = path.join(here, 'build/bench-models', name.endsWith('.gguf') ? path.join('gguf', name) : name);
  const gen = [];
  for (const wf of builds) gen.push(await wf.pipeline('text-generation', source, { worker: false, threads, cache: false, ...(dtype ? { dtype } : {}) }));
  const ms = await alternate(gen.map((g, i) => ({ name: 'AB'[i], work: { [m]: () => g(prompt, { max_new_tokens: 32, do_sample: false }) } })), rounds);
  const [a, b] = [ms.A[m], ms.B[m]], ratio = a.map((t, i) => b[i] / t);
  console.log(`  ${m.padEnd(20)} A ${q(a, 0.5).toFixed(1)} ms  B ${q(b, 0.5).toFixed(1)} ms  B / A median ${q(ratio, 0.5).toFixed(3)} (quartiles ${q(ratio, 0.25).toFixed(3)}–${q(ratio, 0.75).toFixed(3)})`);
  for (const g of gen) g.dispose();
}
process.exit(0);
