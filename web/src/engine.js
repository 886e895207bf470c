// Loads the wasm engine: the .wasm bytes are located next to this package (new URL(…, import.meta.url), which
// bundlers understand) or given as `wasmUrl` / `wasmBinary`, and handed to the Emscripten factory, which never
// fetches anything itself.
import createWasmformer from '../../dist/wasmformer.mjs';

const isNode = typeof process === 'object' && process.versions?.node && typeof window === 'undefined';
let shared = null;

export async function loadEngine({ wasmUrl, wasmBinary } = {}) {
  if (!wasmUrl && !wasmBinary && shared) return shared;
  const promise = (async () => {
    // the offline site's bundle uses the single-file build, whose wasm is inlined: nothing to fetch
    if (globalThis.WF_SINGLE_FILE) return createWasmformer({ print: () => {}, printErr: () => {} });
    let bytes = wasmBinary;
    if (!bytes) {
      const url = wasmUrl ? new URL(wasmUrl, import.meta.url) : new URL('../../dist/wasmformer.wasm', import.meta.url);
      if (isNode && url.protocol === 'file:') {
        const { readFile } = await import('node:fs/promises');
        bytes = await readFile(url);
      } else {
        const res = await fetch(url);
        if (!res.ok) throw new Error(`wasmformer: could not load ${url} (HTTP ${res.status})`);
        bytes = await res.arrayBuffer();
      }
    }
    return createWasmformer({ wasmBinary: bytes, print: () => {}, printErr: () => {} });
  })();
  if (!wasmUrl && !wasmBinary) shared = promise;
  promise.catch(() => { if (shared === promise) shared = null; });
  return promise;
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
