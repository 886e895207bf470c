// Model sources → the files a model needs, streamed into the engine's memory. Runs where the engine runs (the
// worker). The caller has already turned the user's source into a descriptor (api.js: describeSource):
//   { type: 'url', url }         an absolute folder URL, or the URL of one .gguf file (of a split model: any part)
//   { type: 'hub', repo, revision, hub }   a Hugging Face repo
//   { type: 'path', path }       (Node) an absolute folder or .gguf path (of a split model: any part)
//   { type: 'files', files, urls? }  file name → Blob | ArrayBuffer | typed array | string; urls: file name → URL
//
// Which files to read is the engine's decision (select_files in src/tasks/pipeline.h), taken from the names a source
// lists: a folder's model-files.json, the hub's file list, a directory listing, the given names. Only a plain folder
// URL without model-files.json is probed (HEAD for each name the engine may want); an HTML answer there (the SPA
// fallback of Vite's dev server and of many static hosts) counts as "absent", never as the file. Sizes are known
// before any byte is read, so progress has its totals up front.
import { heapU8, json, result } from './engine.js';

export const CACHE_NAME = 'wasmformer-v1';
export const MANIFEST = 'model-files.json';
const INDEX = 'model.safetensors.index.json';
const isGguf = (name) => /\.gguf$/i.test(name);
// A part of a split GGUF model, as llama.cpp's gguf-split names them: <prefix>-00001-of-00003.gguf → { prefix, count }
export function splitGguf(name) {
  const m = /^(.+)-(\d{5})-of-(\d{5})\.gguf$/.exec(name);
  return m && +m[2] >= 1 && +m[2] <= +m[3] ? { prefix: m[1], count: +m[3] } : null;
}
export const ggufParts = ({ prefix, count }) =>
  Array.from({ length: count }, (_, i) => `${prefix}-${String(i + 1).padStart(5, '0')}-of-${String(count).padStart(5, '0')}.gguf`);

function aborted(signal) {
  if (signal?.aborted) throw signal.reason instanceof Error ? signal.reason : Object.assign(new Error('aborted'), { name: 'AbortError' });
}

const isHtml = (res) => /^text\/html\b/i.test(res.headers.get('content-type') ?? '');

async function cacheStore(useCache) {
  if (!useCache || typeof caches === 'undefined') return null;
  try { return await caches.open(CACHE_NAME); } catch { return null; }
}

