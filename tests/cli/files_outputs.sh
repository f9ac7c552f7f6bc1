#!/usr/bin/env bash
# Files named on the command line (issue 28 items 1, 5, 8; tools/runner/file_io.hpp): an output is written
# only when it is absent or a regular file (a device node, FIFO or directory is refused and left as
# it was: `--plot /dev/null` never unlinks it, `--out FIFO` never hangs); an output that is the
# same file as an input or as the other output (also through a symbolic link) is refused; inputs
# are read only from regular files (a FIFO, /dev/zero, /dev/urandom are refused at once); the
# figure's options, gnuplot and TMPDIR are checked before computing (exit 2, nothing on stdout);
# gnuplot runs under a time limit (--plot-timeout), and a figure that fails after the CSV is
# complete exits 4, the CSV intact and the PNG there before untouched; --max-iter bounds the
# preint channel's work and SIGTERM stops it within seconds.
# Usage: files_outputs.sh /path/to/saddle
set -u
. "$(dirname "$0")/lib/common.sh"
cd "$tmp" || exit 1
export TMPDIR="$tmp/tmpdir"
mkdir -p "$TMPDIR" fake
ridge=(ridge --alpha 0.5:2:4 --lambda 0.1,0.2 --no-progress)  # two chains (--shard 0/2)
curve=(ridge --alpha 0.5:2:4 --lambda 0.1 --no-progress)        # a 1-D sweep
"$S" "${ridge[@]}" --out a.csv || { echo "FAIL: reference run"; exit 1; }
cp a.csv a.keep
same() { cmp -s "$1" "$2" || { echo "FAIL ($3): '$1' was changed"; fail=1; }; }
# Everything in the scratch directory (names and types), to check nothing else was touched.
listing() { find . -path ./tmpdir -prune -o -printf '%p %y\n' | sort; }

# ---- item 1: outputs that are not regular files, and outputs that are an input
mkfifo fifo.png
expect_error "--plot FIFO" "${ridge[@]}" --plot fifo.png
[ -p fifo.png ] || { echo "FAIL: --plot FIFO removed or replaced the FIFO"; fail=1; }
if [ "$(id -u)" -eq 0 ] && mknod node c 1 3 2>/dev/null; then  # a copy of /dev/null
  expect_error "--plot device node" "${ridge[@]}" --plot node
  expect_error "saddle plot --out device node" plot a.csv --out node
  [ -c node ] || { echo "FAIL: --plot on a device node removed it"; fail=1; }
fi
expect_error "--plot /dev/null" "${ridge[@]}" --plot /dev/null
[ -c /dev/null ] || { echo "FAIL: /dev/null is gone"; fail=1; }
mkdir adir
expect_error "--plot directory" "${ridge[@]}" --plot adir
expect_error "--out directory" "${ridge[@]}" --out adir
ln -s a.csv link.csv
before=$(listing)
expect_error "plot a.csv --out a.csv" plot a.csv --out a.csv
expect_error "plot a.csv --out link-to-a.csv" plot a.csv --out link.csv
expect_error "plot a.csv --out ./a.csv" plot a.csv --out ./a.csv
expect_error "--out s.csv --plot s.csv" "${ridge[@]}" --out s.csv --plot s.csv
expect_error "--out a.csv --plot link-to-a.csv" "${ridge[@]}" --out a.csv --plot link.csv
expect_error "mc rmt --out x --plot x" mc rmt --n 64 --draws 2 --out m.csv --plot m.csv
same a.csv a.keep "refused outputs"
[ "$(listing)" = "$before" ] || { echo "FAIL: a refused command changed the directory:"; diff <(echo "$before") <(listing); fail=1; }
# merge: an --out that is one of the parts (or a link to it)
"$S" "${ridge[@]}" --shard 0/2 --out p0.csv && "$S" "${ridge[@]}" --shard 1/2 --out p1.csv \
  || { echo "FAIL: shard runs"; fail=1; }
