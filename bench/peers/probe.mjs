// The machine's ceilings as WebAssembly sees them, measured by a tiny wasm module written here byte by byte (no
// toolchain): f32x4 mul+add throughput (12 independent chains of a = a·m + c, 8 flops per pair of instructions),
// i32x4.dot_i16x8_s throughput (12 chains of a = dot(a, m) + c, 8 multiply-adds of 16-bit integers a dot: the
// instruction 8-bit products run on in wasm SIMD128 without relaxed SIMD, counted as 16 operations to compare with
// f32 work) and read bandwidth (v128 loads summed over a buffer far larger than the caches). Best of several runs, as a
// ceiling is. Runs on n worker_threads at once for the n-thread ceiling.
import { Worker } from 'node:worker_threads';

const CHAINS = 12;
const uleb = (n) => { const b = []; do { let x = n & 0x7f; n >>>= 7; if (n) x |= 0x80; b.push(x); } while (n); return b; };
const sleb = (n) => { const b = []; for (;;) { const x = n & 0x7f; n >>= 7; if ((n === 0 && !(x & 0x40)) || (n === -1 && x & 0x40)) { b.push(x); return b; } b.push(x | 0x80); } };
const f32 = (x) => [...new Uint8Array(new Float32Array([x]).buffer)];
const vec = (items) => [...uleb(items.length), ...items.flat()];
const section = (id, body) => [id, ...uleb(body.length), ...body];
const str = (s) => vec([...s].map((c) => c.charCodeAt(0)));
const SIMD = (op, ...imm) => [0xfd, ...uleb(op), ...imm];
const [GET, SET, TEE, V128, I32, F32] = [0x20, 0x21, 0x22, 0x7b, 0x7f, 0x7d];
const splat = (x) => [0x43, ...f32(x), ...SIMD(0x13)];
const ADD = SIMD(0xe4), MUL = SIMD(0xe6), LANE0 = SIMD(0x1f, 0);
const ISPLAT = (x) => [0x41, ...sleb(x), ...SIMD(0x11)], IADD = SIMD(0xae, 1), DOT = SIMD(0xba, 1), ILANE0 = SIMD(0x1b, 0);
const body = (locals, code) => vec([...vec(locals), ...code, 0x0b]);

// CHAINS independent chains a = step(a, m) + c, iters times (locals 1..12 the chains, 13 = m, 14 = c), then their sum's
// lane 0: the throughput of `step` and `add` where each chain waits only on itself.
function chains({ init, m, c, step, add, lane }) {
  const a = (k) => 1 + k;
  const code = [];
  for (let k = 0; k < CHAINS; k++) code.push(...init(k), SET, a(k));
  code.push(...m, SET, 13, ...c, SET, 14);
  code.push(0x03, 0x40);  // loop
  for (let k = 0; k < CHAINS; k++) code.push(GET, a(k), GET, 13, ...step, GET, 14, ...add, SET, a(k));
  code.push(GET, 0, 0x41, ...sleb(1), 0x6b, TEE, 0, 0x0d, 0, 0x0b);  // iters -= 1; br_if iters; end
  code.push(GET, a(0));
  for (let k = 1; k < CHAINS; k++) code.push(GET, a(k), ...add);
  code.push(...lane);
  return body([[...uleb(CHAINS + 2), V128]], code);
}
// muladd(iters) → f32: a = a·m + c
const muladd = () => chains({ init: (k) => splat(1 + k / 10), m: splat(0.9999999), c: splat(1e-7), step: MUL, add: ADD, lane: LANE0 });
// dot(iters) → i32: a = dot(a, m) + c (integer lanes wrap: no trap, no saturation)
const dot = () => chains({ init: (k) => ISPLAT(k + 1), m: ISPLAT(0x00030001), c: ISPLAT(7), step: DOT, add: IADD, lane: ILANE0 });

