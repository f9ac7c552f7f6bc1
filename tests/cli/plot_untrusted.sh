#!/usr/bin/env bash
# Untrusted text stays text (issue 15 item 8): a plot title with quotes, backslashes, a newline, a
# command substitution and backticks is drawn literally and runs nothing; a PNG path that gnuplot
# would treat as a pipe ('|cmd') is an ordinary (unwritable) file name; an unwritable PNG is an
# error (exit 2, nothing on stdout, no PNG bytes anywhere); no temporary files are left behind.
# Usage: plot_untrusted.sh /path/to/saddle
set -u
. "$(dirname "$0")/lib/common.sh"
command -v gnuplot >/dev/null || { echo "gnuplot missing (tools/setup-deps.sh installs it)"; exit 1; }
export TMPDIR="$tmp/tmpdir"
mkdir -p "$TMPDIR"
marker="$tmp/pwned"
title="it's \"q\" \\ back\\slash
second line \$(touch $marker) \`touch $marker\` '; system('touch $marker'); print '"
cd "$tmp"
"$S" ridge --alpha 0.5:2:4 --lambda 0.1,0.2 --no-progress --out r.csv --plot r.png --plot-title "$title" \
  >out.txt 2>err.txt || { echo "FAIL: plot with a hostile title: $(head -3 err.txt)"; fail=1; }
[ -s out.txt ] && { echo "FAIL: stdout not empty with --out"; fail=1; }
head -c 8 r.png | od -An -c | grep -q 'P   N   G' || { echo "FAIL: r.png is not a PNG"; fail=1; }
"$S" plot r.csv --out p2.png --title "$title" || { echo "FAIL: saddle plot with a hostile title"; fail=1; }
[ -s p2.png ] || { echo "FAIL: saddle plot wrote no PNG"; fail=1; }
[ -e "$marker" ] && { echo "FAIL: a command in the title was executed"; fail=1; }
# Column names and category values from a CSV are data too.
{ head -n 3 r.csv; echo "alpha,lambda,\$(touch $marker)';system('touch $marker')"; grep -v '^#' r.csv | tail -n +2 | cut -d, -f1,2,10; echo "# timing: x"; } >hostile.csv
"$S" plot hostile.csv --out h.png --y "\$(touch $marker)';system('touch $marker')" >/dev/null 2>err.txt \
  || { echo "FAIL: plot of a CSV with a hostile column name: $(head -2 err.txt)"; fail=1; }
[ -e "$marker" ] && { echo "FAIL: a command in a column name was executed"; fail=1; }
# Paths: a pipe-looking name is just a name; an unwritable path is a clean error.
expect_error "PNG path '|touch'" plot r.csv --out "|touch $marker"
[ -e "$marker" ] && { echo "FAIL: a pipe in the PNG path was executed"; fail=1; }
rm -f "|touch $marker"
expect_error "unwritable PNG" plot r.csv --out "$tmp/no/such/dir/x.png"
expect_error "unwritable --plot" ridge --alpha 1,2 --no-progress --out r2.csv --plot "$tmp/no/such/dir/x.png"
expect_error "empty --out" plot r.csv --out ''
# Figures draw through the same driver (issue 25 item 1): an output directory that gnuplot would
# read as a pipe ('|cmd', a quote closing its string, a newline) is only a directory name: the PNG
# is written inside it by saddle and nothing runs; --redraw from hostile directories likewise.
"$S" figures --quick --only rmt_fig1a --out "|touch PWN;x" >out.txt 2>err.txt \
  || { echo "FAIL: figures with --out '|touch PWN;x': $(head -3 err.txt)"; fail=1; }
[ -e PWN ] && { echo "FAIL: figures --out '|touch PWN;x' ran a command"; fail=1; }
head -c 8 "|touch PWN;x/rmt_fig1a.png" | od -An -c | grep -q 'P   N   G' \
  || { echo "FAIL: figures --out '|touch PWN;x' wrote no PNG inside the directory"; fail=1; }
for d in "|touch PWN" "x';system('touch PWN');'" "x\";system(\"touch PWN\");\"" "a
!touch PWN"; do
  mkdir -p "$d" && cp "|touch PWN;x/rmt_fig1a.csv" "$d/" || { echo "FAIL: cannot make '$d'"; fail=1; continue; }
  "$S" figures --only rmt_fig1a --redraw --out "$d" >/dev/null 2>err.txt \
    || { echo "FAIL: figures --redraw --out '$d': $(head -2 err.txt)"; fail=1; }
  [ -s "$d/rmt_fig1a.png" ] || { echo "FAIL: figures --redraw --out '$d' wrote no PNG"; fail=1; }
  [ -e PWN ] && { echo "FAIL: figures --out '$d' ran a command"; fail=1; rm -f PWN; }
done
rm -f PWN
# Nothing left in TMPDIR (data files, script, gnuplot's stderr), after success and failure alike.
left=$(ls -A "$TMPDIR")
[ -z "$left" ] || { echo "FAIL: temporary files left: $left"; fail=1; }
[ "$fail" -eq 0 ] && echo "plot untrusted-text tests passed"
exit "$fail"
