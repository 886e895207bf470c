// Loads the wasm engine in a browser (inside the package's Web Worker): the .wasm bytes are located next to this
// package (new URL(…, import.meta.url), which bundlers understand) or given as `wasmUrl` / `wasmBinary` (URLs made
// absolute by the caller, against the page), and handed
// to the Emscripten factory, which never fetches anything itself. Also the helpers every caller of the engine
// shares. Node loads the engine with engine-node.js.
import createWasmformer from '../../dist/wasmformer.mjs';
// imported statically: bundlers build workers without code splitting by default (Vite: IIFE), so no import() here
import createWasmformerMt from '../../dist/wasmformer-mt.mjs';
import { relaxedSimdPlan } from './features.js';

// How many threads the engine may use here, or why it runs on one. The threaded build needs SharedArrayBuffer,
// which browsers give only to cross-origin isolated pages (COOP: same-origin + COEP: require-corp).
function threadPlan(threads) {
  if (threads != null && !(Number.isInteger(threads) && threads >= 1)) throw new Error(`wasmformer: threads must be a whole number ≥ 1, got ${threads}`);
  if (threads === 1) return { want: 1, reason: 'one thread was asked for' };
  if (globalThis.WF_SINGLE_FILE) return { want: 1, reason: 'the single-file build has no threads' };
  if (!globalThis.crossOriginIsolated || typeof SharedArrayBuffer !== 'function')
    return { want: 1, reason: 'the page is not cross-origin isolated (serve it with COOP: same-origin and COEP: require-corp for threads)' };
  const cores = globalThis.navigator?.hardwareConcurrency || 4;
  return { want: threads ?? Math.max(1, Math.min(cores, 8)) };
}

async function readBytes(url) {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`wasmformer: could not load ${url} (HTTP ${res.status})`);
  return res.arrayBuffer();
}

export const quiet = { print: () => {}, printErr: () => {} };

// The pthreads build: wasmformer-mt.mjs starts `threads − 1` workers (wasmformer-mt.worker.js, next to it) before
// it resolves; a page whose CSP or headers keep them from starting never resolves, hence the time limit.
// Each build has a relaxed-SIMD twin (the same glue runs both; README): chosen where the engine runs relaxed SIMD.
async function loadThreaded(threads, threadedWasmUrl, relaxed) {
  const bytes = await readBytes(threadedWasmUrl ?? (relaxed ? new URL('../../dist/wasmformer-mt-relaxed.wasm', import.meta.url) : new URL('../../dist/wasmformer-mt.wasm', import.meta.url)));
  let timer;
  const timeout = new Promise((_, reject) => (timer = setTimeout(() => reject(new Error('its workers did not start within 20 s')), 20000)));
  try {
    const e = await Promise.race([createWasmformerMt({ ...quiet, wasmBinary: bytes, wfPoolSize: threads - 1 }), timeout]);
    const got = e.setThreads(threads);
    e.wfThreads = { threads: got, threading: got > 1 ? `${got} threads (pthreads)` : 'one thread: no worker thread started' };
    return e;
  } finally {
    clearTimeout(timer);
  }
}

// engine.wfThreads = { threads, threading }: the count in use and, in words, how (or why only one).
export async function loadEngine({ wasmUrl, wasmBinary, threads, threadedWasmUrl, relaxedSimd } = {}) {
  const plan = threadPlan(threads);
  const relaxed = relaxedSimdPlan(relaxedSimd);
  let why = plan.reason;
  if (plan.want > 1 && !wasmBinary && !wasmUrl) {
    try {
      return await loadThreaded(plan.want, threadedWasmUrl, relaxed);
    } catch (err) {
      why = `the threaded build did not start (${err?.message ?? err})`;
    }
  }
  let e;
  // the offline site's bundle uses the single-file build, whose wasm is inlined: nothing to fetch
  if (globalThis.WF_SINGLE_FILE) e = await createWasmformer({ ...quiet });
  else {
    const bytes = wasmBinary ?? (await readBytes(wasmUrl ?? (relaxed ? new URL('../../dist/wasmformer-relaxed.wasm', import.meta.url) : new URL('../../dist/wasmformer.wasm', import.meta.url))));
    e = await createWasmformer({ ...quiet, wasmBinary: bytes });
  }
  e.wfThreads = { threads: 1, threading: `one thread: ${why ?? 'a wasmUrl or wasmBinary of the single-thread build was given'}` };
  return e;
}

// The single-thread engine from given bytes (Node's fallback; engine-node.js).
export const loadSingle = (wasmBinary) => createWasmformer({ ...quiet, wasmBinary });

// The engine's memory as bytes. Memory grows (and, shared between threads, is replaced by a larger buffer), so
// the view is checked against the live buffer each time.
export function heapU8(e) {
  const live = e.wasmMemory?.buffer;
  return live && e.HEAPU8.buffer !== live ? new Uint8Array(live) : e.HEAPU8;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

// Text → UTF-8 bytes. Lone surrogates become U+FFFD (TextEncoder's rule), never Emscripten's string conversion.
export const utf8 = (s) => encoder.encode(String(s));
export const json = (o) => encoder.encode(JSON.stringify(o ?? {}, (k, v) => (typeof v === 'string' ? v.toWellFormed?.() ?? v : v)));

// A binding's result: a byte view of JSON, copied at once; {"error": …} becomes a thrown Error.
export function result(view) {
  const o = JSON.parse(decoder.decode(view.slice()));
  if (o && typeof o === 'object' && !Array.isArray(o) && 'error' in o) {
    const e = new Error(o.error);
    if (o.cancelled) e.name = 'AbortError';
    throw e;
  }
  return o;
}
