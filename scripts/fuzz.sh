#!/usr/bin/env bash
# `npm run fuzz [-- SECONDS]`: builds the libFuzzer targets with clang (address + undefined sanitizers) and runs
# each for SECONDS (default 60) on a copy of its seed corpus (tests/data/fuzz-corpus/TARGET). New inputs land in
# build/fuzz/corpus/TARGET; a crash, leak, sanitizer report, time-out or out-of-memory stops that target, is written
# to build/fuzz/crash-TARGET-* and makes this script exit 1 (after every target has run), naming the file.
# `npm test` runs it for 60 s per target (WF_FUZZ_SECONDS; 0 skips). Needs clang and libclang-rt-dev (apt-get).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
cmake -S fuzz -B build/fuzz -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build/fuzz -j "$(nproc)"
failed=()
for t in safetensors gguf config tokenizer_json tokenizers sentencepiece; do
  mkdir -p build/fuzz/corpus/$t
  cp -n tests/data/fuzz-corpus/$t/* build/fuzz/corpus/$t/ 2>/dev/null || true
  rm -f build/fuzz/crash-$t-*
  echo "== fuzz-$t for ${seconds}s"
  log=build/fuzz/fuzz-$t.log
  rc=0
  build/fuzz/fuzz-$t -max_total_time="$seconds" -rss_limit_mb=2048 -malloc_limit_mb=2048 -max_len=65536 -timeout=10 \
    -artifact_prefix=build/fuzz/crash-$t- build/fuzz/corpus/$t >"$log" 2>&1 || rc=$?
  grep -E "^#[0-9]+.*DONE" "$log" || true
  if [ "$rc" -ne 0 ]; then
    echo "fuzz-$t FAILED (exit $rc); its report:" >&2
    grep -E -A 30 "ERROR|SUMMARY|runtime error|Test unit written" "$log" | head -60 >&2 || tail -40 "$log" >&2
    ls build/fuzz/crash-$t-* 2>/dev/null >&2 || true
    failed+=("$t")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz: ${#failed[@]} of 6 targets found a failure: ${failed[*]} (inputs in build/fuzz/crash-*; replay one with build/fuzz/fuzz-TARGET FILE)" >&2
  exit 1
fi
echo "fuzz: 6 targets, ${seconds}s each, no crash"
