// `npm run build:site`: writes site/, a self-contained offline copy of the demo that works from any static host
// and from file:// — one classic script (esbuild), a worker started from a Blob URL, the single-file engine (wasm
// inlined), and the bundled models as GGUF files (the translation model: its Hugging Face folder's files) embedded in
// script files. No request leaves the folder.
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { singleFileScript } from './single-file.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(root, process.argv[2] ?? 'site');
const MODELS = { bert: 'packages/models/wasmformer-bert-mini-q8_0.gguf', gpt2: 'packages/models/wasmformer-gpt2-mini-q8_0.gguf',
                 embed: 'packages/models/wasmformer-embed-mini-q8_0.gguf', chat: 'packages/models/wasmformer-chat-mini-q8_0.gguf',
                 // a Marian folder as Hugging Face lays it out (no GGUF form): the files the engine reads, each embedded
                 translate: ['config.json', 'generation_config.json', 'model.safetensors', 'source.spm', 'target.spm', 'vocab.json',
                   'tokenizer_config.json', 'special_tokens_map.json'].map((f) => `models/wasmformer-translate-en-es/${f}`) };

if (!existsSync(path.join(root, 'dist/wasmformer-single.mjs'))) execFileSync('bash', [path.join(root, 'scripts/build.sh'), 'wasm'], { stdio: 'inherit' });
rmSync(out, { recursive: true, force: true });
mkdirSync(path.join(out, 'models'), { recursive: true });

writeFileSync(path.join(out, 'demo.js'), await singleFileScript(path.join(root, 'web/demo/demo.js')));
for (const f of ['demo.css', 'favicon.svg']) copyFileSync(path.join(root, 'web/demo', f), path.join(out, f));

const scripts = [];
for (const [name, file] of Object.entries(MODELS)) {
  const entry = (f) => `{ file: ${JSON.stringify(path.basename(f))}, base64: "${readFileSync(path.join(root, f)).toString('base64')}" }`;
  const js = `(globalThis.WF_MODELS ??= {})[${JSON.stringify(name)}] = ${Array.isArray(file) ? `{ files: [${file.map(entry).join(', ')}] }` : entry(file)};\n`;
  writeFileSync(path.join(out, 'models', `${name}.js`), js);
  scripts.push(`  <script src="models/${name}.js" defer></script>`);
}
// (demo.js has @huggingface/jinja bundled in: the page's import map, for the unbundled demo, goes)
const html = readFileSync(path.join(root, 'web/demo/index.html'), 'utf8')
  .replace(/  <!-- chat templates[\s\S]*?<script type="importmap">[\s\S]*?<\/script>\n/, '')
  .replace('  <script type="module" src="demo.js"></script>', [...scripts, '  <script src="demo.js" defer></script>'].join('\n'));
writeFileSync(path.join(out, 'index.html'), html);
copyFileSync(path.join(root, 'LICENSE'), path.join(out, 'LICENSE'));
for (const name of ['wasmformer-bert-mini', 'wasmformer-gpt2-mini', 'wasmformer-embed-mini', 'wasmformer-chat-mini', 'wasmformer-translate-en-es'])
  if (existsSync(path.join(root, 'models', name, 'README.md'))) copyFileSync(path.join(root, 'models', name, 'README.md'), path.join(out, 'models', `${name}.md`));
const size = (f) => readFileSync(path.join(out, f)).length;
console.log(`wrote ${path.relative(root, out)}/: index.html, demo.js (${(size('demo.js') / 1e6).toFixed(2)} MB, engine inlined), ` +
            Object.keys(MODELS).map((n) => `models/${n}.js (${(size(`models/${n}.js`) / 1e6).toFixed(1)} MB)`).join(', '));
console.log(`open it: file://${path.join(out, 'index.html')}`);
