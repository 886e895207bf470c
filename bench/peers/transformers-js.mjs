// transformers.js for the benchmark in Node, on onnxruntime-web rather than onnxruntime-node.
//
// @huggingface/transformers 4.3.1 is installed in bench/peers/transformers-js/ (its own package.json, so that the
// repository's devDependencies keep onnxruntime-web 1.30.0 for the other rows; `npm ci --ignore-scripts` there, which
// bench/run.mjs runs when it is missing). transformers.js picks its runtime by environment: in a browser
// onnxruntime-web (its dependency, 1.31.0-dev.20260914, the WebGPU bundle running the wasm execution provider), in
// Node onnxruntime-node (native code: not what this benchmark compares). Its documented override — a runtime set at
// globalThis[Symbol.for('onnxruntime')] before it is imported — gives it onnxruntime-web's Node build of that same
// version (dist/ort.node.min.mjs: the wasm build without asyncify, which reads model files by path as
// transformers.js hands them over in Node). Models must then be loaded with { device: 'auto', session_options:
// { executionProviders: ['wasm'] } } (with the override no device is "supported", and 'auto' is the one value that
// does not throw) and an explicit dtype. Threads: numThreads as asked (1 in the benchmark).
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
export const TRANSFORMERS_JS_DIR = path.join(here, 'transformers-js');
const modules = path.join(TRANSFORMERS_JS_DIR, 'node_modules');

export function transformersJsInstalled() {
  return existsSync(path.join(modules, '@huggingface/transformers/package.json'));
}

export const versionOf = (pkg) => JSON.parse(readFileSync(path.join(modules, pkg, 'package.json'), 'utf8')).version;

let loaded = null;
export async function loadTransformersJs({ numThreads = 1 } = {}) {
  if (loaded) return loaded;
  if (!transformersJsInstalled()) throw new Error(`transformers.js is not installed: (cd ${path.relative(process.cwd(), TRANSFORMERS_JS_DIR)} && npm ci --ignore-scripts)`);
  const ort = await import(pathToFileURL(path.join(modules, 'onnxruntime-web/dist/ort.node.min.mjs')).href);
  ort.env.wasm.numThreads = numThreads;
  ort.env.wasm.wasmPaths = path.join(modules, 'onnxruntime-web/dist') + path.sep;  // else transformers.js sets a CDN
  globalThis[Symbol.for('onnxruntime')] = ort;
  const transformers = await import(pathToFileURL(path.join(modules, '@huggingface/transformers/dist/transformers.node.mjs')).href);
  transformers.env.allowRemoteModels = false;
  transformers.env.useWasmCache = false;
  loaded = {
    ort, transformers,
    versions: { '@huggingface/transformers': versionOf('@huggingface/transformers'), 'onnxruntime-web': versionOf('onnxruntime-web') },
    // from_pretrained's options for a local folder on onnxruntime-web's wasm execution provider
    modelOptions: { local_files_only: true, dtype: 'fp32', device: 'auto', session_options: { executionProviders: ['wasm'], graphOptimizationLevel: 'all' } },
  };
  return loaded;
}