cp p0.csv p0.keep
ln -s p0.csv p0link.csv
expect_error "merge --out a part" merge p0.csv p1.csv --out p0.csv
expect_error "merge --out a link to a part" merge p0.csv p1.csv --out p0link.csv
same p0.csv p0.keep "merge --out a part"
# A symbolic link to a regular file that is no input is written through (the link stays).
ln -s other.png olink.png && touch other.png
"$S" plot a.csv --out olink.png || { echo "FAIL: plot --out a link to another file"; fail=1; }
[ -L olink.png ] && [ -s other.png ] || { echo "FAIL: plot through a link"; fail=1; }

# ---- item 5: bounded inputs and outputs (each under a time limit: a hang is a failure)
bounded() {  # bounded "description" args...: exit 2 and one error line, within 20 s
  local what="$1"; shift
  timeout -s KILL 20 "$S" "$@" >out.txt 2>err.txt; local rc=$?
  { [ $rc -eq 2 ] && [ ! -s out.txt ] && [ "$(wc -l <err.txt)" -eq 1 ]; } \
    || { echo "FAIL ($what): rc=$rc $(head -c 200 err.txt)"; fail=1; }
}
mkfifo fifo.csv
bounded "--out FIFO" "${ridge[@]}" --out fifo.csv
bounded "--out FIFO --resume" "${ridge[@]}" --out fifo.csv --resume
bounded "--out /dev/zero --resume" "${ridge[@]}" --out /dev/zero --resume
bounded "merge /dev/urandom" merge /dev/urandom
bounded "merge FIFO" merge fifo.csv p1.csv
bounded "plot FIFO" plot fifo.csv --out f.png
bounded "plot /dev/zero" plot /dev/zero --out f.png
bounded "mc rmt --out FIFO" mc rmt --n 64 --draws 2 --out fifo.csv
[ -p fifo.csv ] || { echo "FAIL: the FIFO was replaced"; fail=1; }
# A gnuplot that never returns: stopped after --plot-timeout, exit 4, the CSV complete, the PNG
# there before untouched.
"$S" plot a.csv --out keep.png || { echo "FAIL: plot keep.png"; fail=1; }
cp keep.png keep.orig
printf '#!/bin/sh\nsleep 1000\n' >fake/gnuplot && chmod +x fake/gnuplot
start=$(date +%s)
PATH="$tmp/fake:$PATH" timeout -s KILL 30 "$S" "${ridge[@]}" --out late.csv --plot keep.png --plot-timeout 1 \
  >out.txt 2>err.txt; rc=$?
took=$(( $(date +%s) - start ))
{ [ $rc -eq 4 ] && [ "$(wc -l <err.txt)" -eq 1 ] && grep -q '^saddle: error: .*--plot-timeout.*CSV is complete' err.txt; } \
  || { echo "FAIL: hanging gnuplot: rc=$rc $(head -c 300 err.txt)"; fail=1; }
[ "$took" -lt 15 ] || { echo "FAIL: hanging gnuplot took $took s with --plot-timeout 1"; fail=1; }
grep -q '^# timing:' late.csv || { echo "FAIL: the CSV is not complete after a late plot failure"; fail=1; }
same keep.png keep.orig "failed --plot"
# A gnuplot that fails: exit 4, its message, the CSV complete on stdout.
printf '#!/bin/sh\necho "gnuplot broke" >&2\nexit 1\n' >fake/gnuplot
PATH="$tmp/fake:$PATH" "$S" "${ridge[@]}" --plot keep.png >out.txt 2>err.txt; rc=$?
{ [ $rc -eq 4 ] && grep -q 'gnuplot broke.*on stdout' err.txt && grep -q '^# timing:' out.txt; } \
  || { echo "FAIL: failing gnuplot: rc=$rc $(head -c 300 err.txt)"; fail=1; }
