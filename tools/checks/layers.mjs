// The core's include rules (src/README.md): folders are layers, and includes go one way —
//   core ← kernels ← formats ← nn, tokenizers ← models ← tasks
// A file may include files of its own folder or of a lower layer; nn and tokenizers (one layer) do not include
// each other. Also: no include cycle between files, only src/kernels includes xsimd, and nothing in src/ includes
// Emscripten. `node tools/checks/layers.mjs` prints the problems (exit 1 if any); the test suite runs it.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const LAYERS = { core: 0, kernels: 1, formats: 2, nn: 3, tokenizers: 3, models: 4, tasks: 5 };

// files: { 'kernels/matmul.cpp': 'source text', … } (paths relative to src/) → a list of problems, in words.
export function checkLayers(files) {
  const problems = [];
  const graph = new Map();
  for (const [file, text] of Object.entries(files)) {
    const folder = file.split('/')[0];
    if (!(folder in LAYERS)) {
      problems.push(`${file}: src/${folder} is not a layer (${Object.keys(LAYERS).join(', ')})`);
      continue;
    }
    const deps = [];
    for (const m of text.matchAll(/^\s*#\s*include\s*([<"])([^>"]+)[>"]/gm)) {
      const [, kind, name] = m;
      if (/^emscripten\//.test(name) || name === 'emscripten.h') problems.push(`${file}: includes <${name}> (the core never knows Emscripten)`);
      if (/^xsimd\//.test(name) && folder !== 'kernels') problems.push(`${file}: includes <${name}> (only kernels know xsimd)`);
      if (kind !== '"') continue;
      const target = name.split('/')[0];
      if (!(name in files)) {
        problems.push(`${file}: includes "${name}", which is not a file of src/ (write includes as "layer/file.h")`);
        continue;
      }
      deps.push(name);
      if (target !== folder && LAYERS[target] >= LAYERS[folder])
        problems.push(`${file}: includes "${name}" — ${folder} (layer ${LAYERS[folder]}) may not include ${target} (layer ${LAYERS[target]})`);
    }
    graph.set(file, deps);
  }
  // cycles: depth-first search, reporting each cycle once by its path
  const state = new Map();  // 1 = on the stack, 2 = done
  const stack = [];
  const visit = (f) => {
    state.set(f, 1);
    stack.push(f);
    for (const d of graph.get(f) ?? []) {
      if (state.get(d) === 1) problems.push(`include cycle: ${[...stack.slice(stack.indexOf(d)), d].join(' → ')}`);
      else if (!state.has(d)) visit(d);
    }
    stack.pop();
    state.set(f, 2);
  };
  for (const f of graph.keys()) if (!state.has(f)) visit(f);
  return problems;
}

export function readSources(srcDir) {
  const files = {};
  const walk = (dir) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.(h|cpp)$/.test(e.name)) files[path.relative(srcDir, p).split(path.sep).join('/')] = readFileSync(p, 'utf8');
    }
  };
  walk(srcDir);
  return files;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
  const problems = checkLayers(readSources(path.join(root, 'src')));
  for (const p of problems) console.log(p);
  if (problems.length) process.exit(1);
  console.log('layers: every include goes one way');
}
