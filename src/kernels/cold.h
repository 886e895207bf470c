// WF_COLD: a function of a hot file (CMakeLists.txt compiles src/kernels at -O3) that runs at load time, or once per row
// looked up, never per weight of a forward pass: compiled for size (clang's minsize), so that the engine's .wasm stays
// within its budget (tests/js/pack.test.mjs). Internal to src/kernels.
#pragma once

#if defined(__clang__)
#define WF_COLD __attribute__((minsize))
#else
#define WF_COLD
#endif
