// Toolchain fix, linked into the threaded (pthreads) WebAssembly build only.
//
// Debian's Emscripten 3.1.6 ships a libunwind that declares `__wasm_lpad_context` — the record through which
// compiler-generated landing pads and the C++ personality routine exchange the LSDA and the catch selector —
// `thread_local`, as newer LLVM expects, while Debian's clang 14 emits plain (non-TLS) accesses to it. In a
// shared-memory module the two then name different memory: every typed `catch (const T&)` fails to match (only
// `catch (...)` works) and the landing pad writes a few bytes near address 0. This file provides the wasm
// unwinder's entry points with a plain global, so both sides agree and libunwind's member is not linked.
//
// What differs from a thread_local context: two threads unwinding at the same moment would share the record.
// The engine throws on the calling thread only (pool tasks do not throw in practice, see src/threads.cpp).
#include <stdint.h>
#include <unwind.h>

struct wf_lpad_context {
    uintptr_t lpad_index;  // index of the landing pad, set by generated code
    uintptr_t lsda;        // language-specific data area of the function, set by generated code
    uintptr_t selector;    // set by the personality routine: which catch clause matched
};

struct wf_lpad_context __wasm_lpad_context;

_Unwind_Reason_Code __gxx_personality_wasm0(int version, _Unwind_Action actions, uint64_t exception_class,
                                            struct _Unwind_Exception* exception, struct _Unwind_Context* context);

// Called by every landing pad: wasm unwinds in one phase, so the personality routine runs as a cleanup-phase call
// and reports the matching catch clause through the selector.
_Unwind_Reason_Code _Unwind_CallPersonality(void* exception_ptr) {
    struct _Unwind_Exception* e = (struct _Unwind_Exception*)exception_ptr;
    __wasm_lpad_context.selector = 0;
    return __gxx_personality_wasm0(1, _UA_CLEANUP_PHASE, e->exception_class, e, (struct _Unwind_Context*)&__wasm_lpad_context);
}

// Throws with the wasm `throw` instruction, tag 0 (C++).
_Unwind_Reason_Code _Unwind_RaiseException(struct _Unwind_Exception* e) {
    __builtin_wasm_throw(0, e);
}

void _Unwind_DeleteException(struct _Unwind_Exception* e) {
    if (e->exception_cleanup) e->exception_cleanup(_URC_FOREIGN_EXCEPTION_CAUGHT, e);
}

// Register 1 of the context is the selector; nothing else is settable in wasm.
void _Unwind_SetGR(struct _Unwind_Context* context, int index, _Unwind_Word value) {
    if (index == 1) ((struct wf_lpad_context*)context)->selector = value;
}

// The personality routine uses the "IP" as the landing pad index + 1 (call-site tables are 1-based), +1 more
// because it looks up IP − 1.
_Unwind_Word _Unwind_GetIP(struct _Unwind_Context* context) { return ((struct wf_lpad_context*)context)->lpad_index + 2; }
void _Unwind_SetIP(struct _Unwind_Context* context, _Unwind_Word value) { (void)context, (void)value; }
void* _Unwind_GetLanguageSpecificData(struct _Unwind_Context* context) { return (void*)((struct wf_lpad_context*)context)->lsda; }
_Unwind_Ptr _Unwind_GetRegionStart(struct _Unwind_Context* context) { (void)context; return 0; }
