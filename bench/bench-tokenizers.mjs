// Tokenizer speed (`npm run bench`): wasmformer natively and in wasm (Node) beside transformers.js's tokenizers
// (@huggingface/tokenizers) on the same ~1 MB of mixed-language text, in the same run.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Tokenizer as HF } from '@huggingface/tokenizers';

import { Tokenizer } from 'wasmformer';
import { root } from '../tests/js/helpers.mjs';
import { bertTokenizerConfig, bertTokenizerJson, gpt2TokenizerConfig, gpt2TokenizerJson } from '../tests/js/hf-tokenizer-json.mjs';

const parts = ['README.md', 'LICENSE', 'tests/data/tokenizers/llamacpp/ggml-vocab-gpt-2.gguf.inp'].map((f) => readFileSync(path.join(root, f), 'utf8'));
let text = '';
while (text.length < 1_000_000) text += parts.join('\n');
const file = path.join(root, 'build/bench-text.txt');
writeFileSync(file, text);
const best = (f) => { let b = Infinity; f(); for (let i = 0; i < 3; i++) { const t0 = performance.now(); f(); b = Math.min(b, performance.now() - t0); } return b / 1000; };
const bestAsync = async (f) => { let b = Infinity; await f(); for (let i = 0; i < 3; i++) { const t0 = performance.now(); await f(); b = Math.min(b, performance.now() - t0); } return b / 1000; };

const native = Object.fromEntries(execFileSync(path.join(root, 'build/native/wf-bench-tokenizers'), [file], { cwd: root, encoding: 'utf8' })
  .trim().split('\n').map((l) => l.split(' ')).map(([n, count, s]) => [n, { count: Number(count), s: Number(s) }]));
console.log(`tokenizer speed on ${(Buffer.byteLength(text) / 1e6).toFixed(2)} MB of text (README, LICENSE, llama.cpp's multilingual test strings)`);
console.log('tokenizer  tokens     native tok/s   wasm tok/s   transformers.js tok/s   wasm vs transformers.js');
for (const [name, json, cfg] of [['bert', bertTokenizerJson(), bertTokenizerConfig], ['gpt2', gpt2TokenizerJson(), gpt2TokenizerConfig]]) {
  const ours = await Tokenizer.load({ 'tokenizer.json': JSON.stringify(json) });
  const theirs = new HF(json, cfg);
  let n = 0;
  const tw = await bestAsync(async () => { n = (await ours.encode(text)).length; });
  const th = best(() => theirs.encode(text));
  const nat = native[name];
  const f = (x) => (x / 1e6).toFixed(2).padStart(6) + 'M';
  console.log(`${name.padEnd(10)} ${String(n).padEnd(10)} ${f(nat.count / nat.s).padEnd(14)} ${f(n / tw).padEnd(12)} ${f(n / th).padEnd(23)} ${(th / tw).toFixed(2)}x`);
  await ours.dispose();
}
