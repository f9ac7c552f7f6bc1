#!/usr/bin/env bash
# `saddle mc slr|rmt` and `saddle validate slr|rmt` under hostile use (issues 20, 22, 25): every
# domain edge just inside (runs, finite output, nothing on stderr: no Ceres/glog chatter) and
# just outside (exit 2, one error line, nothing on stdout); sizes refused before allocating with
# the memory estimate in the message; negative or malformed seeds; writes that fail (/dev/full as
# --out and as stdout) exit non-zero; SIGTERM keeps every finished row and --resume completes the
# file as one run writes it; results identical for 1 and 2 threads.
# Usage: mc_errors.sh /path/to/saddle
set -u
. "$(dirname "$0")/lib/common.sh"

# ---- just outside the domains: exit 2, one line, nothing on stdout
expect_error "lambda 1e300" mc slr --lambda 1e300
expect_error "lambda above 1e4" mc slr --lambda 10001
expect_error "delta 1e300" mc slr --delta 1e300
expect_error "nu above 1e3" mc slr --nu 1000.5
expect_error "alpha above 1e4" mc slr --alpha 10001 --D 4
expect_error "c0 above 100" mc slr --c0 101
expect_error "c0 negative" mc slr --c0 -0.5
expect_error "erf b" mc slr --erf-b 1001 --activation erf
expect_error "m_k above 100" mc slr --mode population --m-k 101 --q-k 1e4 --m-v 0 --q-v 1
expect_error "q_k above 1e4" mc slr --mode population --m-k 1 --q-k 10001 --m-v 0 --q-v 1
expect_error "gtol" mc slr --gtol 2
expect_error "max-iter" mc slr --max-iter 0
expect_error "D list below 4" mc slr --D 3,8
expect_error "D not an integer" mc slr --D 10.5
expect_error "extrapolate one size" mc slr --D 8 --extrapolate
expect_error "extrapolate one seed" mc slr --D 8,16 --seeds 1 --extrapolate
expect_error "extrapolate population" mc slr --mode population --m-k 1 --q-k 1 --m-v 1 --q-v 1 --D 8,16 --extrapolate
for cmd in "mc slr" "mc rmt" "validate slr" "validate rmt"; do
  # shellcheck disable=SC2086
  expect_error "$cmd seed -1" $cmd --seed -1
  # shellcheck disable=SC2086
  expect_error "$cmd seed 1e3" $cmd --seed 1e3
  # shellcheck disable=SC2086
  expect_error "$cmd seed 2^64" $cmd --seed 18446744073709551616
done
# the population module (theory side of validate slr) stops at nu = 1e3 (max-SLR: or inf)
expect_error "validate spiked nu 1001" validate slr --mode population --nu 1001
expect_error "validate erm nu 1001" validate slr --mode erm --nu 1001
expect_error "validate max nu 1001" validate slr --mode population --task max --nu 1001
expect_error "validate negative D" validate slr --mode erm --D -5
# sizes: refused before allocating, with the estimate
expect_error "issue 25 memory" mc slr --D 20000 --L 1000 --alpha 1
grep -q 'GB' "$tmp/err" || { echo "FAIL: no memory estimate in: $(cat "$tmp/err")"; fail=1; }
# (3.6 GB a seed, 8 at once: above 16 GB on any machine; the old guard assumed L = 2: 0.2 GB)
expect_error "L-dist memory" mc slr --D 5000 --L-dist 1,2,40 --alpha 0.9 --n-test 10 --seeds 8 --threads 8
grep -q 'L = 40' "$tmp/err" || { echo "FAIL: the guard must use the real L: $(cat "$tmp/err")"; fail=1; }
expect_error "threads times seeds memory" mc slr --D 20000 --L 2 --alpha 1.2 --n-test 10 --seeds 8 --threads 8
expect_error "mc rmt exp overflow" mc rmt --n 64 --c 1 --gamma 1 --snr 1e6 --draws 2 --activation exp

# ---- just inside: runs, finite values, stderr empty (no glog lines)
inside() {  # inside "description" args...
  local what="$1"; shift
  "$S" "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  if [ "$rc" -ne 0 ] || [ -s "$tmp/err" ] || grep -v '^#' "$tmp/out" | grep -qiE 'nan|inf[^o]'; then
    echo "FAIL ($what): rc=$rc stderr: $(head -c 300 "$tmp/err")"
    fail=1
  fi
}
for act in softmax linear erf softplus; do
  inside "$act corner 1" mc slr --D 8 --alpha 1 --n-test 50 --activation $act --init overlaps \
    --m-k 100 --q-k 1e4 --m-v 100 --q-v 1e4 --lambda 1e4 --no-progress
  inside "$act corner 2" mc slr --D 8 --alpha 1 --n-test 50 --activation $act --c0 100 --lambda 0 \
    --nu 1e3 --delta 1e4 --erf-b -1e3 --no-progress
  inside "$act corner 3" mc slr --D 4 --alpha 1e4 --n-test 10 --activation $act --init random \
    --lambda 0 --seeds 2 --no-progress
