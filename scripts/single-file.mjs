// One classic script for a page that must work from file:// (which can fetch nothing and start no module worker):
// the entry bundled with esbuild, the engine's single-file build (wasm inlined) wherever the API imports the normal
// one, no threaded build, and the engine's worker started from a Blob URL. Used by scripts/build-site.mjs (the
// demo) and examples/semantic-search/build.mjs.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const singleFile = {
  name: 'single-file-engine',
  setup(b) {
    b.onResolve({ filter: /dist\/wasmformer\.mjs$/ }, () => ({ path: path.join(root, 'dist/wasmformer-single.mjs') }));
    b.onResolve({ filter: /dist\/wasmformer-mt\.mjs$/ }, () => ({ path: 'no-threads', namespace: 'wf-no-threads' }));
    b.onLoad({ filter: /.*/, namespace: 'wf-no-threads' }, () => ({ contents: 'export default () => { throw new Error("no threaded build in a single-file page"); };' }));
  },
};
const common = { bundle: true, format: 'iife', platform: 'browser', target: 'es2022', minify: true, write: false, logLevel: 'error', external: ['node:*'],
  plugins: [singleFile], define: { 'globalThis.WF_SINGLE_FILE': 'true', 'import.meta.url': '"file:///wasmformer/"' } };

// The page script's text: the entry bundled, preceded by the worker's Blob URL.
export async function singleFileScript(entry) {
  const worker = await esbuild.build({ ...common, entryPoints: [path.join(root, 'web/src/worker.js')] });
  const page = await esbuild.build({ ...common, entryPoints: [entry],
    banner: { js: `globalThis.WF_WORKER_URL = URL.createObjectURL(new Blob([${JSON.stringify(worker.outputFiles[0].text)}], { type: 'text/javascript' }));\n` +
                  `globalThis.WF_WORKER_TYPE = 'classic';` } });
  return page.outputFiles[0].text;
}
