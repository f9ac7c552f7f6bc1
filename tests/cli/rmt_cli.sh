#!/usr/bin/env bash
# `saddle rmt hermite|attention|ridge`, `saddle mc rmt` and `saddle validate rmt` (docs/equations/rmt.md):
# columns, closed-form values, and bad input -> one line on stderr, exit 2, nothing on stdout.
# Usage: rmt_cli.sh /path/to/saddle
set -u
source "$(dirname "$0")/lib/common.sh" "$1"
# value of column $2 in data row $3 (1-based) of CSV file $1
col() { grep -v '^#' "$1" | awk -F, -v c="$2" -v r="$3" 'NR==1{for(i=1;i<=NF;i++) if($i==c) k=i} NR==r+1{print $k}'; }
# |a - b| <= tol ?
close() { awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN{d=a-b; if(d<0)d=-d; exit !(d<=t)}'; }

expect_error "unknown activation" rmt attention --activation softmax
expect_error "bad texp" rmt hermite --activation texp:x
expect_error "gamma 0 in attention" rmt attention --gamma 0
expect_error "negative c" rmt attention --c -0.5
expect_error "negative snr" rmt ridge --snr -1
expect_error "too many coordinates" rmt attention --wk 1,0,0,0
expect_error "NaN coordinate" rmt attention --wq nan,0,0
expect_error "exp with kept diagonal" rmt attention --activation exp --keep-diagonal
expect_error "bad nodes" rmt attention --nodes 1
expect_error "mc bad model" mc rmt --model best
expect_error "mc p < 3" mc rmt --n 8 --c 0.25
expect_error "mc gamma 0" mc rmt --gamma 0
expect_error "mc one draw" mc rmt --draws 1
expect_error "mc exp kept" mc rmt --activation exp --keep-diagonal

# hermite: closed forms of docs/equations/rmt.md §3.
"$S" rmt hermite --activation tanh,relu,cos --out "$tmp/h.csv" || { echo "FAIL: hermite run"; fail=1; }
[ "$(grep -v '^#' "$tmp/h.csv" | head -1)" = "activation,a0,a1,a2,nu,sigma2,kappa_d" ] || { echo "FAIL: hermite columns"; fail=1; }
close "$(col "$tmp/h.csv" a1 2)" 0.5 1e-10 || { echo "FAIL: relu a1"; fail=1; }
close "$(col "$tmp/h.csv" nu 2)" 0.340845056908 1e-10 || { echo "FAIL: relu nu"; fail=1; }
close "$(col "$tmp/h.csv" a2 3)" -0.42888194248 1e-10 || { echo "FAIL: cos a2"; fail=1; }

# attention: the issue's example, columns, 13 rows, all converged; error_ridge = (LR3).
"$S" rmt attention --c 0.5 --gamma 1e-6:1:13:log --snr 1 --activation tanh --wk 1,0,0 --wq 1,0,0 \
  --no-progress --out "$tmp/a.csv" || { echo "FAIL: attention run"; fail=1; }
hdr=$(grep -v '^#' "$tmp/a.csv" | head -1)
[ "$hdr" = "c,gamma,snr,activation,wk,wq,a1,nu,delta,delta_tilde,q,error,error_ridge,converged,iterations,residual" ] \
  || { echo "FAIL: attention columns: $hdr"; fail=1; }
[ "$(grep -v '^#' "$tmp/a.csv" | tail -n +2 | wc -l)" -eq 13 ] || { echo "FAIL: attention rows"; fail=1; }
[ "$(grep -v '^#' "$tmp/a.csv" | tail -n +2 | awk -F, '$14!=1' | wc -l)" -eq 0 ] || { echo "FAIL: not converged"; fail=1; }
grep -qi 'nan' "$tmp/a.csv" && { echo "FAIL: NaN in output"; fail=1; }
close "$(col "$tmp/a.csv" error_ridge 13)" 0.388611792031 1e-10 || { echo "FAIL: error_ridge at gamma=1"; fail=1; }
# Smoke value of docs/equations/rmt.md §9 (erf, asymmetric W).
"$S" rmt attention --c 0.75 --gamma 0.05 --snr 2 --activation erf --wk 1,0.5,0 --wq 1,-0.5,0 \
  --no-progress --out "$tmp/s.csv" || { echo "FAIL: smoke run"; fail=1; }
close "$(col "$tmp/s.csv" error 1)" 0.1505479599 1e-9 || { echo "FAIL: smoke error $(col "$tmp/s.csv" error 1)"; fail=1; }
close "$(col "$tmp/s.csv" q 1)" 3.7942637072 1e-8 || { echo "FAIL: smoke q"; fail=1; }

# ridge: closed form incl. the ridgeless limit (1-c)^+/(1+snr).
"$S" rmt ridge --c 0.5,2 --gamma 0,0.05 --snr 1 --no-progress --out "$tmp/r.csv" || { echo "FAIL: ridge run"; fail=1; }
close "$(col "$tmp/r.csv" error 1)" 0.25 1e-15 || { echo "FAIL: ridgeless c=0.5"; fail=1; }
close "$(col "$tmp/r.csv" error 3)" 0 1e-15 || { echo "FAIL: ridgeless c=2"; fail=1; }
"$S" rmt ridge --c 0.75 --gamma 0.05 --snr 2 --no-progress --out "$tmp/r2.csv"
close "$(col "$tmp/r2.csv" error 1)" 0.0930915269 1e-9 || { echo "FAIL: ridge smoke"; fail=1; }

# mc rmt: small run, columns, ridge MC within 5 s.e. of (LR3); identical with 1 and 2 threads.
"$S" mc rmt --n 256 --c 0.5 --gamma 0.1,1 --snr 1 --draws 4 --model true,ridge --threads 1 \
  --out "$tmp/m1.csv" || { echo "FAIL: mc run"; fail=1; }
"$S" mc rmt --n 256 --c 0.5 --gamma 0.1,1 --snr 1 --draws 4 --model true,ridge --threads 2 \
  --out "$tmp/m2.csv" || { echo "FAIL: mc run 2"; fail=1; }
grep -q '^source,model,n,p,c,gamma,snr,activation,wk,wq,draws,seed,mean,se,' "$tmp/m1.csv" || { echo "FAIL: mc columns"; fail=1; }
[ "$(grep -v '^#' "$tmp/m1.csv" | tail -n +2 | cut -d, -f1 | sort -u)" = "mc" ] || { echo "FAIL: source"; fail=1; }
diff <(grep -v '^#' "$tmp/m1.csv") <(grep -v '^#' "$tmp/m2.csv") >/dev/null || { echo "FAIL: thread dependence"; fail=1; }
rm_mean=$(col "$tmp/m1.csv" mean 4); rm_se=$(col "$tmp/m1.csv" se 4)
tol=$(awk -v s="$rm_se" 'BEGIN{print 5*s}')
close "$rm_mean" 0.388611792031 "$tol" || { echo "FAIL: ridge mc $rm_mean +- $rm_se"; fail=1; }

# validate rmt: a tiny run exercises the path; exit 1 exactly when a verdict is FAIL, never 2.
"$S" validate rmt --n 64 --draws 4 --out "$tmp/v.csv" 2>"$tmp/verr"
rc=$?
grep -q '^case,activation,c,snr,w,gamma,model,n,p,draws,theory,mc_mean,mc_se,diff,z,allowance,verdict$' "$tmp/v.csv" \
  || { echo "FAIL: validate columns"; fail=1; }
[ "$(grep -v '^#' "$tmp/v.csv" | tail -n +2 | wc -l)" -eq 72 ] || { echo "FAIL: validate rows"; fail=1; }
nfail=$(grep -c ',FAIL$' "$tmp/v.csv")
if [ "$nfail" -gt 0 ]; then [ "$rc" -eq 1 ] || { echo "FAIL: validate rc=$rc with $nfail FAIL rows"; fail=1; }
else [ "$rc" -eq 0 ] || { echo "FAIL: validate rc=$rc without FAIL rows"; fail=1; }; fi
expect_error "validate tiny n" validate rmt --n 8

exit $fail