// Resolves a source descriptor into [{ name, size, open(): AsyncIterable<Uint8Array> }], reading no weights yet.
// weights = false: a tokenizer alone (the engine then needs no config.json or weights).
export async function resolve(engine, src, { weights = true, cache = true, signal, fetch: fetchFn = globalThis.fetch, readPath } = {}) {
  aborted(signal);
  const pick = (names, sizeOf, where) => {
    try {
      return result(engine.selectFiles(json(names), weights)).map((name) => ({ name, size: sizeOf(name) }));
    } catch (e) {
      throw new Error(`${where}: ${e.message}`);
    }
  };
  switch (src.type) {
    case 'path': {
      if (!readPath) throw new Error(`${src.path}: folder paths are read in Node only; in a browser give a URL, File objects or bytes`);
      const { list, open } = readPath;
      const entries = await list(src.path);  // [{ name, size }] (one entry for a file path)
      const sizes = new Map(entries.map((e) => [e.name, e.size]));
      const files = pick(entries.map((e) => e.name), (n) => sizes.get(n), src.path);
      await addShards(files, async (n) => JSON.parse(await readText(open(src.path, n, signal))), (n) => sizes.get(n) ?? null, src.path);
      return files.map((f) => ({ ...f, open: () => open(src.path, f.name, signal) }));
    }
    case 'url':
    case 'hub': {
      const store = await cacheStore(cache);
      const get = (url, init) => fetchFn(url, { ...init, signal });
      let base, listing, where;
      if (src.type === 'hub') {
        const hub = (src.hub ?? 'https://huggingface.co').replace(/\/$/, '');
        const rev = encodeURIComponent(src.revision ?? 'main');
        base = `${hub}/${src.repo}/resolve/${rev}/`;
        where = `${src.repo} (revision ${src.revision ?? 'main'})`;
        listing = await hubListing(get, `${hub}/api/models/${src.repo}/tree/${rev}`, where);
      } else {
        const u = new URL(src.url);
        const split = isGguf(u.pathname) && splitGguf(u.pathname.split('/').pop());
        if (split && split.count > 256) throw new Error(`${u.href}: a split model of ${split.count} parts is over the limit of 256`);
        if (split && split.count > 1) {  // one part of a split GGUF model: all its parts, beside it
          const dir = new URL('.', u);
          const parts = ggufParts(split);
          const sizes = await Promise.all(parts.map((n) => headSize(get, new URL(n, dir).href, store)));
          const missing = parts.filter((n, i) => sizes[i] == null);
          if (missing.length) throw new Error(`${dir.href}: a split GGUF model of ${split.count} parts lacks ${missing.join(', ')}`);
          const files = pick(parts, (n) => sizes[parts.indexOf(n)], dir.href);
          return files.map((f) => ({ ...f, url: new URL(f.name, dir).href, open: () => urlChunks(new URL(f.name, dir).href, store, signal, fetchFn, f.size) }));
        }
        if (isGguf(u.pathname)) {  // one GGUF file: its size from the response that brings it (or from its cached parts)
          const { size, open } = await unlistedFile(u.href, { store, signal, fetchFn });
          return [{ name: u.pathname.split('/').pop(), size, url: u.href, open }];
        }
        base = u.href.endsWith('/') ? u.href : u.href + '/';
        where = base;
        listing = await manifest(get, base + MANIFEST);
      }
      let names, sizeOf;
      if (listing) {
        names = [...listing.keys()];
        sizeOf = (n) => listing.get(n) ?? null;
      } else {  // a folder that does not list itself: ask for each name the engine may want
        const candidates = result(engine.candidateFiles(weights));
        const sizes = await Promise.all(candidates.map((n) => headSize(get, base + n, store)));
        names = candidates.filter((n, i) => sizes[i] != null);
        sizeOf = (n) => sizes[candidates.indexOf(n)] ?? null;
        if (!names.length) throw new Error(`${base}: no model files there (no ${MANIFEST}, and none of ${candidates.join(', ')})`);
      }
      const files = pick(names, sizeOf, where);
      await addShards(files, async (n) => readJson(await get(base + n), base + n), async (n) => sizeOf(n) ?? headSize(get, base + n, store), where);
      return files.map((f) => ({ ...f, url: base + f.name, open: () => urlChunks(base + f.name, store, signal, fetchFn, f.size) }));
    }
    case 'files': {
      // each file: its bytes in memory, or a URL (src.urls: a bundled folder's files, as a bundler names them),
      // sized and opened only when the engine wants it
      const entries = new Map();
      for (const [name, v] of Object.entries(src.files ?? {})) {
        let d;
        if (typeof Blob !== 'undefined' && v instanceof Blob) d = v;
        else if (typeof v === 'string') d = new TextEncoder().encode(v);
        else if (v instanceof ArrayBuffer || (typeof SharedArrayBuffer === 'function' && v instanceof SharedArrayBuffer)) d = new Uint8Array(v);
        else if (ArrayBuffer.isView(v)) d = new Uint8Array(v.buffer, v.byteOffset, v.byteLength);
        else throw new Error(`file ${name}: unsupported data (give an ArrayBuffer, a typed array, a Blob, a string or a URL object)`);
        entries.set(name, { size: d.size ?? d.byteLength, open: () => memChunks(d, signal) });
      }
      const urls = new Map(Object.entries(src.urls ?? {}));
      const store = urls.size ? await cacheStore(cache) : null;
      const pending = new Map();
      const entry = async (n) => {
        if (entries.has(n)) return entries.get(n);
        if (!urls.has(n)) return null;
        if (!pending.has(n)) pending.set(n, urlFile(n, urls.get(n), { store, signal, fetchFn, readPath }));
        const e = await pending.get(n);
        entries.set(n, e);
        return e;
      };
      const where = 'the given files';
      const files = pick([...entries.keys(), ...urls.keys()], () => null, where);
      await Promise.all(files.map(async (f) => { f.size = (await entry(f.name)).size; }));
      await addShards(files, async (n) => JSON.parse(await readText((await entry(n)).open())), async (n) => (await entry(n))?.size ?? null, where);
      return files.map((f) => ({ ...f, open: () => entries.get(f.name).open() }));
    }
    default:
      throw new Error(`unsupported model source type ${src.type}`);
  }
}

