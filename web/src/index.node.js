// wasmformer for Node (package.json's "node" export condition): the engine runs in a worker_threads Worker, on the
// threaded build, so timers, servers and AbortSignals keep working while it computes.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';

import { setPlatform } from './api.js';

setPlatform({
  createWorker() {
    const w = new Worker(new URL('./worker-node.js', import.meta.url));
    return {
      post: (m, t) => w.postMessage(m, t),
      onMessage: (f) => w.on('message', f),
      onExit: (f) => {
        w.on('error', (e) => f(`the engine's worker failed (${e?.message ?? e})`));
        w.on('exit', (code) => f(`the engine's worker exited (code ${code})`));
      },
      terminate: () => w.terminate(),
      ref: () => w.ref(),
      unref: () => w.unref(),
    };
  },
  isLocalPath: (s) => existsSync(s),
  // file: URLs and paths (relative to the working directory) are read from disk; other URLs are fetched
  async describe(s) {
    if (/^file:/i.test(s)) return { type: 'path', path: fileURLToPath(s) };
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(s)) return { type: 'url', url: s };
    const p = path.resolve(s);
    if (!existsSync(p)) throw new Error(`${p}: no such folder or file (a Hugging Face repo is written "org/name")`);
    return { type: 'path', path: p };
  },
  // the bundled default models, from the wasmformer-models package (installed with wasmformer)
  async defaultModel(task) {
    let models, options;
    try {
      const where = createRequire(import.meta.url).resolve('wasmformer-models');
      ({ models, options } = await import(pathToFileURL(where).href));
    } catch (e) {
      throw new Error(`no model given for ${task}, and the default models are not installed (npm install wasmformer-models), or pass a model`);
    }
    if (!models?.[task]) throw new Error(`no model given for ${task}, and wasmformer-models has none for it: pass a model`);
    return { source: models[task], options: options?.[task], name: `wasmformer-models (${task})` };
  },
  async localPlatform() {
    const { loadEngine, readPath } = await import('./engine-node.js');
    return { loadEngine, readPath };
  },
});

export { CACHE_NAME, FillMask, Model, TextGenerator, TextStreamer, Tokenizer, clearCache, hubSource, pipeline, terminate } from './api.js';
