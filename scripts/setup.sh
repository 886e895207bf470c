#!/usr/bin/env bash
# Installs the build and test dependencies on Debian bookworm / Ubuntu (apt-get) and the npm dev dependencies.
# Node 20 must already be installed (Debian bookworm's own nodejs is 18; see README).
set -euo pipefail
cd "$(dirname "$0")/.."
sudo=""
[ "$(id -u)" = 0 ] || sudo=sudo
need=(emscripten libxsimd-dev catch2 nlohmann-json3-dev cmake make g++ clang libclang-rt-dev binaryen wabt chromium)
missing=()
for p in "${need[@]}"; do dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
if [ "$node_major" -lt 20 ]; then
  echo "setup: Node.js 20 or newer is needed (found: $(node --version 2>/dev/null || echo none))" >&2
  exit 1
fi
if [ -f package-lock.json ]; then npm ci --no-audit --no-fund; fi