// One file of a map given by URL: file: URLs from disk (Node); others asked for when the engine wants the file (one
// GET: no HEAD first; http(s) through the cache, see unlistedFile), a large one streamed later with the size its
// response announces, a small one (or a compressed answer, whose content-length is not the file's) read at once, so
// that its size is exact.
const STREAM_FROM = 1 << 20;
async function urlFile(name, href, { store, signal, fetchFn, readPath }) {
  const protocol = new URL(href).protocol;
  if (protocol === 'file:') {
    if (!readPath?.file) throw new Error(`${name} (${href}): file: URLs are read in Node only; in a browser give http(s) URLs or bytes`);
    return readPath.file(href, signal);
  }
  let f;
  try {
    if (protocol === 'http:' || protocol === 'https:') f = await unlistedFile(href, { store, signal, fetchFn });
    else f = { res: await fetchFn(href, { signal }) };  // data:, blob:
  } catch (e) {
    if (e?.name === 'AbortError') throw e;
    throw new Error(`${name}: ${e.message}`);
  }
  if (!f.res) return f;  // a big file, cached in parts
  if (!f.res.ok) throw new Error(`${name}: ${href.length > 80 ? href.slice(0, 77) + '…' : href}: HTTP ${f.res.status}`);
  if (f.size >= STREAM_FROM && !f.res.headers.get('content-encoding')) return f;
  const d = new Uint8Array(await f.res.arrayBuffer());
  return { size: d.byteLength, open: () => memChunks(d, signal) };
}

// A file by URL whose size no listing gives: { size (−1: unknown), open(), res? } from the cache (whole, or a big
// file's parts) or from the answer that brings it (res, for a file not taken into parts).
async function unlistedFile(url, { store, signal, fetchFn }) {
  const cached = await partsSize(store, url);
  if (cached > 0) return { size: cached, open: () => bigFile(url, cached, { store, signal, fetchFn }) };
  const whole = await cachedWhole(store, url);
  const res = whole ?? (await fetchNet(url, signal, fetchFn));
  const len = res.headers.get(SIZE_HEADER) ?? res.headers.get('content-length'), size = len == null ? -1 : Number(len);
  if (!whole && store && size >= PART && !res.headers.get('content-encoding'))
    return { size, open: () => bigFile(url, size, { store, signal, fetchFn, first: res }) };
  const body = whole ?? teeToCache(store, url, res);
  return { size, res: body, open: () => resumable(body, url, signal, fetchFn) };
}

// A folder's model-files.json: { "files": { name: size, … } } → Map, or null when there is none (404, or the HTML
// page a static host answers every unknown path with).
async function manifest(get, url) {
  let res;
  try {
    res = await get(url);
  } catch (e) {
    if (e?.name === 'AbortError') throw e;
    return null;
  }
  if (!res.ok || isHtml(res)) return null;
  const m = await readJson(res, url);
  if (!m || typeof m.files !== 'object' || Array.isArray(m.files)) throw new Error(`${url}: expected { "files": { name: size, … } }`);
  return new Map(Object.entries(m.files).map(([n, s]) => {
    if (!Number.isSafeInteger(s) || s < 0) throw new Error(`${url}: size of ${n} must be a whole number of bytes, got ${JSON.stringify(s)}`);
    return [n, s];
  }));
}

// The hub's file list of a repo revision: [{ type: 'file', path, size, lfs?: { size } }] → Map of top-level files.
async function hubListing(get, url, where) {
  const res = await get(url);
  if (res.status === 401 || res.status === 404) throw new Error(`${where}: no such model on the Hugging Face hub, or it is private (${url}: HTTP ${res.status})`);
  if (!res.ok) throw new Error(`${where}: the hub's file list failed (${url}: HTTP ${res.status})`);
  const list = await readJson(res, url);
  if (!Array.isArray(list)) throw new Error(`${url}: expected a list of files`);
  return new Map(list.filter((e) => e?.type === 'file' && typeof e.path === 'string' && !e.path.includes('/'))
                     .map((e) => [e.path, e.lfs?.size ?? e.size ?? -1]));
}

async function readJson(res, url) {
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
  if (isHtml(res)) throw new Error(`${url}: the server answered with an HTML page, not the file`);
  try {
    return await res.json();
  } catch (e) {
    throw new Error(`${url}: not JSON (${e.message})`);
  }
}

