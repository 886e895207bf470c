// esbuild bundles code only: the files that code refers to by URL (new URL('…', import.meta.url)) are copied here,
// beside the bundles — the engine's .wasm (src/main.js passes its URL) and the default models.
import { copyFileSync, cpSync } from 'node:fs';

copyFileSync('node_modules/wasmformer/dist/wasmformer.wasm', 'dist/wasmformer.wasm');
for (const f of ['wasmformer-bert-mini-q8_0.gguf', 'wasmformer-gpt2-mini-q8_0.gguf']) copyFileSync(`node_modules/wasmformer-models/${f}`, `dist/${f}`);
// the translation model is a folder of files (a Marian model in Hugging Face's layout)
cpSync('node_modules/wasmformer-models/wasmformer-translate-en-es', 'dist/wasmformer-translate-en-es', { recursive: true });
copyFileSync('index.html', 'dist/index.html');