// read(bytes) → f32: local 1 = the address, 2..5 = four sums of v128 loads at +0, +16, +32, +48
function read() {
  const code = [0x03, 0x40];
  for (let k = 0; k < 4; k++) code.push(GET, 2 + k, GET, 1, ...SIMD(0x00, 4, ...uleb(16 * k)), ...ADD, SET, 2 + k);
  code.push(GET, 1, 0x41, ...sleb(64), 0x6a, TEE, 1, GET, 0, 0x49, 0x0d, 0, 0x0b);  // p += 64; br_if p < bytes
  code.push(GET, 2, GET, 3, ...ADD, GET, 4, ...ADD, GET, 5, ...ADD, ...LANE0);
  return body([[...uleb(1), I32], [...uleb(4), V128]], code);
}

export function probeModule(pages) {
  return new Uint8Array([0x00, 0x61, 0x73, 0x6d, 1, 0, 0, 0,
    ...section(1, vec([[0x60, ...vec([I32]), ...vec([F32])], [0x60, ...vec([I32]), ...vec([I32])]])),
    ...section(3, vec([[0], [0], [1]])),
    ...section(5, vec([[0x00, ...uleb(pages)]])),
    ...section(7, vec([[...str('muladd'), 0, 0], [...str('read'), 0, 1], [...str('dot'), 0, 2], [...str('mem'), 2, 0]])),
    ...section(10, vec([muladd(), read(), dot()]))]);
}

const BYTES = 256 << 20;  // 256 MiB

// With n threads, each waits before every timed call until all n have reached it, so that they run together.
function together(sync, n, round) {
  if (!sync) return;
  const count = new Int32Array(sync);
  Atomics.add(count, 0, 1);
  Atomics.notify(count, 0);
  for (let v; (v = Atomics.load(count, 0)) < n * round;) Atomics.wait(count, 0, v);
}

// One thread's measurement (also the body of each worker): { gflops, dot_gops, read_gbs }, best of `runs`.
export function measure({ runs = 7, iters = 50_000_000, sync, n = 1 } = {}) {
  const { exports: e } = new WebAssembly.Instance(new WebAssembly.Module(probeModule(BYTES >> 16)));
  new Uint8Array(e.mem.buffer).fill(1);  // touch every page (untouched pages all read the same zero page)
  let gflops = 0, dot_gops = 0, read_gbs = 0;
  e.muladd(1000);
  e.dot(1000);
  e.read(1 << 20);
  for (let r = 0; r < runs; r++) {
    together(sync, n, 3 * r + 1);
    let t = performance.now();
    e.muladd(iters);
    gflops = Math.max(gflops, (iters * CHAINS * 8) / ((performance.now() - t) / 1e3) / 1e9);
    together(sync, n, 3 * r + 2);
    t = performance.now();
    e.dot(iters);
    dot_gops = Math.max(dot_gops, (iters * CHAINS * 16) / ((performance.now() - t) / 1e3) / 1e9);
    together(sync, n, 3 * r + 3);
    t = performance.now();
    e.read(BYTES);
    read_gbs = Math.max(read_gbs, BYTES / ((performance.now() - t) / 1e3) / 1e9);
  }
  return { gflops, dot_gops, read_gbs };
}

// n threads at once (worker_threads): the sums of their ceilings.
export async function ceilings(n, opts = {}) {
  if (n === 1) return { threads: 1, ...measure(opts) };
  opts = { ...opts, n, sync: new SharedArrayBuffer(4) };
  const src = `const { parentPort, workerData } = require('node:worker_threads');
    import(${JSON.stringify(import.meta.url)}).then((m) => parentPort.postMessage(m.measure(workerData)));`;
  const results = await Promise.all(Array.from({ length: n }, () => new Promise((ok, fail) => {
    const w = new Worker(src, { eval: true, workerData: opts });
    w.once('message', (r) => { ok(r); w.terminate(); });
    w.once('error', fail);
  })));
  const sum = (k) => results.reduce((s, r) => s + r[k], 0);
  return { threads: n, gflops: sum('gflops'), dot_gops: sum('dot_gops'), read_gbs: sum('read_gbs') };
}
