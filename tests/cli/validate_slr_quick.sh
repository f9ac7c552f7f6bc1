#!/usr/bin/env bash
# `saddle validate slr --quick`: the quick subset of the SLR theory-vs-simulation cases must pass
# (exit 0) and print theory and mc rows for every compared quantity.
set -u
S="$1"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$S" validate slr --quick > "$out" || { cat "$out" >&2; echo "FAIL: validate slr --quick" >&2; exit 1; }
nt=$(grep -c ',theory,' "$out"); nm=$(grep -c ',mc,' "$out")
[ "$nt" -gt 0 ] && [ "$nt" = "$nm" ] || { echo "FAIL: theory/mc rows $nt/$nm" >&2; exit 1; }
grep -q ',FAIL,' "$out" && { echo "FAIL: a FAIL verdict with exit 0" >&2; exit 1; }
echo "validate slr --quick: ok ($nm comparisons)"
