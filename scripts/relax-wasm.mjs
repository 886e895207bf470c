#!/usr/bin/env node
// Writes the relaxed-SIMD twin of a linked Emscripten module: `node scripts/relax-wasm.mjs GLUE IN.wasm OUT.wasm`.
// The kernels call placeholder functions where they mean relaxed SIMD's instructions (src/kernels/relaxed.h; the
// toolchain cannot emit the final opcodes, see README's build notes); the link imports them from
// bindings/relaxed-simd.js. Here every `call` of such an import becomes the instruction itself (its operands and
// its result are the same on the stack) and every call of wf_relaxed_simd() becomes `i32.const 1`. The imports
// stay, so the same Emscripten glue (GLUE, whose import table names them, minified or not) instantiates both .wasm
// files. The module goes through wabt's wasm2wat and wat2wasm (Debian: wabt), which know the final opcodes.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const instructions = {
  wf_relaxed_simd: 'i32.const 1',
  wf_relaxed_dot_i8x16_i7x16_add_s: 'i32x4.dot_i8x16_i7x16_add_s', // wabt 1.0.32's name for i32x4.relaxed_dot_i8x16_i7x16_add_s (0xfd 0x113)
  wf_relaxed_dot_i8x16_i7x16_s: 'i16x8.dot_i8x16_i7x16_s', // wabt 1.0.32's name for i16x8.relaxed_dot_i8x16_i7x16_s (0xfd 0x112)
  wf_relaxed_madd_f32x4: 'f32x4.relaxed_madd', // 0xfd 0x105
};

const [glue, input, output] = process.argv.slice(2);
if (!glue || !input || !output) {
  console.error('usage: node scripts/relax-wasm.mjs GLUE.js IN.wasm OUT.wasm');
  process.exit(2);
}
const fail = (msg) => {
  console.error(`relax-wasm: ${msg}`);
  process.exit(1);
};

// The glue's import object maps each import name to its JS function: "c":_wf_relaxed_dot_… (or, unminified,
// "wf_relaxed_dot_…":_wf_relaxed_dot_…).
const js = readFileSync(glue, 'utf8');
const importName = {};
for (const [, name, fn] of js.matchAll(/["']?([\w$]+)["']?\s*:\s*_(wf_relaxed_\w+)\b/g)) if (fn in instructions) importName[fn] = name;
const missing = Object.keys(instructions).filter((f) => !(f in importName));
if (missing.length) fail(`${glue} imports no ${missing.join(', ')} (was bindings/relaxed-simd.js linked?)`);

const dir = mkdtempSync(join(tmpdir(), 'relax-wasm-'));
try {
  const wat = join(dir, 'm.wat');
  execFileSync('wasm2wat', ['--enable-all', '--no-check', input, '-o', wat], { stdio: 'inherit' });
  const lines = readFileSync(wat, 'utf8').split('\n');
  // function imports come first in the index space, in the order of the import section
  const index = {};
  let funcs = 0;
  for (const line of lines) {
    const m = line.match(/^\s*\(import "([^"]*)" "([^"]*)" \(func \(;(\d+);\)/);
    if (!m) continue;
    funcs++;
    for (const [fn, name] of Object.entries(importName)) if (m[2] === name && (m[1] === 'env' || m[1] === 'a')) {
      if (fn in index) fail(`two imports named ${name}`);
      index[fn] = m[3];
    }
  }
  if (!funcs) fail(`${input}: no function imports found`);
  const byCall = new Map(Object.entries(index).map(([fn, i]) => [`call ${i}`, instructions[fn]]));
  const counts = {};
  const out = lines.map((line) => {
    const m = line.match(/^(\s*)(call \d+)$/);
    const ins = m && byCall.get(m[2]);
    if (!ins) return line;
    counts[ins] = (counts[ins] ?? 0) + 1;
    return m[1] + ins;
  });
  for (const ins of Object.values(instructions)) if (!counts[ins]) fail(`${input}: no call to rewrite as ${ins} (the kernels no longer use it?)`);
  const relaxedWat = join(dir, 'r.wat');
  writeFileSync(relaxedWat, out.join('\n'));
  execFileSync('wat2wasm', ['--enable-all', relaxedWat, '-o', output], { stdio: 'inherit' });
  console.log(`relax-wasm: ${output}: ${Object.entries(counts).map(([k, v]) => `${v} × ${k}`).join(', ')}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
