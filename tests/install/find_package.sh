#!/usr/bin/env bash
# The installed package works for a C++ user: install the libraries, headers and CMake package of
# the build tree $1 into a scratch prefix, configure and build tests/install/example ($2) against
# it with find_package(saddle), run it (it checks a closed form).
set -euo pipefail
build="$1"; example="$2"; flags="${3:-}"  # $3: sanitizer flags of a sanitizer build
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" --component devel >/dev/null
[ -f "$tmp/prefix/lib/cmake/saddle/saddleConfig.cmake" ] || { echo "FAIL: no saddleConfig.cmake"; exit 1; }
cmake -S "$example" -B "$tmp/build" -DCMAKE_PREFIX_PATH="$tmp/prefix" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" >/dev/null
cmake --build "$tmp/build" -j2 >/dev/null
"$tmp/build/linear_attention_risk"
