// What the JavaScript engine running the package can do, found by trying it.

// i32x4.relaxed_dot_i8x16_i7x16_add_s on splats of −3, 5 and 7, lane 0: the final semantics give 4·(−3·5) + 7 = −53.
// Node 20 (behind --experimental-wasm-relaxed-simd) validates the opcode but computes the proposal's early version
// (−120 here), so validating is not enough: the module runs.
const PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 127, 3, 2, 1, 0, 7, 5, 1, 1, 102, 0, 0, 10, 64, 1, 62, 0, 253, 12,
  253, 253, 253, 253, 253, 253, 253, 253, 253, 253, 253, 253, 253, 253, 253, 253, 253, 12, 5, 5, 5, 5, 5, 5, 5, 5, 5,
  5, 5, 5, 5, 5, 5, 5, 253, 12, 7, 0, 0, 0, 7, 0, 0, 0, 7, 0, 0, 0, 7, 0, 0, 0, 253, 147, 2, 253, 27, 0, 11,
]);

let relaxed;
// Whether this engine runs relaxed SIMD with its final semantics (Chromium since 114; not Node 20): then the package
// loads the relaxed-SIMD .wasm (scripts/relax-wasm.mjs).
export function relaxedSimdSupported() {
  if (relaxed === undefined) {
    try {
      relaxed = new WebAssembly.Instance(new WebAssembly.Module(PROBE)).exports.f() === -53;
    } catch {
      relaxed = false;
    }
  }
  return relaxed;
}

// The { relaxedSimd } load option (true: required, false: the plain SIMD128 build, default: where supported) → whether
// to load the relaxed-SIMD build.
export function relaxedSimdPlan(want) {
  if (want != null && typeof want !== 'boolean') throw new Error(`wasmformer: relaxedSimd must be true, false or left out, got ${want}`);
  if (want === false) return false;
  const has = relaxedSimdSupported();
  if (want === true && !has) throw new Error('wasmformer: relaxedSimd: true was asked for, but this JavaScript engine does not run relaxed SIMD (final semantics)');
  return has;
}
