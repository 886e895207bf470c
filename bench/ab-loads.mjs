// `node bench/ab-loads.mjs ROOT_A ROOT_B [--rounds N] [MODEL[:dtype] …]`: two builds' load times in one Node process,
// alternating (A B, then B A, …): from a model's files to a model that runs (the files read, the tokenizer built, the
// weights converted), then disposed. ROOT_A / ROOT_B as for bench/ab-builds.mjs (a checkout whose dist/ holds a build,
// with node_modules). MODEL: a folder or GGUF under build/bench-models (npm run bench makes them) or an absolute path;
// default gpt2-base:f32 (GPT-2 small's safetensors, vocab.json + merges.txt) and marian-en-de. worker: false,
// threads: 1, cache: false. Prints each build's median and B's time over A's per round (median and quartiles).
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
let rounds = 8;
const roots = [], models = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--rounds') rounds = Number(args[++i]);
  else if (roots.length < 2) roots.push(path.resolve(args[i]));
  else models.push(args[i]);
}
if (roots.length !== 2 || !(Number.isInteger(rounds) && rounds >= 1)) {
  console.error('usage: node bench/ab-loads.mjs ROOT_A ROOT_B [--rounds N] [MODEL[:dtype] …]');
  process.exit(2);
}
if (!models.length) models.push('gpt2-base:f32', 'marian-en-de');
const builds = await Promise.all(roots.map((r) => import(path.join(r, 'web/src/index.node.js'))));
const q = (a, p) => [...a].sort((x, y) => x - y)[Math.floor(p * (a.length - 1))];
for (const m of models) {
  const [name, dtype] = m.split(':');
  const source = path.isAbsolute(name) ? name : path.join(root, 'build/bench-models', name);
  const load = async (wf) => {
    const t0 = performance.now();
    const model = await wf.Model.load(source, { worker: false, threads: 1, cache: false, ...(dtype ? { dtype } : {}) });
    const t = performance.now() - t0;
    await model.dispose();
    return t;
  };
  for (const wf of builds) await load(wf);  // each engine compiled and warm
  const t = [[], []], ratio = [];
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 ? [1, 0] : [0, 1];
    const got = [];
    for (const i of order) got[i] = await load(builds[i]);
    t[0].push(got[0]), t[1].push(got[1]), ratio.push(got[1] / got[0]);
  }
  console.log(`${m}: A ${q(t[0], 0.5).toFixed(0)} ms, B ${q(t[1], 0.5).toFixed(0)} ms; B / A per round median ${q(ratio, 0.5).toFixed(3)} ` +
    `(quartiles ${q(ratio, 0.25).toFixed(3)}–${q(ratio, 0.75).toFixed(3)}, ${rounds} rounds)`);
}
process.exit(0);
