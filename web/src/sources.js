// Model sources → files streamed into the engine's memory.
//
// A source is: a folder URL or a Hugging Face repo URL (https://huggingface.co/{repo} or …/resolve/{rev}/); a map of
// file names to ArrayBuffer / typed array / Blob / string; an array or FileList of File objects; in Node also a
// folder path. Sizes are known before any byte is read (HEAD requests for URLs), so progress has its total up front.
import { heapU8, json, result } from './engine.js';

const INDEX = 'model.safetensors.index.json';
export const CACHE_NAME = 'wasmformer-v1';

const isNode = typeof process === 'object' && process.versions?.node && typeof window === 'undefined';

function aborted(signal) {
  if (signal?.aborted) throw signal.reason instanceof Error ? signal.reason : Object.assign(new Error('aborted'), { name: 'AbortError' });
}

// Base URL of a folder or a Hugging Face repo (default revision: main).
export function baseUrl(src) {
  const u = new URL(src, typeof location === 'object' ? location.href : undefined);
  if (u.hostname === 'huggingface.co' && !u.pathname.includes('/resolve/')) {
    const parts = u.pathname.split('/').filter(Boolean);
    if (parts.length < 1) throw new Error(`not a Hugging Face repo URL: ${src}`);
    const repo = parts[0] === 'models' ? parts.slice(1, 3) : parts.slice(0, 2);
    const tree = parts.indexOf('tree');
    const rev = tree >= 0 && parts[tree + 1] ? parts[tree + 1] : 'main';
    return `https://huggingface.co/${repo.join('/')}/resolve/${rev}/`;
  }
  return u.href.endsWith('/') ? u.href : u.href + '/';
}

const isGguf = (name) => /\.gguf$/i.test(name);

// Which files to read is the engine's decision (tasks/pipeline.h: select_files), made from the names a source
// has; a source that cannot list its files is asked for each name the engine may want (candidateFiles).
// size(name) → the file's size, or null when it is absent. Returns [{ name, size }].
async function pick(engine, weights, size, names = null) {
  if (!names) {
    const candidates = result(engine.candidateFiles(weights));
    const sizes = await Promise.all(candidates.map(size));
    names = candidates.filter((n, i) => sizes[i] != null);
  }
  const chosen = result(engine.selectFiles(json(names), weights));
  return Promise.all(chosen.map(async (name) => ({ name, size: await size(name) })));
}

async function cacheStore(useCache) {
  if (!useCache || typeof caches === 'undefined') return null;
  try { return await caches.open(CACHE_NAME); } catch { return null; }
}

// Resolves a source into [{ name, size, open(): AsyncIterable<Uint8Array> }], without reading any weights yet.
export async function resolve(engine, source, { weights = true, cache = true, signal, fetch: fetchFn = globalThis.fetch } = {}) {
  aborted(signal);
  if (source instanceof ArrayBuffer || ArrayBuffer.isView(source)) source = { 'model.gguf': source };  // bytes alone: a GGUF file
  if (typeof source === 'string' && isNode && !/^[a-z][a-z0-9+.-]*:\/\//i.test(source)) {
    const fs = await import('node:fs/promises');
    const path = await import('node:path');
    if (isGguf(source)) {
      const size = (await fs.stat(source)).size;
      return [{ name: path.basename(source), size, open: () => nodeChunks(fs, source, signal) }];
    }
    const stat = async (n) => { try { return (await fs.stat(path.join(source, n))).size; } catch { return null; } };
    let names;
    try { names = await fs.readdir(source); } catch (e) { throw new Error(`${source}: ${e.code === 'ENOENT' ? 'no such folder' : e.message}`); }
    const files = await pick(engine, weights, stat, names);
    await addShards(files, async (n) => JSON.parse(await fs.readFile(path.join(source, n), 'utf8')), stat);
    return files.map((f) => ({ ...f, open: () => nodeChunks(fs, path.join(source, f.name), signal) }));
  }
  if (typeof source === 'string' || source instanceof URL) {
    const store = await cacheStore(cache);
    const u = new URL(String(source), typeof location === 'object' ? location.href : undefined);
    if (isGguf(u.pathname)) {  // one GGUF file
      const res = await fetchFn(u.href, { method: 'HEAD', signal });
      if (!res.ok) throw new Error(`${u.href}: HTTP ${res.status}`);
      const len = res.headers.get('content-length');
      return [{ name: u.pathname.split('/').pop(), size: len == null ? -1 : Number(len), url: u.href, open: () => urlChunks(u.href, store, signal, fetchFn) }];
    }
    const base = baseUrl(String(source));
    const head = async (n) => {
      const url = base + n;
      const hit = store && (await store.match(url));
      if (hit) return Number(hit.headers.get('content-length') ?? (await hit.clone().arrayBuffer()).byteLength);
      const res = await fetchFn(url, { method: 'HEAD', signal });
      if (!res.ok) return null;
      const len = res.headers.get('content-length');
      return len == null ? -1 : Number(len);
    };
    const files = await pick(engine, weights, head);
    await addShards(files, async (n) => (await fetchFn(base + n, { signal })).json(), head);
    return files.map((f) => ({ ...f, url: base + f.name, open: () => urlChunks(base + f.name, store, signal, fetchFn) }));
  }
  // File objects, or a map of names → data
  const entries = new Map();
  if (typeof FileList !== 'undefined' && source instanceof FileList) source = [...source];
  if (Array.isArray(source)) for (const f of source) entries.set(f.name, f);
  else if (source && typeof source === 'object' && !(source instanceof ArrayBuffer)) for (const [k, v] of Object.entries(source)) entries.set(k, v);
  else throw new Error('unsupported model source: give a URL, a folder path (Node), File objects, or a map of file names');
  const data = new Map();
  for (const [name, v] of entries) {
    if (typeof Blob !== 'undefined' && v instanceof Blob) data.set(name, v);
    else if (typeof v === 'string') data.set(name, new TextEncoder().encode(v));
    else if (v instanceof ArrayBuffer) data.set(name, new Uint8Array(v));
    else if (ArrayBuffer.isView(v)) data.set(name, new Uint8Array(v.buffer, v.byteOffset, v.byteLength));
    else throw new Error(`file ${name}: unsupported data (give ArrayBuffer, a typed array, a Blob or a string)`);
  }
  const size = (n) => (data.has(n) ? data.get(n).size ?? data.get(n).byteLength : null);
  const files = await pick(engine, weights, size, [...data.keys()]);
  await addShards(files, async (n) => JSON.parse(await textOf(data.get(n))), size);
  return files.map((f) => ({ ...f, open: () => memChunks(data.get(f.name), signal) }));
}

