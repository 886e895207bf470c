#!/usr/bin/env bash
# Benchmarks (`npm run bench`): the kernels natively and in wasm under Node, one thread; the models natively on one
# thread and on every core, and in wasm under Node on one thread.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh native
scripts/build.sh wasm
build/native/wf-bench-kernels
echo
node build/wasm/wf-bench-kernels.js
echo
build/native/wf-bench-models
echo
WF_BENCH_THREADS=$(nproc) build/native/wf-bench-models  # the thread pool on every core
echo
node build/wasm/wf-bench-models.js
echo
node bench/bench-tokenizers.mjs