done
inside "population corner" mc slr --mode population --D 8 --n-test 50 --m-k -100 --q-k 1e4 --m-v 100 \
  --q-v 1e4 --activation softplus --no-progress
inside "seed 2^64-1" mc slr --D 8 --alpha 1 --n-test 10 --seed 18446744073709551615 --no-progress
inside "validate nu 150" validate slr --mode population --nu 150 --D 8 --seeds 2 --n-test 200

# ---- failed writes: non-zero exit and one error line
for args in "mc slr --D 8 --alpha 1 --n-test 10" "mc rmt --n 64 --draws 2" "validate rmt --n 64 --draws 4"; do
  # shellcheck disable=SC2086
  "$S" $args --out /dev/full >/dev/null 2>"$tmp/err"; rc=$?
  { [ $rc -ne 0 ] && grep -q '^saddle: error:' "$tmp/err"; } || { echo "FAIL: $args --out /dev/full: rc=$rc"; fail=1; }
  # shellcheck disable=SC2086
  "$S" $args >/dev/full 2>"$tmp/err"; rc=$?
  { [ $rc -ne 0 ] && grep -q '^saddle: error:' "$tmp/err"; } || { echo "FAIL: $args >/dev/full: rc=$rc"; fail=1; }
done

# ---- SIGTERM: the finished rows stay, --resume completes the file as one run writes it
run=(mc slr --D 150 --alpha 0.5:4:16 --seeds 3 --n-test 1000 --no-progress)
"$S" "${run[@]}" --threads 1 --out "$tmp/full.csv" || { echo "FAIL: reference run"; fail=1; }
"$S" "${run[@]}" --threads 1 --out "$tmp/cut.csv" 2>"$tmp/term_err" & pid=$!
for _ in $(seq 200); do  # wait for the first finished row, then stop the run
  [ -f "$tmp/cut.csv" ] && grep -q '^mc,' "$tmp/cut.csv" && break
  sleep 0.05
done
kill -TERM $pid 2>/dev/null; wait $pid; rc=$?
rows=$(grep -c '^mc,' "$tmp/cut.csv")
if [ $rc -eq 130 ]; then
  [ "$rows" -ge 1 ] || { echo "FAIL: SIGTERM left no row"; fail=1; }
  "$S" "${run[@]}" --threads 1 --out "$tmp/cut.csv" --resume || { echo "FAIL: resume"; fail=1; }
elif [ $rc -ne 0 ]; then
  echo "FAIL: SIGTERM exit $rc (expected 130, or 0 if the run was already done)"; fail=1
fi
strip() { grep -v '^#' "$1" | awk -F, 'BEGIN{OFS=","} NR==1{for(j=1;j<=NF;j++) if($j=="seconds") s=j} {$s=""; print}'; }
[ "$(strip "$tmp/full.csv")" = "$(strip "$tmp/cut.csv")" ] || { echo "FAIL: resumed file differs"; fail=1; }

# ---- one training over several objective blocks, sizes and an extrapolated row: the same for
# 1 and 2 threads
for t in 1 2; do
  "$S" mc slr --D 40,60,90 --alpha 8 --seeds 2 --n-test 300 --L 3 --extrapolate --per-seed \
    --threads $t --no-progress | grep -v '^#' \
    | awk -F, 'BEGIN{OFS=","} NR==1{for(j=1;j<=NF;j++) if($j=="seconds") s=j} {$s=""; print}' >"$tmp/x$t.csv"
done
cmp -s "$tmp/x1.csv" "$tmp/x2.csv" || { echo "FAIL: 1 and 2 threads differ"; fail=1; }
[ "$(grep -c '^mc,erm,spiked,3,2,0.1,0,softmax,0,informed,8,inf,inf,all,2,' "$tmp/x1.csv")" = 1 ] \
  || { echo "FAIL: no D = inf row"; fail=1; }
[ "$(grep -vc '^source' "$tmp/x1.csv")" = 10 ] || { echo "FAIL: rows (3 x (1 + 2) + 1 expected)"; fail=1; }

[ $fail = 0 ] && echo "mc errors: ok"
exit $fail
