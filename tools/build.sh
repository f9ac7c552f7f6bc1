#!/usr/bin/env bash
# Configures and builds saddle in Release into ./build (all targets: program, tests, benchmarks).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup-deps.sh
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)  # when installed
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" >/dev/null
cmake --build build -j"$(nproc)" "$@"
