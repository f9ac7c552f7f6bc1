#!/usr/bin/env bash
# CLI checks of `saddle slr erm-1rsb` (docs/equations/slr_rsb.md): bad input is
# refused with exit code 2 (one line on stderr, no CSV), and `slr erm --symmetry 1rsb` points to it;
# a small run writes the parameters of `slr erm` it shares, the 1RSB columns and finite values; at L = 1 (ridge,
# convex) the gap dq_v collapses to 0 and the test error is the closed form of ridge regression.
source "$(dirname "$0")/lib/common.sh"

expect_error "unknown symmetry" slr erm --symmetry 2rsb
expect_error "empty symmetry" slr erm --symmetry ""
out=$("$S" slr erm --symmetry 1rsb 2>&1)
echo "$out" | grep -q "slr erm-1rsb" || { echo "FAIL: slr erm --symmetry 1rsb does not name slr erm-1rsb: $out"; fail=1; }
expect_error "odd inner points" slr erm-1rsb --inner-points 3
expect_error "zero inner points" slr erm-1rsb --inner-points 0
expect_error "too many inner points" slr erm-1rsb --inner-points 8192
expect_error "non-numeric inner points" slr erm-1rsb --inner-points many
expect_error "bad alpha" slr erm-1rsb --alpha -1
expect_error "bad L" slr erm-1rsb --L 9
expect_error "one replicate" slr erm-1rsb --replicates 1
expect_error "too many nested points" slr erm-1rsb --points 65536 --inner-points 4096

# A small linear-attention run inside the RS-unstable window of L = 2.
"$S" slr erm-1rsb --L 2 --alpha 2.5 --activation linear --points 128 \
  --inner-points 8 --replicates 2 >"$tmp/rsb.csv" 2>"$tmp/err" || { echo "FAIL: 1rsb run: $(cat "$tmp/err")"; fail=1; }
hdr=$(grep -v '^#' "$tmp/rsb.csv" | head -1)
want_rs="task,L,nu,lambda,delta,alpha,activation,replicates,grid1,grid2,starts,inner_points,seed,init,m_k,q_k,V_k,dq_k,m_v,q_v,V_v,dq_v,log_x,x_parisi,"
case "$hdr" in "$want_rs"*) ;; *) echo "FAIL: 1rsb header (RS part): $hdr"; fail=1 ;; esac
for c in x_parisi x_parisi_se dq_k dq_k_se dq_v dq_v_se free_energy free_energy_se \
         at0_eigenvalue inner_points rs_stability points; do
  echo "$hdr" | tr ',' '\n' | grep -qx "$c" || { echo "FAIL: 1rsb column $c missing"; fail=1; }
done
nrows=$(grep -v '^#' "$tmp/rsb.csv" | tail -n +2 | wc -l)
[ "$nrows" -eq 1 ] || { echo "FAIL: 1rsb: expected 1 row, got $nrows"; fail=1; }
grep -v '^#' "$tmp/rsb.csv" | tr ',' '\n' | grep -Eqix -- '-?(nan|inf)' \
  && { echo "FAIL: 1rsb: non-finite value"; fail=1; }
grep -q "^# model: Ridge ERM test/train error vs alpha: one-step replica-symmetry-broken" "$tmp/rsb.csv" \
  || { echo "FAIL: 1rsb model line"; fail=1; }
col() {  # col NAME FILE: the value of column NAME in the first data row
  awk -F, -v n="$1" '/^#/ {next} !h {for (i = 1; i <= NF; i++) if ($i == n) k = i; h = 1; next} {print $k; exit}' "$2"
}
[ "$(col points "$tmp/rsb.csv")" = "128" ] || { echo "FAIL: points column"; fail=1; }

# L = 1 softmax is ridge regression: dq_v -> 0 and the closed-form test error (alpha = 2,
# lambda = 0.1, Delta = 0.25: V = 0.844972, m = alpha V/(1+V) = 0.915491,
# q = (m^2 + theta (1 - 2m + Delta))/(1 - theta) with theta = alpha V^2/(1+V)^2).
"$S" slr erm-1rsb --L 1 --activation softmax --alpha 2 --delta 0.25 --points 1024 \
  --inner-points 8 --replicates 2 >"$tmp/l1.csv" 2>"$tmp/err" || { echo "FAIL: 1rsb L = 1 run: $(cat "$tmp/err")"; fail=1; }
python3 - "$tmp/l1.csv" <<'EOF' || fail=1
import csv, math, sys
rows = list(csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith('#')))
r = rows[0]
a, lam, d = 2.0, 0.1, 0.25
b = lam + a - 1
V = (-b + math.sqrt(b * b + 4 * lam)) / (2 * lam)
m = a * V / (1 + V)
th = a * V * V / (1 + V) ** 2
q = (m * m + th * (1 - 2 * m + d)) / (1 - th)
E = 1 - 2 * m + q
ok = True
if float(r['dq_v']) > 1e-4:
    print("FAIL: L = 1 dq_v =", r['dq_v']); ok = False
if abs(float(r['test_error']) - E) > 5 * float(r['test_error_se']) + 2e-3:
    print("FAIL: L = 1 test error", r['test_error'], "+-", r['test_error_se'], "closed form", E); ok = False
if r['converged'] != '1':
    print("FAIL: L = 1 not converged"); ok = False
sys.exit(0 if ok else 1)
EOF

exit $fail
