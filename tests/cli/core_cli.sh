#!/usr/bin/env bash
# Command-line conventions of `saddle` (foundation): sweeps, CSV header and columns, and bad
# input -> one line on stderr, exit code 2, nothing on stdout. Usage: core_cli.sh /path/to/saddle
set -u
source "$(dirname "$0")/lib/common.sh" "$1"

expect_error "negative alpha" ridge --alpha -1
expect_error "zero count" ridge --alpha 1:2:0
expect_error "malformed range" ridge --alpha 1:2
expect_error "bad log range" ridge --alpha 0:2:3:log
expect_error "NaN" ridge --lambda nan
expect_error "inf not allowed" ridge --delta inf
expect_error "not a number" ridge --alpha abc
expect_error "unknown option" ridge --bogus 1
expect_error "unknown subcommand" frobnicate
expect_error "bad method" ridge --method newtonish
expect_error "bad mix" ridge --mix 1.5
expect_error "unwritable output" ridge --out /nonexistent/dir/x.csv

# A good run: header lines, columns, one row per point of the cartesian product.
"$S" ridge --alpha 0.5:4:8 --lambda 0.1,1 --delta 0.25 --out "$tmp/r.csv" || { echo "FAIL: ridge run"; fail=1; }
grep -q '^# saddle ' "$tmp/r.csv" || { echo "FAIL: no version line"; fail=1; }
grep -q '^# command: .*ridge --alpha 0.5:4:8' "$tmp/r.csv" || { echo "FAIL: no command line"; fail=1; }
grep -q '^# solver: method=' "$tmp/r.csv" || { echo "FAIL: no solver settings"; fail=1; }
hdr=$(grep -v '^#' "$tmp/r.csv" | head -1)
[ "$hdr" = "alpha,lambda,delta,m,q,V,mhat,qhat,Vhat,test_error,train_error,converged,iterations,residual,map_radius,repelling,stalled,path,reason,amplitude" ] \
  || { echo "FAIL: header '$hdr'"; fail=1; }
rows=$(grep -v '^#' "$tmp/r.csv" | tail -n +2 | wc -l)
[ "$rows" -eq 16 ] || { echo "FAIL: expected 16 rows, got $rows"; fail=1; }
# Every row converged, and no nan/inf anywhere.
awk -F, '!/^#/ && NR>1 && $12 != "converged" && $12 != 1 {bad=1} END {exit bad}' "$tmp/r.csv" \
  || { echo "FAIL: unconverged row"; fail=1; }
grep -qiE 'nan|inf' <(grep -v '^#' "$tmp/r.csv") && { echo "FAIL: nan/inf in output"; fail=1; }
# Geometric range endpoints.
"$S" ridge --alpha 0.1:10:3:log | grep -v '^#' | cut -d, -f1 | tr '\n' ' ' | grep -q '^alpha 0.1 1 10 $' \
  || { echo "FAIL: log range"; fail=1; }
# A run that cannot converge says so in its row (1 iteration, no polish, no damped retry).
"$S" ridge --alpha 2 --max-iter 1 --no-polish --no-retry | grep -v '^#' | tail -1 | awk -F, '{exit !($12 == 0)}' \
  || { echo "FAIL: unconverged point not flagged"; fail=1; }
"$S" --help >/dev/null || { echo "FAIL: --help"; fail=1; }
"$S" ridge --help | grep -q -- '--alpha' || { echo "FAIL: ridge --help"; fail=1; }
"$S" --version | grep -q 'saddle' || { echo "FAIL: --version"; fail=1; }
[ "$fail" -eq 0 ] && echo "core CLI tests passed"
exit "$fail"
