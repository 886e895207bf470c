// The placeholders that src/kernels/relaxed.h calls instead of relaxed SIMD's instructions (Emscripten JS library,
// linked into every wasm program). In the .wasm that scripts/relax-wasm.mjs rewrites, no call reaches them; in the
// plain .wasm, wf_relaxed_simd answers 0 and the kernels never call the others.
mergeInto(LibraryManager.library, {
  wf_relaxed_simd: function () {
    return 0;
  },
  wf_relaxed_dot_i8x16_i7x16_add_s: function () {
    throw new Error('wasmformer: a relaxed SIMD placeholder was called in the plain build');
  },
  wf_relaxed_dot_i8x16_i7x16_s: function () {
    throw new Error('wasmformer: a relaxed SIMD placeholder was called in the plain build');
  },
  wf_relaxed_madd_f32x4: function () {
    throw new Error('wasmformer: a relaxed SIMD placeholder was called in the plain build');
  },
});
