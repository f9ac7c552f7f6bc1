#!/usr/bin/env bash
# Every option acts or is refused with its reason (issue 28.6), and numbers are read as decimal
# text only (issue 28.4): hexadecimal, octal-looking, overflowing, NaN and saturating values are
# bad input (exit 2, one line on stderr, nothing on stdout), never converted or defaulted.
# Usage: options_refused.sh /path/to/saddle
set -u
source "$(dirname "$0")/lib/common.sh" "$1"

# ---- numbers: sweeps (parse_sweep) and CLI11-bound options alike
expect_error "hex sweep" ridge --alpha 0x10
expect_error "hex float sweep" ridge --alpha 0x1p-1
expect_error "overflow sweep" mc slr --nu 1e400
expect_error "underflow sweep" ridge --alpha 1e-400
expect_error "trailing junk" ridge --alpha 0.5x
expect_error "decimal comma" ridge --mix 0,5
expect_error "hex int option" ridge --max-iter 0x10
expect_error "exponent int option" ridge --max-iter 1e3
expect_error "hex real option" ridge --mix 0x1p-1
expect_error "nan real option" ridge --tol nan
expect_error "overflow real option" ridge --tol 1e400
expect_error "int option overflow" ridge --max-iter 99999999999999999999
for cmd in "slr erm" "slr bayes" "mc slr" "validate slr"; do
  # shellcheck disable=SC2086
  expect_error "$cmd seed 2^64" $cmd --seed 18446744073709551616
  # shellcheck disable=SC2086
  expect_error "$cmd seed hex" $cmd --seed 0x10
done
expect_error "slr population seed -1" slr population --seed -1

# A leading zero is decimal (CLI11 alone would read 010 as octal 8).
"$S" ridge --alpha 1 --max-iter 010 --out "$tmp/oct.csv" 2>/dev/null
grep -q 'max_iter=10 ' "$tmp/oct.csv" || { echo "FAIL: --max-iter 010 is not 10: $(grep '^# solver' "$tmp/oct.csv")"; fail=1; }

# ---- ranges of integers: never rounded, never repeated
expect_error "D range rounds" mc slr --D 8:9:3
expect_error "D repeated" mc slr --D 16,16,32 --extrapolate
expect_error "D repeated without fit" mc slr --D 16,16
expect_error "range repeats a value" ridge --alpha 1:1:3

# ---- validate slr: case options need --mode, and the mode they belong to
expect_error "alpha without mode" validate slr --alpha 2
expect_error "D without mode" validate slr --D 100
expect_error "quick with mode" validate slr --quick --mode population
expect_error "alpha in population" validate slr --mode population --alpha 2
expect_error "m-k in erm" validate slr --mode erm --m-k 1
expect_error "seeds 0" validate slr --mode erm --seeds 0
expect_error "D 0" validate slr --mode population --D 0
expect_error "n-test 0" validate slr --mode population --n-test 0
# ---- validate rmt: 0 is not "the default"
expect_error "draws 0" validate rmt --draws 0
expect_error "n 0" validate rmt --n 0
# ---- --plot of a validation: the columns are checked before anything runs
expect_error "validate slr plot column" validate slr --quick --plot "$tmp/x.png" --plot-y test_error
expect_error "validate rmt plot column" validate rmt --quick --plot "$tmp/x.png" --plot-y mean
[ -e "$tmp/x.png" ] && { echo "FAIL: a refused --plot left a file"; fail=1; }
if command -v gnuplot >/dev/null; then
  "$S" validate slr --mode population --D 8 --seeds 2 --n-test 200 --out "$tmp/v.csv" --plot "$tmp/v.png" \
    2>"$tmp/err" || { echo "FAIL: validate slr --plot: $(cat "$tmp/err")"; fail=1; }
  [ -s "$tmp/v.png" ] || { echo "FAIL: validate slr --plot drew nothing"; fail=1; }
  # `saddle plot` of a validation file (no column named): the z of each comparison.
  data="$(dirname "$0")/../../data/validation"
  for v in validate_slr_full validate_rmt_full; do
    "$S" plot "$data/$v.csv" --out "$tmp/$v.png" 2>"$tmp/err" || { echo "FAIL: saddle plot $v.csv: $(cat "$tmp/err")"; fail=1; }
    [ -s "$tmp/$v.png" ] || { echo "FAIL: saddle plot $v.csv drew nothing"; fail=1; }
  done
fi

# ---- arguments with a NUL cannot reach the program from a shell; the module's path is tested in
# tests/python/test_batch.py.
exit $fail