async function addShards(files, readJson, size) {
  if (!files.some((f) => f.name === INDEX)) return;
  const index = await readJson(INDEX);
  const shards = [...new Set(Object.values(index?.weight_map ?? {}))];
  for (const s of shards) {
    if (typeof s !== 'string' || !/^[^/\\:]+$/.test(s) || s === '.' || s === '..')
      throw new Error(`model.safetensors.index.json names "${s}", which is not a plain file name`);
    const n = await size(s);
    if (n == null) throw new Error(`model.safetensors.index.json names shard ${s}, which is missing`);
    files.push({ name: s, size: n });
  }
}

const textOf = async (d) => (typeof Blob !== 'undefined' && d instanceof Blob ? d.text() : new TextDecoder().decode(d));

async function* memChunks(d, signal) {
  if (typeof Blob !== 'undefined' && d instanceof Blob) {
    const reader = d.stream().getReader();
    for (;;) {
      aborted(signal);
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  }
  for (let i = 0; i < d.byteLength; i += 1 << 22) {
    aborted(signal);
    yield d.subarray(i, Math.min(d.byteLength, i + (1 << 22)));
  }
}

async function* nodeChunks(fs, file, signal) {
  const h = await fs.open(file, 'r');
  try {
    const buf = new Uint8Array(1 << 22);
    for (;;) {
      aborted(signal);
      const { bytesRead } = await h.read(buf, 0, buf.length, null);
      if (!bytesRead) return;
      yield buf.subarray(0, bytesRead);
    }
  } finally {
    await h.close();
  }
}

async function* urlChunks(url, store, signal, fetchFn) {
  let res = store && (await store.match(url));
  if (!res) {
    res = await fetchFn(url, { signal });
    if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
    if (store) {
      // cache a copy while streaming the other
      const [a, b] = res.body.tee();
      store.put(url, new Response(b, { headers: res.headers })).catch(() => {});
      res = new Response(a, { headers: res.headers });
    }
  }
  const reader = res.body.getReader();
  try {
    for (;;) {
      aborted(signal);
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    reader.releaseLock?.();
  }
}

// Streams every file into a FileSet in wasm memory (one copy: network/disk → wasm heap), with one aggregate
// progress stream: { status: 'progress', file, loaded, total, progress }.
export async function download(engine, files, { signal, progress_callback } = {}) {
  const fileSet = new engine.FileSet();
  try {
    const known = files.every((f) => f.size >= 0);
    const total = known ? files.reduce((s, f) => s + f.size, 0) : null;
    let loaded = 0;
    progress_callback?.({ status: 'initiate', files: files.map((f) => f.name), total });
    for (const f of files) {
      const chunks = [];
      let ptr = 0, got = 0;
      if (f.size >= 0) {
        ptr = fileSet.allocate(f.name, f.size);
        if (!ptr && f.size > 0) throw new Error(`out of memory: could not allocate ${f.size} bytes for ${f.name}`);
      }
      for await (const c of f.open()) {
        if (f.size >= 0) {
          if (got + c.byteLength > f.size) throw new Error(`${f.name}: more bytes than the announced ${f.size}`);
          heapU8(engine).set(c, ptr + got);  // re-read each time: memory may have grown
        } else chunks.push(c.slice());
        got += c.byteLength;
        loaded += c.byteLength;
        progress_callback?.({ status: 'progress', file: f.name, loaded, total, progress: total ? (100 * loaded) / total : null });
      }
      if (f.size >= 0 && got !== f.size) throw new Error(`${f.name}: got ${got} bytes, expected ${f.size}`);
      if (f.size < 0) {
        ptr = fileSet.allocate(f.name, got);
        if (!ptr && got > 0) throw new Error(`out of memory: could not allocate ${got} bytes for ${f.name}`);
        let off = 0;
        for (const c of chunks) { heapU8(engine).set(c, ptr + off); off += c.byteLength; }
      }
      progress_callback?.({ status: 'done', file: f.name });
    }
    return fileSet;
  } catch (e) {
    fileSet.delete();
    throw e;
  }
}

// Removes every cached model file (browsers).
export async function clearCache() {
  if (typeof caches !== 'undefined') await caches.delete(CACHE_NAME);
}
