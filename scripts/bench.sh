#!/usr/bin/env bash
# `npm run bench`: wasmformer beside onnxruntime-web and wllama, in Node and headless Chromium, in one run
# (bench/run.mjs; bench/README.md). Arguments go to bench/run.mjs: --quick, --env node|chromium, --rows id,…
# The first run makes the models (build/bench-models, a few minutes) with Debian's python3 and its torch and onnx.
# WF_BENCH_PAUSE_PIDS=FILE: the processes listed there (one pid per line) are paused (SIGSTOP) while it runs and
# resumed (SIGCONT) when it ends, however it ends.
#
# `npm run bench:kernels` (scripts/bench.sh kernels): the engine's own benchmarks, built natively and for wasm: kernel
# GFLOP/s beside the SIMD ceiling, the models on one thread and on every core, the tokenizers.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${1:-}" = kernels ]; then
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
  exit
fi

if [ ! -f dist/wasmformer.wasm ] || [ ! -f dist/wasmformer-mt.wasm ]; then
  echo "bench: dist/ has no engine: build it first (npm run build:wasm)" >&2
  exit 1
fi
models=build/bench-models
for f in bert-base/model.safetensors gpt2-base/model.safetensors onnx/{bert,gpt2}-{fp32,int8}.onnx gguf/gpt2-{f32,q8_0,q4_0}.gguf; do
  [ -f "$models/$f" ] && continue
  if ! /usr/bin/python3 -c 'import torch, onnx, numpy, regex' 2>/dev/null; then
    echo "bench: $models/$f is missing; the models are made with Debian's python3, torch, onnx and regex:" >&2
    echo "  apt-get install -y python3-torch python3-onnx python3-numpy python3-regex python3-sentencepiece libopenblas0-pthread" >&2
    exit 1
  fi
  echo "bench: making the models in $models (first run: a few minutes)"
  /usr/bin/python3 bench/peers/make_models.py "$models"
  break
done

paused=()
resume() { if [ ${#paused[@]} -gt 0 ]; then kill -CONT "${paused[@]}" 2>/dev/null || true; fi; }
trap resume EXIT
trap 'exit 130' INT TERM
if [ -n "${WF_BENCH_PAUSE_PIDS:-}" ] && [ -f "$WF_BENCH_PAUSE_PIDS" ]; then
  for p in $(cat "$WF_BENCH_PAUSE_PIDS"); do kill -STOP "$p" 2>/dev/null && paused+=("$p"); done
  echo "bench: paused ${paused[*]:-no process} from $WF_BENCH_PAUSE_PIDS until the end"
fi
node bench/run.mjs "$@"