// Size of a file at url (cache first), −1 when the server does not say, null when it is absent.
async function headSize(get, url, store) {
  const parts = await partsSize(store, url);
  if (parts > 0) return parts;
  const hit = store && (await store.match(url));
  if (hit) return Number(hit.headers.get('content-length') ?? (await hit.clone().arrayBuffer()).byteLength);
  let res;
  try {
    res = await get(url, { method: 'HEAD' });
  } catch (e) {
    if (e?.name === 'AbortError') throw e;
    return null;
  }
  if (!res.ok || isHtml(res)) return null;
  const len = res.headers.get('content-length');
  return len == null ? -1 : Number(len);
}

async function addShards(files, readIndex, size, where) {
  if (!files.some((f) => f.name === INDEX)) return;
  const index = await readIndex(INDEX);
  const shards = [...new Set(Object.values(index?.weight_map ?? {}))];
  for (const s of shards) {
    if (typeof s !== 'string' || !/^[^/\\:]+$/.test(s) || s === '.' || s === '..')
      throw new Error(`${where}: ${INDEX} names "${s}", which is not a plain file name`);
    const n = await size(s);
    if (n == null) throw new Error(`${where}: ${INDEX} names shard ${s}, which is missing`);
    files.push({ name: s, size: n });
  }
}

async function readText(chunks) {
  const parts = [];
  for await (const c of chunks) parts.push(c.slice());
  return new TextDecoder().decode(await new Blob(parts).arrayBuffer());
}

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

// The response that brings a file: the cached one, if any and of the size the listing gives (a stale copy, e.g. of
// a file replaced on the server, is dropped and fetched again); a network response is cached as it streams, with
// its size noted beside it (x-wasmformer-size) when the listing or the response says it. A big file (PART bytes or
// more) is cached in parts instead (bigFile): callers that know the size go there first.
const SIZE_HEADER = 'x-wasmformer-size';
async function fetchFile(url, store, signal, fetchFn, size = null) {
  return (await cachedWhole(store, url, size)) ?? teeToCache(store, url, await fetchNet(url, signal, fetchFn), size);
}

function teeToCache(store, url, res, size = null) {
  if (!store) return res;
  const headers = new Headers(res.headers);
  const known = Number.isInteger(size) && size >= 0 ? size : res.headers.get('content-length');
  if (known != null) headers.set(SIZE_HEADER, String(known));
  const [a, b] = res.body.tee();  // cache a copy while streaming the other
  store.put(url, new Response(b, { headers })).catch(() => {});
  return new Response(a, { headers: res.headers });
}

// The cached copy of a whole file, if there is one of the size expected (a stale one is dropped).
async function cachedWhole(store, url, size = null) {
  const res = store && (await store.match(url));
  if (!res) return null;
  const had = res.headers.get(SIZE_HEADER) ?? res.headers.get('content-length');
  if (!(Number.isInteger(size) && size >= 0 && had != null && Number(had) !== size)) return res;
  await res.body?.cancel().catch(() => {});
  await store.delete(url).catch(() => {});
  return null;
}

async function fetchNet(url, signal, fetchFn) {
  const res = await fetchFn(url, { signal });
  if (!res.ok) throw new Error(`${url}: ${res.status === 404 ? 'not found' : `HTTP ${res.status}`}`);
  if (isHtml(res)) throw new Error(`${url}: the server answered with an HTML page, not the file (is the path right?)`);
  return res;
}

async function* urlChunks(url, store, signal, fetchFn, size) {
  if (store && size >= PART) yield* bigFile(url, size, { store, signal, fetchFn });
  else yield* resumable(() => fetchFile(url, store, signal, fetchFn, size), url, signal, fetchFn);
}

// ---- big files in the Cache API: parts of PART bytes, each an entry of its own (the file's URL with
// ?wasmformer-part=i), written as they arrive. A download cut short (the tab closed, the network gone) leaves its
// whole parts, and the next load reads those and asks the server for the rest only (Range); a file that changed
// on the server (another ETag or size) or a server without ranges is read again whole. Parts are at most PART
// bytes of memory at a time, where one entry for the whole file could only be written at its end.
export const PART = 16 << 20;
const TAG_HEADER = 'x-wasmformer-etag';
export const partKey = (url, i) => `${url}${url.includes('?') ? '&' : '?'}wasmformer-part=${i}`;
// the validator that says whether two answers are the same file (a strong ETag, else Last-Modified), or null
const tagOf = (res) => {
  const e = res.headers.get('etag');
  return e && !e.startsWith('W/') ? e : res.headers.get('last-modified');
};

