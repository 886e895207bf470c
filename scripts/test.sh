#!/usr/bin/env bash
# The whole test suite (`npm test`): the Catch2 suite natively and built with Emscripten under Node, then the
# JavaScript tests. Each part prints its own summary; the last line sums them up.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/build.sh native
scripts/build.sh wasm
echo "== native Catch2 suite"
(cd build/native && ctest --output-on-failure)
echo "== wasm Catch2 suite (Node $(node --version))"
(cd build/wasm && ctest --output-on-failure)
echo "== JavaScript tests (Node) and the demo in headless Chromium"
node --test tests/js/ tests/browser/
