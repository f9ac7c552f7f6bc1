#!/usr/bin/env bash
# The test command (README, .ci/run): install deps if missing, build, run the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/build.sh
cd build
ctest --output-on-failure -j"$(nproc)"
