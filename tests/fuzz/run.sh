#!/usr/bin/env bash
# Builds tests/fuzz/fuzz_parsers with Debian's clang (libFuzzer + ASan + UBSan) in BUILD_DIR and
# runs it for SECONDS (default 60, or $SADDLE_FUZZ_SECONDS) on the seed corpus and the kept
# regression inputs; any crash, sanitizer report or unexpected exception fails. Without clang it
# says so and passes (tools/setup-deps.sh installs clang). SADDLE_SKIP_FUZZ=1 skips it (.ci/run
# sets it for the sanitizer pass, the fuzz run having been done by the test command).
# Usage: run.sh BUILD_DIR [SECONDS]
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
dir="$1"
secs="${2:-${SADDLE_FUZZ_SECONDS:-60}}"
if [ -n "${SADDLE_SKIP_FUZZ:-}" ]; then echo "fuzz run skipped (SADDLE_SKIP_FUZZ)"; exit 0; fi
if ! command -v clang++ >/dev/null; then
  echo "note: clang++ not found, fuzz run skipped (tools/setup-deps.sh installs clang)"; exit 0
fi
mkdir -p "$dir"
log="$dir/fuzz-build.log"
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S "$src" -B "$dir" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=clang++ -DSADDLE_FUZZ=ON \
  -DSADDLE_BUILD_TESTS=OFF -DSADDLE_BUILD_BENCH=OFF -DSADDLE_WITH_MPI=OFF "${launcher[@]}" >"$log" 2>&1 \
  || { echo "FAIL: configuring the fuzz build"; tail -20 "$log"; exit 1; }
cmake --build "$dir" --target fuzz_parsers -j"$(nproc)" >>"$log" 2>&1 \
  || { echo "FAIL: building fuzz_parsers"; tail -30 "$log"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/new"
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=1:abort_on_error=0"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-}:print_stacktrace=1:halt_on_error=1"
# 1) every kept regression input once, 2) a bounded run from the seed corpus.
"$dir/fuzz_parsers" "$src"/tests/fuzz/regressions/* >"$work/reg.log" 2>&1 \
  || { echo "FAIL: a regression input fails again"; tail -40 "$work/reg.log"; exit 1; }
(cd "$work" && "$dir/fuzz_parsers" -max_total_time="$secs" -max_len=4096 -timeout=20 -rss_limit_mb=2048 \
  -print_final_stats=1 "$work/new" "$src/tests/fuzz/corpus" "$src/tests/fuzz/regressions") >"$work/fuzz.log" 2>&1
rc=$?
if [ "$rc" -ne 0 ]; then
  echo "FAIL: fuzz_parsers found a problem (exit $rc); the input is kept below as crash-*:"
  tail -60 "$work/fuzz.log"
  mkdir -p "$dir/findings" && cp "$work"/crash-* "$work"/timeout-* "$work"/oom-* "$dir/findings/" 2>/dev/null
  exit 1
fi
grep -E "stat::number_of_executed_units|cov:" "$work/fuzz.log" | tail -2
echo "fuzz run passed ($secs s)"
