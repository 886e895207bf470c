#!/usr/bin/env bash
# The whole test suite (`npm test`): the Catch2 suite natively, under AddressSanitizer + UndefinedBehaviorSanitizer
# (clang) and built with Emscripten under Node; a mutation check (scripts/mutants.mjs: each plausible bug it writes
# into src/ must fail the native suite); a libFuzzer slice of every parser (WF_FUZZ_SECONDS per target,
# default 60; 0 skips it); then the JavaScript tests in Node and headless Chromium. Each part prints its own summary.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh native
scripts/build.sh wasm
echo "== native Catch2 suite"
(cd build/native && ctest --output-on-failure)
echo "== mutation check: plausible bugs written into src/, one at a time, each must fail the native suite"
node scripts/mutants.mjs
echo "== wasm Catch2 suite (Node $(node --version))"
(cd build/wasm && ctest --output-on-failure)
echo "== native Catch2 suite under ASan + UBSan (clang)"
scripts/build.sh sanitize
ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 build/sanitize/wf-tests
fuzz_seconds=${WF_FUZZ_SECONDS:-60}
if [ "$fuzz_seconds" -gt 0 ]; then
  echo "== libFuzzer, every parser, ${fuzz_seconds}s each (ASan + UBSan)"
  scripts/fuzz.sh "$fuzz_seconds"
fi
echo "== JavaScript tests (Node) and the demo in headless Chromium"
node --test tests/js/ tests/browser/