same keep.png keep.orig "failing gnuplot"
expect_error "--plot-timeout 0" "${ridge[@]}" --plot x.png --plot-timeout 0
expect_error "--plot-timeout -1" "${ridge[@]}" --plot x.png --plot-timeout -1
expect_error "plot --timeout nan" plot a.csv --out x.png --timeout nan

# ---- item 8: what can be checked is checked before computing (exit 2, nothing on stdout)
expect_error "--plot-diff foo:a-b" "${ridge[@]}" --plot x.png --plot-diff foo:a-b
expect_error "--plot-diff malformed" "${ridge[@]}" --plot x.png --plot-diff lambda
expect_error "--plot-x nosuch" "${ridge[@]}" --plot x.png --plot-x nosuch
expect_error "--plot-y nosuch" "${ridge[@]}" --plot x.png --plot-y test_error,nosuch
expect_error "--plot-z nosuch" "${ridge[@]}" --plot x.png --plot-z a-b
expect_error "--plot-by nosuch" "${ridge[@]}" --plot x.png --plot-by nosuch
expect_error "heat map of a 1-D sweep" "${curve[@]}" --plot x.png --plot-z test_error
# (through wrapper scripts that change the environment of saddle only)
printf '#!/bin/sh\nPATH=/nonexistent exec "%s" "$@"\n' "$S" >nognuplot.sh
printf '#!/bin/sh\nTMPDIR="%s" exec "%s" "$@"\n' "$tmp/no/such/dir" "$S" >notmp.sh
chmod +x nognuplot.sh notmp.sh
saddle="$S"
S="$tmp/nognuplot.sh" expect_error "gnuplot missing" "${ridge[@]}" --plot x.png
S="$tmp/notmp.sh" expect_error "TMPDIR missing" "${ridge[@]}" --plot x.png
S="$saddle"
expect_error "mc rmt --plot-timeout 0" mc rmt --n 64 --draws 2 --plot x.png --plot-timeout 0
[ -e x.png ] && { echo "FAIL: a refused --plot left x.png"; fail=1; }

# ---- item 5: --max-iter bounds the preint channel, SIGTERM stops it within seconds
preint=(slr erm --channel preint --points 64 --replicates 2 --lambda 0 --alpha 2 --activation linear
        --no-progress --threads 2)
start=$(date +%s)
timeout -s KILL $((120 * ${SADDLE_TIME_SCALE:-1})) "$S" "${preint[@]}" --max-iter 2 >out.txt 2>err.txt; rc=$?
took=$(( $(date +%s) - start ))
{ [ $rc -eq 0 ] && [ "$(grep -vc '^#' out.txt)" -eq 2 ]; } \
  || { echo "FAIL: preint --max-iter 2: rc=$rc $(head -c 200 err.txt)"; fail=1; }
limit=$((60 * ${SADDLE_TIME_SCALE:-1}))  # the sanitizer build runs about 10x slower
[ "$took" -lt "$limit" ] || { echo "FAIL: preint --max-iter 2 took $took s (unbounded retry?)"; fail=1; }
"$S" "${preint[@]}" >out.txt 2>err.txt & pid=$!
sleep 3
kill -TERM $pid 2>/dev/null
start=$(date +%s)
for _ in $(seq 150); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
took=$(( $(date +%s) - start ))
kill -0 $pid 2>/dev/null && { echo "FAIL: SIGTERM did not stop a preint point within 15 s"; kill -KILL $pid; fail=1; }
wait $pid; rc=$?
[ $rc -eq 130 ] || { echo "FAIL: SIGTERM during a preint point: rc=$rc after $took s $(head -c 200 err.txt)"; fail=1; }

left=$(ls -A "$TMPDIR")
[ -z "$left" ] || { echo "FAIL: temporary files left: $left"; fail=1; }
ls -A | grep -q 'saddle-' && { echo "FAIL: a temporary output file was left: $(ls -A | grep saddle-)"; fail=1; }
[ "$fail" -eq 0 ] && echo "file and output tests passed"
exit "$fail"
