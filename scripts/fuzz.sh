#!/usr/bin/env bash
# `npm run fuzz [-- SECONDS]`: builds the libFuzzer targets with clang (address + undefined sanitizers) and runs
# each for SECONDS (default 60) on a copy of its seed corpus (tests/data/fuzz-corpus/TARGET). New inputs land in
# build/fuzz/corpus/TARGET; crashes in build/fuzz/crash-*. Needs clang and libclang-rt-dev (apt-get).
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
cmake -S fuzz -B build/fuzz -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build/fuzz -j "$(nproc)"
for t in safetensors gguf config tokenizer_json tokenizers; do
  mkdir -p build/fuzz/corpus/$t
  cp -n tests/data/fuzz-corpus/$t/* build/fuzz/corpus/$t/ 2>/dev/null || true
  echo "== fuzz-$t for ${seconds}s"
  build/fuzz/fuzz-$t -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=65536 -timeout=10 \
    -artifact_prefix=build/fuzz/crash-$t- build/fuzz/corpus/$t 2>&1 | grep -E "^#[0-9]+.*DONE|ERROR|SUMMARY|crash|Test unit written" || true
done