// The size of a big file whose first part is cached, or null.
async function partsSize(store, url) {
  const r = store && (await store.match(partKey(url, 0)));
  return r ? Number(r.headers.get(SIZE_HEADER)) : null;
}

// The cached parts of a file of `size` bytes, from the first on while each is there and whole.
async function cachedParts(store, url, size) {
  const parts = [];
  for (let i = 0; i * PART < size; i++) {
    const r = await store.match(partKey(url, i));
    if (!r || Number(r.headers.get(SIZE_HEADER)) !== size || Number(r.headers.get('content-length')) !== Math.min(PART, size - i * PART)) break;
    parts.push(r);
  }
  return parts;
}

// A big file's bytes: cached whole (a copy written by an earlier version) or in parts, the rest from the network
// (first: a response already asked for, from byte 0), each part cached as it completes.
async function* bigFile(url, size, { store, signal, fetchFn, first = null }) {
  const whole = first ? null : await cachedWhole(store, url, size);
  if (whole) return yield* chunks(whole, signal);
  const parts = first ? [] : await cachedParts(store, url, size);
  const from = parts.length * PART;
  if (from >= size) {
    for (const p of parts) yield* chunks(p, signal);
    return;
  }
  let res = first;
  if (from > 0) {
    try {
      res = await fetchFn(url, { signal, headers: { range: `bytes=${from}-` } });
    } catch (e) {
      if (e?.name === 'AbortError' || !(e instanceof TypeError)) throw e;
      // offline, or the server gone: the parts stay (for the next visit), and the rest is tried again as a download
      // that broke off is
      for (const p of parts) yield* chunks(p, signal);
      return yield* toParts(resumable(() => Promise.reject(e), url, signal, fetchFn, from), { store, url, size, tag: parts[0].headers.get(TAG_HEADER), index: parts.length });
    }
    const range = /^bytes (\d+)-\d+\/(\d+)$/.exec(res?.headers.get('content-range') ?? '');
    const tag = parts[0].headers.get(TAG_HEADER), now = res && tagOf(res);
    if (res?.status === 206 && (!range || (Number(range[1]) === from && Number(range[2]) === size)) && !(tag && now && tag !== now)) {
      for (const p of parts) yield* chunks(p, signal);
      yield* toParts(resumable(res, url, signal, fetchFn, from), { store, url, size, tag: now ?? tag, index: parts.length });
      return;
    }
    // the file changed, or the server ignores ranges: the parts go, and the file comes whole (in this answer, when it
    // is the whole file, else in a new one)
    const again = res?.status === 200 && !isHtml(res) && Number(res.headers.get('content-length') ?? size) === size;
    if (!again) await res?.body?.cancel().catch(() => {});
    await Promise.all(parts.map((_, i) => store.delete(partKey(url, i)).catch(() => {})));
    if (!again) res = null;
  }
  if (!res) {
    try {
      res = await fetchNet(url, signal, fetchFn);
    } catch (e) {
      if (e?.name === 'AbortError' || !(e instanceof TypeError)) throw e;
      const broke = e;
      res = () => Promise.reject(broke);  // a network error: resumable tries again
    }
  }
  yield* toParts(resumable(res, url, signal, fetchFn), { store, url, size, tag: typeof res === 'function' ? null : tagOf(res), index: 0 });
}

// Passes the chunks of the file from part `index` on, and writes each part to the cache once it is whole.
async function* toParts(chunks, { store, url, size, tag, index }) {
  let buf = [], fill = 0;
  for await (const c of chunks) {
    yield c;
    for (let off = 0; off < c.byteLength; ) {
      const want = Math.min(PART, size - index * PART);
      const n = Math.min(want - fill, c.byteLength - off);
      if (n <= 0) break;  // more bytes than the size: download() says so
      buf.push(c.subarray(off, off + n));
      fill += n;
      off += n;
      if (fill === want) {
        const headers = { 'content-length': String(want), [SIZE_HEADER]: String(size), ...(tag && { [TAG_HEADER]: tag }) };
        store.put(partKey(url, index), new Response(new Blob(buf), { headers })).catch(() => {});
        [buf, fill] = [[], 0];
        index++;
      }
    }
  }
}

