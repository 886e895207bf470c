// wasmformer for browsers and bundlers (package.json's default export condition): the engine runs in a Web Worker
// the package starts itself, so the page's thread never computes. No Node module is imported here.
import { setPlatform } from './api.js';

const DEFAULTS = Symbol.for('wasmformer.defaultModels');

setPlatform({
  createWorker() {
    // the offline site starts a classic worker from a Blob URL (file:// pages can start no module worker)
    const url = globalThis.WF_WORKER_URL;
    const w = url ? new Worker(url, { type: globalThis.WF_WORKER_TYPE ?? 'module' }) : new Worker(new URL('./worker.js', import.meta.url), { type: 'module' });
    return {
      post: (m, t) => w.postMessage(m, t),
      onMessage: (f) => w.addEventListener('message', (e) => f(e.data)),
      onExit: (f) => w.addEventListener('error', (e) => {
        e.preventDefault?.();
        f(`the engine's worker failed (${e.message || 'it could not start'})`);
      }),
      terminate: () => w.terminate(),
    };
  },
  // a relative URL means relative to the page, not to the worker's script
  async describe(s) {
    return { type: 'url', url: new URL(s, globalThis.location?.href).href };
  },
  // the defaults a page registers with `import 'wasmformer-models'` (bundlers then copy the model files)
  async defaultModel(task) {
    const registry = globalThis[DEFAULTS], entry = registry?.[task];
    if (!entry && registry && Object.keys(registry).length)
      throw new Error(`no model given for ${task}, and the imported default models have none for it (they cover ${Object.keys(registry).join(', ')}): pass a model`);
    if (!entry) throw new Error(`no model given for ${task}: pass a model URL or files, or add \`import 'wasmformer-models'\` to use the bundled default models`);
    const { source, options } = typeof entry === 'string' ? { source: entry } : entry;  // a URL, or { source, options }
    return { source, options, name: `wasmformer-models (${task})` };
  },
  async localPlatform() {
    const { loadEngine } = await import('./engine.js');
    return { loadEngine };
  },
});

export { CACHE_NAME, FillMask, Model, TextGenerator, TextStreamer, Tokenizer, clearCache, hubSource, pipeline, terminate } from './api.js';
