// WF_COLD: a function of a hot file (CMakeLists.txt compiles src/kernels at -O3) that runs at load time, or once per row
// looked up, never per weight of a forward pass: compiled for size (clang's minsize), so that the engine's .wasm stays
// within its budget (tests/js/pack.test.mjs). Internal to src/kernels.
#pragma once

#if defined(__clang__)
#define WF_COLD __attribute__((minsize))
#else
#define WF_COLD
#endif

// WF_NO_UNROLL: a loop kept one step a turn where its code's size matters more than the unrolled form's speed (wasm's
// budget); natively gcc is told the same.
#if defined(__clang__)
#define WF_NO_UNROLL _Pragma("clang loop unroll(disable)")
#elif defined(__GNUC__)
#define WF_NO_UNROLL _Pragma("GCC unroll 1")
#else
#define WF_NO_UNROLL
#endif

// WF_SCALAR_LOOP: a loop of a few steps (a row's last values after its SIMD vectors) kept scalar and one step a turn,
// for the same reason.
#if defined(__clang__)
#define WF_SCALAR_LOOP _Pragma("clang loop unroll(disable) vectorize(disable)")
#else
#define WF_SCALAR_LOOP
#endif
