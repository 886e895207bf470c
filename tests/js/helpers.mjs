import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const fixture = (name) => path.join(root, 'tests/data/fixtures', name);
export const cli = path.join(root, 'build/native/wasmformer');

// The native CLI's fill-mask output: [{ score, token_str, sequence }] per mask.
export function nativeFillMask(model, text, topK) {
  const out = execFileSync(cli, ['fill-mask', '--model', model, '--top-k', String(topK), text], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  const lists = [[]];
  for (const line of out.split('\n')) {
    if (/^mask \d+:$/.test(line)) { if (lists.at(-1).length) lists.push([]); continue; }
    const m = line.match(/^\s*([0-9.]+)\s+(\S+)\s+(.*)$/);
    if (m) lists.at(-1).push({ score: Number(m[1]), token_str: m[2], sequence: m[3] });
  }
  return lists;
}

export function nativeGenerate(model, prompt, args) {
  const out = execFileSync(cli, ['generate', '--model', model, ...args, prompt], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  return out.replace(/\n$/, '').slice(prompt.length);
}

// Files of a folder as a map of name → Uint8Array.
export function filesOf(dir) {
  const m = {};
  for (const n of readdirSync(dir)) if (statSync(path.join(dir, n)).isFile()) m[n] = new Uint8Array(readFileSync(path.join(dir, n)));
  return m;
}

// A static server on 127.0.0.1 for a folder; `slow` streams large files in small, delayed chunks; `hide` names
// files answered with 404 (e.g. model-files.json, to make the loader probe); `spa`: a missing file is answered with
// an HTML page and 200, as Vite's servers and many static hosts do.
export async function serve(dir, { slow = false, hide = [], spa = false } = {}) {
  const requests = [];
  const server = http.createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    const name = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    const file = path.join(dir, name);
    let body;
    try {
      if (hide.includes(path.basename(name))) throw new Error('hidden');
      body = readFileSync(file);
    } catch {
      if (!spa) { res.writeHead(404); return res.end(); }
      const page = '<!doctype html><title>app</title>';
      res.writeHead(200, { 'content-type': 'text/html', 'content-length': page.length });
      return res.end(req.method === 'HEAD' ? undefined : page);
    }
    res.writeHead(200, { 'content-length': body.length, 'content-type': 'application/octet-stream' });
    if (req.method === 'HEAD') return res.end();
    if (!slow || body.length < 100000) return res.end(body);
    let off = 0;
    const tick = () => {
      if (res.destroyed) return;
      if (off >= body.length) return res.end();
      res.write(body.subarray(off, off + 65536));
      off += 65536;
      setTimeout(tick, 5);
    };
    tick();
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${server.address().port}/`;
  return { url, requests, close: () => new Promise((r) => { server.closeAllConnections?.(); server.close(r); }) };
}

// log_softmax of a row of logits (any array-like), as an Array of doubles.
export function logSoftmax(row) {
  const mx = row.reduce((a, b) => Math.max(a, b), -Infinity);
  const lse = mx + Math.log(row.reduce((a, v) => a + Math.exp(v - mx), 0));
  return Array.from(row, (v) => v - lse);
}

// A safetensors file → { name: { dtype, shape, data } }: F32/F16/BF16 as a Float32Array (half types widened exactly),
// I32/I64 as an Int32Array (I64 must fit), others as raw bytes (Uint8Array). __metadata__ is left out.
export function readSafetensors(file) {
  const buf = readFileSync(file);
  const n = Number(buf.readBigUInt64LE(0));
  const header = JSON.parse(buf.subarray(8, 8 + n).toString('utf8'));
  const base = 8 + n;
  const out = {};
  for (const [name, t] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const [b, e] = t.data_offsets;
    const bytes = buf.subarray(base + b, base + e);
    const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    let data;
    switch (t.dtype) {
      case 'F32': data = new Float32Array(bytes.byteLength / 4); for (let i = 0; i < data.length; i++) data[i] = dv.getFloat32(4 * i, true); break;
      case 'F16': data = new Float32Array(bytes.byteLength / 2); for (let i = 0; i < data.length; i++) data[i] = halfToFloat(dv.getUint16(2 * i, true)); break;
      case 'BF16': {
        data = new Float32Array(bytes.byteLength / 2);
        const u = new Uint32Array(data.buffer);
        for (let i = 0; i < data.length; i++) u[i] = dv.getUint16(2 * i, true) << 16;
        break;
      }
      case 'I32': data = new Int32Array(bytes.byteLength / 4); for (let i = 0; i < data.length; i++) data[i] = dv.getInt32(4 * i, true); break;
      case 'I64': data = new Int32Array(bytes.byteLength / 8); for (let i = 0; i < data.length; i++) data[i] = Number(dv.getBigInt64(8 * i, true)); break;
      default: data = new Uint8Array(bytes);
    }
    out[name] = { dtype: t.dtype, shape: t.shape, data };
  }
  return out;
}

function halfToFloat(h) {
  const s = h & 0x8000 ? -1 : 1, e = (h >> 10) & 0x1f, m = h & 0x3ff;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}
