// Relaxed SIMD in wasm, with a toolchain that cannot emit it (clang 14 knows only the proposal's early opcodes, and
// Binaryen 108, which Emscripten runs on every linked module, misreads the final ones). The kernels call these
// functions instead of the instructions; the link imports them from bindings/relaxed-simd.js, where they are never
// reached: wf_relaxed_simd() answers 0 there. scripts/relax-wasm.mjs then writes a second .wasm from the linked
// one in which every call to them is the instruction itself (same operands, same result on the stack) and
// wf_relaxed_simd() is the constant 1; the JS API loads that one where the engine runs the final semantics
// (web/src/engine.js checks them by running them). Native builds have none of this: relaxed_simd() is false.
#pragma once

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>  // clang's header for the wasm SIMD128 instructions (not Emscripten's)

extern "C" {
int wf_relaxed_simd(void);
// i32x4.relaxed_dot_i8x16_i7x16_add_s: per int32 lane i, c[i] + Σ_{j<4} a[4i+j]·b[4i+j], a int8, b in [0, 127]
v128_t wf_relaxed_dot_i8x16_i7x16_add_s(v128_t a, v128_t b, v128_t c);
// f32x4.relaxed_madd: a·b + c per lane, fused (one rounding) where the CPU has FMA, else a multiply then an add
v128_t wf_relaxed_madd_f32x4(v128_t a, v128_t b, v128_t c);
}
#endif

namespace wf {

// Whether this instance runs relaxed SIMD's instructions (the rewritten .wasm): the kernels that have a relaxed
// variant choose it per call.
inline bool relaxed_simd() {
#if defined(__wasm_simd128__)
    return wf_relaxed_simd() != 0;
#else
    return false;
#endif
}

}  // namespace wf
