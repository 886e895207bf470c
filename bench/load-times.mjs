// `node bench/load-times.mjs [--reps N] [--threads T] MODEL[:DTYPE] …`: how long Model.load takes in Node, in the
// caller's thread (one thread, no cache; with --threads T > 1 the package's worker and its T threads, which convert a
// matrix's rows side by side), each model loaded N times (3) in this process — the first load of a process also compiles
// the engine and grows its memory. MODEL: a folder or file path, or a name under build/bench-models (npm run bench
// makes them). To compare two builds, run this from both checkouts in turn, several rounds (the machine drifts).
//   node bench/load-times.mjs marian-en-de marian-en-de:q8_0 gpt2-base gguf/gpt2-q8_0.gguf
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { Model } from '../web/src/index.node.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
let reps = 3, threads = 1;
const models = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--reps') reps = Number(args[++i]);
  else if (args[i] === '--threads') threads = Number(args[++i]);
  else models.push(args[i]);
}
if (!models.length || !(Number.isInteger(reps) && reps >= 1) || !(Number.isInteger(threads) && threads >= 1)) {
  console.error('usage: node bench/load-times.mjs [--reps N] [--threads T] MODEL[:DTYPE] …');
  process.exit(2);
}
for (const spec of models) {
  const [name, dtype] = spec.split(':');
  const where = existsSync(name) ? name : path.join(root, 'build/bench-models', name);
  const ms = [];
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    const engine = threads === 1 ? { worker: false, threads: 1 } : { threads };
    const m = await Model.load(where, { ...engine, cache: false, ...(dtype ? { dtype } : {}) });
    ms.push(performance.now() - t0);
    m.dispose();
  }
  console.log(`${spec}${threads > 1 ? ` (${threads} threads)` : ''}: ${ms.map((x) => x.toFixed(0)).join(', ')} ms`);
}
if (threads > 1) process.exit(0);  // the package's worker would keep the process alive
