#!/usr/bin/env bash
# `saddle validate rmt --quick`: deterministic equivalent against Monte Carlo of the true model and
# of the Gaussian-equivalent surrogate on the built-in cases (n = 512, 8 draws); must exit 0 and
# report a theory and an mc value for every case, with no FAIL verdict.
set -u
S="$1"
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$S" validate rmt --quick > "$out" || { tail -20 "$out" >&2; echo "FAIL: validate rmt --quick" >&2; exit 1; }
rows=$(grep -vc '^#' "$out")
[ "$rows" -gt 10 ] || { echo "FAIL: only $rows lines" >&2; exit 1; }
grep -qi ',fail' "$out" && { echo "FAIL: a FAIL verdict with exit 0" >&2; exit 1; }
echo "validate rmt --quick: ok ($((rows - 1)) comparisons)"
