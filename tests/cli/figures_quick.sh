#!/usr/bin/env bash
# `saddle figures --quick` (issue 14): every panel of both papers is drawn (one CSV and one PNG per
# panel) and every simulation marker that is compared with a theory point where that point is
# RS-stable lies within 4 standard errors of it (z column: (marker - theory) / combined s.e.;
# the theory is an independent computation: replica / deterministic equivalent vs L-BFGS ERM /
# finite-size kernel simulation). Bad input is rejected with exit 2.
set -u
source "$(dirname "$0")/lib/common.sh"

expect_error "unknown panel" figures --quick --only no_such_panel --out "$tmp/x"
expect_error "unknown parameter" figures --quick --set no_such_key=1 --out "$tmp/x"
expect_error "bad value" figures --quick --only slr_fig1 --set 'Ls=2 3' --out "$tmp/x"
expect_error "bad value (quote)" figures --quick --only slr_fig1 --set "Ls=2'" --out "$tmp/x"
expect_error "--set without =" figures --quick --set Ls --out "$tmp/x"
expect_error "input error of a run" figures --quick --only slr_fig1 --set Ls=9 --out "$tmp/x"

panels=$("$S" figures --list | grep -v '^ ' | cut -f1)
[ "$(echo "$panels" | wc -l)" -ge 15 ] || { echo "FAIL: fewer than 15 panels listed"; fail=1; }

"$S" figures --quick --out "$tmp/fig" 2>"$tmp/fig.log" || {
  echo "FAIL: saddle figures --quick: $(tail -5 "$tmp/fig.log")"; exit 1; }

for p in $panels; do
  [ -s "$tmp/fig/$p.csv" ] || { echo "FAIL: no $p.csv"; fail=1; continue; }
  [ -s "$tmp/fig/$p.png" ] || { echo "FAIL: no $p.png"; fail=1; }
  head -c 8 "$tmp/fig/$p.png" | od -An -tx1 | grep -q "89 50 4e 47" || { echo "FAIL: $p.png is not a PNG"; fail=1; }
  grep -q '^# saddle ' "$tmp/fig/$p.csv" || { echo "FAIL: $p.csv has no header"; fail=1; }
  grep -qi 'nan\|inf,' "$tmp/fig/$p.csv" && { grep -v '^#' "$tmp/fig/$p.csv" | grep -qi ',nan\|,-\?inf' && { echo "FAIL: $p.csv has nan/inf"; fail=1; }; }
  # Columns: panel,source,series,x,y,y_se,lambda,alpha,rs_stable,compared_with,reference,z
  res=$(grep -v '^#' "$tmp/fig/$p.csv" | awk -F, -v p="$p" '
    NF != 12 { print "row with " NF " fields (expected 12): " $0; exit }
    NR == 1 { next }
    $2 == "theory" { th++ }
    $2 == "mc" { mc++ }
    $2 == "mc" && $12 != "" && $9 != "0" { n++; z = $12 < 0 ? -$12 : $12;
      if (z >= 4) bad = bad sprintf(" [%s x=%s y=%s theory=%s z=%s]", $3, $4, $5, $11, $12) }
    END { if (th == 0) print "no theory rows"; else if (mc == 0) print "no simulation markers";
          else if (n == 0) print "no marker compared with an RS-stable theory point";
          else if (bad != "") print "markers off the theory:" bad }')
  [ -z "$res" ] || { echo "FAIL: $p: $res"; fail=1; }
done
grep -q '^panel,seconds' "$tmp/fig/summary.csv" || { echo "FAIL: no summary.csv"; fail=1; }
exit $fail