// A response's body, resumed where it broke off (a dropped connection, a mobile network that changed): up to RETRIES
// times, after a short wait, the file is asked for again from the first byte not yet given, with a Range header; a
// server that honours it sends the rest (206), one that does not sends the whole file again (200), whose first bytes
// are skipped. What was given is never given twice, so the caller sees one unbroken stream. (A small file resumed
// is not kept in the Cache API: the copy being cached broke off with the first response; a big one's parts are
// written from this stream, so they are.)
const RETRIES = 3;
// first: the response, or a function that fetches it (a network error there counts as a try too).
// offset: the byte of the file the first response starts at (a Range answer).
async function* resumable(first, url, signal, fetchFn, offset = 0) {
  let given = 0, skip = 0, attempt = 0, broke, res = null;
  if (typeof first !== 'function') res = first;
  else {
    try {
      res = await first();
    } catch (e) {
      if (e?.name === 'AbortError' || !(e instanceof TypeError)) throw e;  // fetch's network errors are TypeErrors
      broke = e;
    }
  }
  for (;;) {
    if (res) {
      try {
        for await (let c of chunks(res, signal)) {
          if (skip) {
            const n = Math.min(skip, c.byteLength);
            skip -= n;
            c = c.subarray(n);
            if (!c.byteLength) continue;
          }
          given += c.byteLength;
          yield c;
        }
        return;
      } catch (e) {
        if (e?.name === 'AbortError' || signal?.aborted) throw e;
        broke = e;
      }
    }
    if (++attempt > RETRIES)
      throw new Error(given ? `${url}: the download broke off at byte ${offset + given} and could not be resumed (${RETRIES} tries; ${broke?.message ?? broke})`
                            : `${url}: could not be downloaded (${RETRIES + 1} tries; ${broke?.message ?? broke})`);
    await new Promise((r) => setTimeout(r, 200 * attempt));
    aborted(signal);
    try {
      res = await fetchFn(url, { signal, headers: { range: `bytes=${offset + given}-` } });
    } catch (e) {
      if (e?.name === 'AbortError') throw e;
      [res, broke] = [null, e];
      continue;
    }
    if (res.status === 206) {
      // the range asked for, unless Content-Range says otherwise (a cross-origin server may not expose that header)
      const range = res.headers.get('content-range');
      const from = range == null ? offset + given : Number(/^bytes (\d+)-/.exec(range)?.[1] ?? NaN);
      if (!(from <= offset + given)) throw new Error(`${url}: resuming at byte ${offset + given}, the server sent ${range}`);
      skip = offset + given - from;
    } else if (res.status === 200) {
      skip = offset + given;  // no range support: the whole file again
    } else {
      throw new Error(`${url}: resuming at byte ${offset + given}: HTTP ${res.status}`);
    }
  }
}

async function* chunks(res, signal) {
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

// Streams every file into a FileSet in wasm memory (one copy: network/disk → wasm heap). Progress events as
// transformers.js sends them: per file 'initiate', 'download', 'progress' { file, loaded, total, progress } and
// 'done'; across files 'progress_total' { loaded, total, progress, files: { name: { loaded, total } } }.
export async function download(engine, files, { signal, progress_callback, name } = {}) {
  const fileSet = new engine.FileSet();
  const emit = (e) => progress_callback?.({ name, ...e });
  try {
    const known = files.every((f) => f.size >= 0);
    const total = known ? files.reduce((s, f) => s + f.size, 0) : null;
    const perFile = Object.fromEntries(files.map((f) => [f.name, { loaded: 0, total: f.size >= 0 ? f.size : null }]));
    let loaded = 0;
    for (const f of files) emit({ status: 'initiate', file: f.name });
    for (const f of files) {
      emit({ status: 'download', file: f.name });
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
        perFile[f.name].loaded = got;
        emit({ status: 'progress', file: f.name, loaded: got, total: f.size >= 0 ? f.size : null, progress: f.size > 0 ? (100 * got) / f.size : null });
        emit({ status: 'progress_total', loaded, total, progress: total ? (100 * loaded) / total : null, files: perFile });
      }
      if (f.size >= 0 && got !== f.size) throw new Error(`${f.name}: got ${got} bytes, expected ${f.size}`);
      if (f.size < 0) {
        ptr = fileSet.allocate(f.name, got);
        if (!ptr && got > 0) throw new Error(`out of memory: could not allocate ${got} bytes for ${f.name}`);
        let off = 0;
        for (const c of chunks) { heapU8(engine).set(c, ptr + off); off += c.byteLength; }
      }
      emit({ status: 'done', file: f.name });
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
