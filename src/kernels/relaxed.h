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
// i16x8.relaxed_dot_i8x16_i7x16_s: per int16 lane i, a[2i]·b[2i] + a[2i+1]·b[2i+1], a int8, b in [0, 127] (x86: one
// pmaddubsw, with or without AVX-VNNI)
v128_t wf_relaxed_dot_i8x16_i7x16_s(v128_t a, v128_t b);
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

// Whether relaxed SIMD's i32x4.relaxed_dot_i8x16_i7x16_add_s is one instruction here — x86's vpdpbusd (AVX-VNNI) or
// Arm's sdot — rather than the five V8 makes it on other x86 CPUs (pcmpeqd and psrlw for a vector of ones, pmaddubsw,
// pmaddwd by the ones, paddd: V8 11.3's code, printed by node --print-wasm-code). That sequence
// saturates each pair of products at 2^15 − 1, which neither instruction does, so the instruction's result outside
// its defined range (a second operand above 127) tells them apart: 127 · 255 four times gives 65534 (two saturated
// pairs), 129540 (vpdpbusd: unsigned × signed, exact) or −508 (sdot: 255 as −1). 0 where the instance runs no
// relaxed SIMD.
inline int relaxed_dot_probe() {
#if defined(__wasm_simd128__)
    if (relaxed_simd())
        return wasm_i32x4_extract_lane(wf_relaxed_dot_i8x16_i7x16_add_s(wasm_i8x16_splat(127), wasm_i8x16_splat(-1), wasm_i32x4_splat(0)), 0);
#endif
    return 0;
}
inline bool relaxed_dot_fused() {
    const int probe = relaxed_dot_probe();
    return probe != 0 && probe != 65534;
}

}  // namespace wf
