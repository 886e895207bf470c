#!/usr/bin/env bash
# Builds the C++ core and its programs: `scripts/build.sh native` (g++, build/native), `scripts/build.sh sanitize`
# (clang with ASan + UBSan, build/sanitize: the Catch2 suite only) or `scripts/build.sh wasm` (Emscripten,
# build/wasm). Extra arguments go to CMake. Incremental: rerunning rebuilds only what changed.
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:-native}
shift || true
jobs=$(nproc 2>/dev/null || echo 2)
case "$target" in
  native)
    cmake -S . -B build/native -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
    cmake --build build/native -j "$jobs"
    ;;
  sanitize)
    # the Catch2 suite with clang's AddressSanitizer and UndefinedBehaviorSanitizer (any report fails the test)
    cmake -S . -B build/sanitize -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CXX_COMPILER=clang++ \
      -DCMAKE_CXX_FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -O1" \
      -DWF_BUILD_EXAMPLES=OFF -DWF_BUILD_BENCH=OFF "$@" >/dev/null
    cmake --build build/sanitize -j "$jobs" --target wf-tests
    ;;
  wasm)
    # Debian's em++ runs node-acorn, which it finds through NODE_PATH.
    export NODE_PATH=${NODE_PATH:-/usr/share/nodejs}
    emcmake cmake -S . -B build/wasm -DCMAKE_BUILD_TYPE=Release -DWF_BUILD_EXAMPLES=OFF "$@" >/dev/null
    cmake --build build/wasm -j "$jobs"
    # the npm package's engine files
    # (the Node glue loads the threaded .wasm, which is the same binary as wasmformer-node.wasm; dist/*.js are
    # CommonJS, which the Node pthread workers need — dist/package.json says so)
    mkdir -p dist
    cp build/wasm/wasmformer.mjs build/wasm/wasmformer.wasm build/wasm/wasmformer-relaxed.wasm build/wasm/wasmformer-single.mjs \
       build/wasm/wasmformer-mt.mjs build/wasm/wasmformer-mt.wasm build/wasm/wasmformer-mt-relaxed.wasm build/wasm/wasmformer-mt.worker.js \
       build/wasm/wasmformer-node.cjs build/wasm/wasmformer-node.worker.js dist/
    cmp -s build/wasm/wasmformer-node.wasm build/wasm/wasmformer-mt.wasm || { echo "wasmformer-node.wasm differs from wasmformer-mt.wasm" >&2; exit 1; }
    echo '{ "type": "commonjs" }' > dist/package.json
    # Bundlers must leave the pthread worker's import(url) alone (webpack would otherwise pull a context module of
    # dist/ into the bundle and warn); without a URL the worker imports its sibling wasmformer-mt.mjs statically.
    sed -i 's/import(e\.data\.urlOrBlob)/import(\/* webpackIgnore: true *\/ \/* @vite-ignore *\/ e.data.urlOrBlob)/' dist/wasmformer-mt.worker.js
    grep -q 'webpackIgnore' dist/wasmformer-mt.worker.js || { echo "wasmformer-mt.worker.js: the import(urlOrBlob) patch did not apply" >&2; exit 1; }
    ;;
  *) echo "usage: scripts/build.sh native|sanitize|wasm [cmake args]" >&2; exit 2 ;;
esac
