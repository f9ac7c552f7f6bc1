#!/usr/bin/env bash
# --resume checks every kept row against the grid (issue 28 item 3) for the commands whose rows
# are not those of a generic curve: `mc rmt` (models x gammas per setting), `mc slr` (per size the
# mean row, the per-seed rows, then the D = inf row), `slr population` (one point per chain) and
# `slr erm-1rsb` (inits x alphas), and a generic model (`ridge`). For each: two rows
# swapped, a row of another grid and text in a numeric column (with converged = 1) are refused
# (exit 2, one line naming the line, the file left alone); a file cut inside its last chain
# resumes to the rows of a clean run.
# Usage: resume_row_keys.sh /path/to/saddle
set -u
source "$(dirname "$0")/lib/common.sh"

# The rows of a CSV without its timing columns (`seconds` of mc slr) and the timing line.
rows() {
  python3 - "$1" <<'EOF'
import csv, sys
lines = [l for l in open(sys.argv[1], newline="") if not l.startswith("#")]
table = list(csv.reader(lines))
drop = {i for i, name in enumerate(table[0]) if name == "seconds"}
for row in table:
    print(",".join(x for i, x in enumerate(row) if i not in drop))
EOF
}

check() {  # check NAME "ARGS" "OTHER_ARGS" COLUMN: ARGS the run, OTHER_ARGS a run of another grid,
           # COLUMN a numeric column past the row's parameters
  local name="$1" args other col="$4"
  read -r -a args <<<"$2"
  read -r -a other <<<"$3"
  local d="$tmp/$name"
  mkdir -p "$d"
  "$S" "${args[@]}" --no-progress --threads 1 --out "$d/ref.csv" 2>/dev/null || { echo "FAIL ($name): reference run"; fail=1; return; }
  "$S" "${other[@]}" --no-progress --threads 1 --out "$d/other.csv" 2>/dev/null || { echo "FAIL ($name): other run"; fail=1; return; }
  local nh first
  nh=$(grep -c '^#' "$d/ref.csv")  # the header lines, the column header and the timing line
  first=$nh                       # line number of the first data row
  head -n -1 "$d/ref.csv" >"$d/partial.csv"
  refuse() {  # refuse WHAT FILE
    cp "$2" "$d/before.csv"
    "$S" "${args[@]}" --no-progress --threads 1 --out "$2" --resume >/dev/null 2>"$d/err"
    local rc=$?
    [ "$rc" -eq 2 ] || { echo "FAIL ($name): --resume accepted $1 (exit $rc)"; fail=1; }
    grep -q 'line [0-9]' "$d/err" || { echo "FAIL ($name): --resume on $1 does not name the line: $(cat "$d/err")"; fail=1; }
    [ "$(wc -l <"$d/err")" -eq 1 ] || { echo "FAIL ($name): --resume on $1: more than one line on stderr"; fail=1; }
    cmp -s "$2" "$d/before.csv" || { echo "FAIL ($name): --resume on $1 changed the file"; fail=1; }
  }
  awk -v l="$((first + 1))" 'NR == l { keep = $0; next } NR == l + 1 { print; print keep; next } { print }' \
    "$d/partial.csv" >"$d/swapped.csv"
  refuse "two rows swapped" "$d/swapped.csv"
  local foreign
  foreign=$(grep -v '^#' "$d/other.csv" | tail -n 1)  # the other grid's last row, in the last row's place
  awk -v l="$(wc -l <"$d/partial.csv")" -v r="$foreign" 'NR == l { print r; next } { print }' "$d/partial.csv" >"$d/foreign.csv"
  refuse "a row of another grid" "$d/foreign.csv"
  local header cc cv
  header=$(grep -v '^#' "$d/ref.csv" | head -n 1)
  cc=$(tr ',' '\n' <<<"$header" | grep -n "^$col\$" | cut -d: -f1)
  cv=$(tr ',' '\n' <<<"$header" | grep -n '^converged$' | cut -d: -f1)
  awk -F, -v OFS=, -v l="$((first + 1))" -v c="$cc" -v v="$cv" 'NR == l { $c = "abc"; if (v) $v = 1 } { print }' \
    "$d/partial.csv" >"$d/text.csv"
  refuse "$col=abc with converged=1" "$d/text.csv"
  # Cut inside the last chain: its rows are recomputed, the others kept.
  head -n -2 "$d/ref.csv" >"$d/cut.csv"
  "$S" "${args[@]}" --no-progress --threads 1 --out "$d/cut.csv" --resume 2>"$d/err" ||
    { echo "FAIL ($name): --resume of an intact cut file: $(cat "$d/err")"; fail=1; }
  cmp -s <(rows "$d/ref.csv") <(rows "$d/cut.csv") || { echo "FAIL ($name): resumed file differs from the clean run"; fail=1; }
}

check mc_rmt "mc rmt --n 128 --draws 4 --c 0.5,1 --gamma 0.1,1" "mc rmt --n 128 --draws 4 --c 0.5,2 --gamma 0.1,1" mean
check mc_slr "mc slr --mode erm --alpha 1,2 --D 16,24 --seeds 2 --per-seed --extrapolate" \
  "mc slr --mode erm --alpha 1,3 --D 16,24 --seeds 2 --per-seed --extrapolate" m_k
check slr_population "slr population --nu 1,2 --activation softmax,linear" \
  "slr population --nu 1,3 --activation softmax,linear" risk
check slr_1rsb "slr erm-1rsb --alpha 1,2 --points 64 --inner-points 8 --replicates 2" \
  "slr erm-1rsb --alpha 1,3 --points 64 --inner-points 8 --replicates 2" m_k
check ridge "ridge --alpha 0.5,1,2 --lambda 0.1,1" "ridge --alpha 0.5,1,3 --lambda 0.1,1" m

[ "$fail" -eq 0 ] && echo "resume row-key tests passed"
exit "$fail"
