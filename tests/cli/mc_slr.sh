#!/usr/bin/env bash
# CLI checks of `saddle mc slr` (docs/equations/slr_population.md §1.5, docs/equations/slr_replica.md §6): CSV shape, input errors (exit 2, no
# stdout), and independence of the results from the thread count.
set -u
S="$1"
fail() { echo "FAIL: $*" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# 1. population mode: one mean row, source=mc, no NaN
"$S" mc slr --mode population --task max --nu inf --L 3 --activation linear \
  --m-k 0.8 --q-k 0.7 --m-v 0.3 --q-v 0.1 --D 24 --seeds 2 --n-test 2000 > "$tmp/pop.csv" \
  || fail "population run"
grep -q '^source,mode,' "$tmp/pop.csv" || fail "header"
[ "$(grep -c '^mc,population,max,3,' "$tmp/pop.csv")" = 1 ] || fail "one population row"
grep -v '^#' "$tmp/pop.csv" | grep -qi 'nan' && fail "NaN in population output"

# 2. ERM: two seeds converge; per-seed rows
"$S" mc slr --task spiked --L 2 --nu 2 --alpha 2 --D 40 --seeds 2 --n-test 500 --per-seed \
  > "$tmp/erm.csv" || fail "erm run"
[ "$(grep -c '^mc,erm,spiked,2,' "$tmp/erm.csv")" = 3 ] || fail "mean + 2 seed rows"
conv=$(grep '^mc,erm,.*,all,' "$tmp/erm.csv" | awk -F, '{print $(NF-2)}')
[ "$conv" = 2 ] || fail "both seeds should converge (got $conv)"

# 3. results do not depend on the number of threads (seconds column dropped)
for t in 1 2; do
  OMP_NUM_THREADS=$t "$S" mc slr --task spiked --L-dist 1,2,3 --nu 2 --alpha 1.5 --D 30 --seeds 3 \
    --n-test 300 --activation softplus --init random --per-seed | grep -v '^#' \
    | awk -F, 'BEGIN{OFS=","} {NF=NF-1; print}' > "$tmp/t$t.csv" || fail "thread run $t"
done
cmp -s "$tmp/t1.csv" "$tmp/t2.csv" || fail "results differ between 1 and 2 threads"

# 4. bad input: exit code 2, one error line, nothing on stdout
bad() {
  out=$("$S" "$@" 2>"$tmp/err"); rc=$?
  [ $rc = 2 ] || fail "expected exit 2 for: $* (got $rc)"
  [ -z "$out" ] || fail "stdout not empty for: $*"
  grep -q '^saddle: error:' "$tmp/err" || fail "no error line for: $*"
}
bad mc slr --nu -1
bad mc slr --task spiked --nu inf
bad mc slr --activation relu
bad mc slr --alpha 0
bad mc slr --L 0
bad mc slr --init sideways
bad mc slr --mode population --m-k 1
bad mc slr --mode population --m-k 1 --q-k 0.5 --m-v 0 --q-v 1
bad mc slr --delta nan
bad validate slr --mode erm --activation erf
# sizes that overflow or cannot fit (issue 15): refused before allocating, naming the size
bad mc slr --D 8 --alpha 1e9
bad mc slr --alpha 1073741824.01 --D 4
bad mc slr --L 4294967297
bad mc slr --D 1000000000
bad mc slr --D 100000 --alpha 1000
bad mc slr --n-test 2000000000
bad mc slr --seeds 2000000000
bad validate slr --mode erm --points 2000000000
bad validate slr --mode erm --replicates 1000000
bad validate slr --mode population --D 1000000000
# --init overlaps with q = m^2 builds k = m_k k*, v = m_v v* exactly: with m_v = 1 it is the
# informed start with c0 = m_k, so the trained results must be identical.
a=$("$S" mc slr --L 2 --alpha 2 --D 100 --seeds 2 --activation softmax --init informed --c0 1.2 | grep -v '^#' | tail -1 | cut -d, -f16-)
b=$("$S" mc slr --L 2 --alpha 2 --D 100 --seeds 2 --activation softmax --init overlaps --m-k 1.2 --q-k 1.44 --m-v 1 --q-v 1 | grep -v '^#' | tail -1 | cut -d, -f16-)
[ -n "$a" ] && [ "${a%,*}" = "${b%,*}" ] || { echo "FAIL: --init overlaps differs from the informed start" >&2; exit 1; }
bad mc slr --init overlaps --m-k 1
bad mc slr --init overlaps --m-k 1 --q-k 0.5 --m-v 0 --q-v 1
bad mc slr --restarts 0
bad mc slr --keep lowest
bad mc slr --restarts 2 --keep best
# --restarts: at L = 1 softmax the objective is ridge regression in v (strictly convex), so every
# start reaches the same minimum: q_v_ab = q_v_aa and no loss spread.
"$S" mc slr --L 1 --alpha 2 --D 60 --seeds 2 --activation softmax --init random --restarts 3 \
  | grep -v '^#' | awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    { d = $c["q_v_aa"] - $c["q_v_ab"]; if (d < 0) d = -d;
      if (d > 1e-6 || $c["loss_spread"] > 1e-9) { print "q_v_aa " $c["q_v_aa"] " q_v_ab " $c["q_v_ab"]; exit 1 } }' \
  || { echo "FAIL: --restarts on a convex problem" >&2; exit 1; }
# --restarts with --extrapolate: loss_spread is ~1e-18 +- 4e-18 at a size where every restart finds
# the same minimum; the D = inf fit must still be made (it once failed: "two distinct sizes").
"$S" mc slr --L 2 --alpha 1 --D 16,24 --seeds 3 --restarts 2 --extrapolate --no-progress \
  | grep -v '^#' | awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
    $c["D"] == "inf" { found = 1; if ($c["loss_spread"] == "" || $c["loss_spread"] ~ /nan/) exit 1 }
    END { exit !found }' \
  || { echo "FAIL: --restarts with --extrapolate" >&2; exit 1; }
echo "mc_slr CLI: ok"
