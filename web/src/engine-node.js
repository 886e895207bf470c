// Loads the wasm engine in Node (inside the package's worker_threads Worker): the threaded build for Node
// (dist/wasmformer-node.cjs, CommonJS as Emscripten 3.1.6 writes Node glue; its pthreads are worker_threads and
// its .wasm is the browsers' threaded one), or the single-thread build when one thread is asked for or the
// threaded one fails to start.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import { fileURLToPath } from 'node:url';

import { loadSingle, quiet } from './engine.js';
import { relaxedSimdPlan } from './features.js';
import { ggufParts, splitGguf } from './sources.js';

const dist = new URL('../../dist/', import.meta.url);

export async function loadEngine({ wasmBinary, threads, relaxedSimd } = {}) {
  if (threads != null && !(Number.isInteger(threads) && threads >= 1)) throw new Error(`wasmformer: threads must be a whole number ≥ 1, got ${threads}`);
  const cores = os.availableParallelism?.() ?? os.cpus().length;
  const want = threads ?? Math.max(1, Math.min(cores, 8));
  // each build's relaxed-SIMD twin where Node runs relaxed SIMD's final semantics (Node 20 does not)
  const relaxed = relaxedSimdPlan(relaxedSimd);
  let why = threads === 1 ? 'one thread was asked for' : `this machine has ${cores} core${cores === 1 ? '' : 's'}`;
  if (want > 1 && !wasmBinary) {
    try {
      const create = createRequire(import.meta.url)(fileURLToPath(new URL('wasmformer-node.cjs', dist)));
      const bytes = await readFile(new URL(relaxed ? 'wasmformer-mt-relaxed.wasm' : 'wasmformer-mt.wasm', dist));
      const e = await create({ ...quiet, wasmBinary: bytes, wfPoolSize: want - 1 });
      const got = e.setThreads(want);
      // the pool's worker_threads must not keep the process alive once the caller is done (they wait in wasm;
      // nothing in them needs the event loop)
      for (const w of [...(e.PThread?.unusedWorkers ?? []), ...(e.PThread?.runningWorkers ?? [])]) w.unref?.();
      e.wfThreads = { threads: got, threading: got > 1 ? `${got} threads (pthreads in worker_threads)` : 'one thread: no worker thread started' };
      return e;
    } catch (err) {
      why = `the threaded build did not start (${err?.message ?? err})`;
    }
  }
  const e = await loadSingle(wasmBinary ?? (await readFile(new URL(relaxed ? 'wasmformer-relaxed.wasm' : 'wasmformer.wasm', dist))));
  e.wfThreads = { threads: 1, threading: `one thread: ${wasmBinary ? 'a wasmBinary of the single-thread build was given' : why}` };
  return e;
}

// Folder and file paths as model sources: a listing ({ name, size } of the regular files) and a file's chunks.
export const readPath = {
  async list(p) {
    const fs = await import('node:fs/promises');
    const path = await import('node:path');
    let st;
    try {
      st = await fs.stat(p);
    } catch (e) {
      throw new Error(`${p}: ${e.code === 'ENOENT' ? 'no such folder or file' : e.message}`);
    }
    if (st.isFile()) {
      // a part of a split GGUF model brings its siblings (the engine then says which part is missing, if one is)
      const split = splitGguf(path.basename(p));
      if (!split || split.count === 1) return [{ name: path.basename(p), size: st.size, file: p }];
      const dir = path.dirname(p), want = new Set(ggufParts(split)), out = [];
      for (const n of await fs.readdir(dir)) if (want.has(n)) out.push({ name: n, size: (await fs.stat(path.join(dir, n))).size });
      return out;
    }
    const out = [];
    for (const e of await fs.readdir(p, { withFileTypes: true })) {
      if (e.isFile()) out.push({ name: e.name, size: (await fs.stat(path.join(p, e.name))).size });
      // one level of subfolders, as "1_Pooling/config.json" (sentence-transformers folders)
      if (e.isDirectory() && !e.name.startsWith('.'))
        for (const f of await fs.readdir(path.join(p, e.name), { withFileTypes: true }))
          if (f.isFile()) out.push({ name: `${e.name}/${f.name}`, size: (await fs.stat(path.join(p, e.name, f.name))).size });
    }
    return out;
  },
  // one file by its file: URL (a files map's entry): { size, open() }
  async file(href, signal) {
    const fs = await import('node:fs/promises');
    const path = await import('node:path');
    const p = fileURLToPath(href);
    let st;
    try {
      st = await fs.stat(p);
    } catch (e) {
      throw new Error(`${p}: ${e.code === 'ENOENT' ? 'no such file' : e.message}`);
    }
    if (!st.isFile()) throw new Error(`${p}: not a file`);
    return { size: st.size, open: () => readPath.open(p, path.basename(p), signal) };
  },
  async *open(p, name, signal) {
    const fs = await import('node:fs/promises');
    const path = await import('node:path');
    const file = (await fs.stat(p)).isFile() ? path.join(path.dirname(p), name) : path.join(p, name);
    const h = await fs.open(file, 'r');
    try {
      const buf = new Uint8Array(1 << 22);
      for (;;) {
        if (signal?.aborted) throw signal.reason instanceof Error ? signal.reason : Object.assign(new Error('aborted'), { name: 'AbortError' });
        const { bytesRead } = await h.read(buf, 0, buf.length, null);
        if (!bytesRead) return;
        yield buf.subarray(0, bytesRead);
      }
    } finally {
      await h.close();
    }
  },
};
