#!/usr/bin/env bash
# Stops, --resume of damaged files and MPI (issues 28 items 2, 3, 9 and 32 "Stops and progress"):
# - SIGINT/SIGTERM take effect at once (the chains in progress are cancelled): a run of long chains
#   stops within a few seconds, exits 130, keeps complete chains only (no timing line) and says how
#   many rows are left; --resume then equals an uninterrupted run;
# - --resume refuses (exit 2, naming the line, the file left alone) every damaged file: a bad
#   converged flag, nan in a converged row, two rows swapped, one chain's rows in another's place,
#   a file concatenated with itself, a long file of one repeated row;
# - validate keeps the complete cases on SIGTERM (a file marked interrupted, exit 130), also in
#   the middle of one large draw (within 2 s);
# - two processes creating the same new --cache directory at once both succeed;
# - under mpirun: one table (rmt hermite, merge), --cache NEWDIR, a SIGTERM'd run never leaves a
#   file with the timing line unless it is complete, and --resume then equals a clean run.
# Usage: resume_mpi_stops.sh /path/to/saddle
set -u
source "$(dirname "$0")/lib/signals.sh"
ndata() { grep -vc '^#' "$1" 2>/dev/null || echo 0; }  # data rows + the column header

# ---- a stop takes effect at once ----
# The README's L = 2 example: two chains of 16 points, over 10 s on 2 threads.
LONG=(slr erm --task spiked --L 2 --nu 2 --lambda 0.1 --alpha 0.5:8:16 --activation softmax,linear --threads 2
      --no-progress)
stop_after 2 INT "$tmp/long.err" "${LONG[@]}" --out "$tmp/long.csv"
[ "$rc" -eq 130 ] || { echo "FAIL: SIGINT during a chain: exit $rc (130 expected): $(cat "$tmp/long.err")"; fail=1; }
awk -v d="$dt" 'BEGIN { exit !(d < 5) }' || { echo "FAIL: SIGINT took ${dt} s to stop (a chain in progress must be cancelled)"; fail=1; }
grep -q '^# timing:' "$tmp/long.csv" && { echo "FAIL: an interrupted run wrote the timing line"; fail=1; }
grep -q 'rows left' "$tmp/long.err" || { echo "FAIL: the interrupt message does not say what is left: $(cat "$tmp/long.err")"; fail=1; }
echo "note: SIGINT 2 s into slr erm stopped in ${dt} s"

# SIGTERM on validate: the complete cases are kept, the file says it was interrupted.
stop_after 2 TERM "$tmp/v.err" validate rmt --quick --threads 2 --out "$tmp/v.csv"
if [ "$rc" -eq 130 ]; then
  [ -f "$tmp/v.csv" ] || { echo "FAIL: validate after SIGTERM wrote no file"; fail=1; }
  grep -q '^# interrupted:' "$tmp/v.csv" || { echo "FAIL: an interrupted validate file is not marked"; fail=1; }
  grep -q '^# summary:' "$tmp/v.csv" && { echo "FAIL: an interrupted validate file has a summary"; fail=1; }
  awk -v d="$dt" 'BEGIN { exit !(d < 5) }' || { echo "FAIL: validate took ${dt} s to stop"; fail=1; }
else
  echo "FAIL: validate rmt after SIGTERM: exit $rc (130 expected): $(cat "$tmp/v.err")"; fail=1
fi

# ... also in the middle of one large draw (n = 2500, c = 2: products and decompositions of several
# seconds each, cut into blocks that poll; the watchdog ends what still cannot poll after 1.5 s):
# before, the draw in progress was finished first (about 30 s).
stop_after 4 TERM "$tmp/v2.err" validate rmt --n 2500 --draws 4 --threads 2 --out "$tmp/v2.csv"
[ "$rc" -eq 130 ] || { echo "FAIL: validate rmt --n 2500 after SIGTERM: exit $rc (130 expected): $(cat "$tmp/v2.err")"; fail=1; }
grep -q '^# interrupted:' "$tmp/v2.csv" || { echo "FAIL: an interrupted validate file (large draw) is not marked"; fail=1; }
awk -v d="$dt" -v s="${SADDLE_TIME_SCALE:-1}" 'BEGIN { exit !(d < 2.5 * (s > 1 ? 2 : 1)) }' ||
  { echo "FAIL: validate rmt --n 2500 took ${dt} s to stop (promised: within 2 s)"; fail=1; }
echo "note: SIGTERM 4 s into validate rmt --n 2500 stopped in ${dt} s"

# SIGTERM on figures: the run in progress is stopped (no child left), the temporary directory
# removed, exit 130 with the panels left named.
mkdir -p "$tmp/ftmp"
TMPDIR="$tmp/ftmp" stop_after 2 TERM "$tmp/f.err" figures --only slr_fig1 --out "$tmp/fig"
[ "$rc" -eq 130 ] || { echo "FAIL: figures after SIGTERM: exit $rc (130 expected): $(cat "$tmp/f.err")"; fail=1; }
awk -v d="$dt" 'BEGIN { exit !(d < 5) }' || { echo "FAIL: figures took ${dt} s to stop"; fail=1; }
grep -q 'not drawn: slr_fig1' "$tmp/f.err" || { echo "FAIL: figures' interrupt message: $(cat "$tmp/f.err")"; fail=1; }
[ -z "$(ls -A "$tmp/ftmp")" ] || { echo "FAIL: figures left its temporary directory: $(ls "$tmp/ftmp")"; fail=1; }
sleep 0.5
for c in /proc/[0-9]*/cmdline; do
  if { tr "\0" " " <"$c"; } 2>/dev/null | grep -q -- "--out $tmp/ftmp"; then echo "FAIL: a run of figures outlived it"; fail=1; break; fi
done

# ---- --resume refuses damaged rows ----
ARGS=(ridge --alpha 0.5:4:6 --lambda 0.01:1:4:log --no-progress --threads 1)
"$S" "${ARGS[@]}" --out "$tmp/ref.csv" || { echo "FAIL: reference run"; exit 1; }
nh=$(grep -c '^#' "$tmp/ref.csv")  # header lines (+ the timing line)
head -n -1 "$tmp/ref.csv" >"$tmp/partial.csv"  # no timing line: an interrupted run's file
first=$((nh))  # line number of the first data row (the column header is line nh)
first=$((first + 1))
conv=$(head -n "$((nh))" "$tmp/ref.csv" | tail -1 | tr ',' '\n' | grep -n '^converged$' | cut -d: -f1)
m=$(head -n "$((nh))" "$tmp/ref.csv" | tail -1 | tr ',' '\n' | grep -n '^m$' | cut -d: -f1)
refuse() {  # $1: what, $2: file; --resume must exit 2, name a line and leave the file alone
  cp "$2" "$tmp/before.csv"
  "$S" "${ARGS[@]}" --out "$2" --resume >/dev/null 2>"$tmp/err"
  local rc=$?
  [ "$rc" -eq 2 ] || { echo "FAIL: --resume accepted $1 (exit $rc)"; fail=1; }
  grep -q 'line [0-9]' "$tmp/err" || { echo "FAIL: --resume on $1 does not name the line: $(cat "$tmp/err")"; fail=1; }
  [ "$(wc -l <"$tmp/err")" -eq 1 ] || { echo "FAIL: --resume on $1: more than one line on stderr"; fail=1; }
  cmp -s "$2" "$tmp/before.csv" || { echo "FAIL: --resume on $1 changed the file"; fail=1; }
}
awk -F, -v OFS=, -v l="$((first + 2))" -v c="$conv" 'NR == l { $c = "abc" } { print }' "$tmp/partial.csv" >"$tmp/d1.csv"
refuse "converged=abc" "$tmp/d1.csv"
awk -F, -v OFS=, -v l="$((first + 2))" -v c="$conv" -v m="$m" 'NR == l { $m = "nan"; $c = 1 } { print }' \
  "$tmp/partial.csv" >"$tmp/d2.csv"
refuse "m=nan with converged=1" "$tmp/d2.csv"
awk -v l="$((first + 1))" 'NR == l { keep = $0; next } NR == l + 1 { print; print keep; next } { print }' \
  "$tmp/partial.csv" >"$tmp/d3.csv"
refuse "two rows swapped" "$tmp/d3.csv"
# Chain 1 (rows 7..12: 6 alphas per chain) replaced by chain 0's rows.
awk -v f="$first" 'NR >= f && NR < f + 6 { c0[NR - f] = $0 } NR >= f + 6 && NR < f + 12 { print c0[NR - f - 6]; next } { print }' \
  "$tmp/partial.csv" >"$tmp/d4.csv"
refuse "one chain's rows replaced by another's" "$tmp/d4.csv"
cat "$tmp/ref.csv" "$tmp/ref.csv" >"$tmp/d5.csv"
refuse "a file concatenated with itself" "$tmp/d5.csv"
{ head -n "$nh" "$tmp/ref.csv"; row=$(sed -n "${first}p" "$tmp/ref.csv"); yes "$row" | head -n 200000; } >"$tmp/d6.csv"
t0=$(now)
refuse "a long file of one repeated row" "$tmp/d6.csv"
echo "note: refusing a $(du -k "$tmp/d6.csv" | cut -f1) kB file of one repeated row took $(elapsed "$t0") s"
# The intact partial file resumes to the clean result.
cp "$tmp/partial.csv" "$tmp/ok.csv"
"$S" "${ARGS[@]}" --out "$tmp/ok.csv" --resume || { echo "FAIL: --resume of an intact partial file"; fail=1; }
cmp -s <(body "$tmp/ref.csv") <(body "$tmp/ok.csv") || { echo "FAIL: resumed file differs from the clean run"; fail=1; }

# ---- two processes create the same new --cache directory at once ----
for i in 1 2 3; do
  "$S" "${ARGS[@]}" --cache "$tmp/cache$i" --out "$tmp/ca$i.csv" 2>"$tmp/ca$i.err" &
  p1=$!
  "$S" "${ARGS[@]}" --cache "$tmp/cache$i" --out "$tmp/cb$i.csv" 2>"$tmp/cb$i.err"
  rb=$?
  wait "$p1"
  ra=$?
  [ "$ra" -eq 0 ] && [ "$rb" -eq 0 ] || { echo "FAIL: concurrent --cache NEWDIR: $(cat "$tmp/ca$i.err" "$tmp/cb$i.err")"; fail=1; break; }
done

# ---- MPI ----
if "$S" --version | grep -q 'MPI: yes' && command -v mpirun >/dev/null; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_plm_rsh_agent=
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0"
  MPI=(mpirun --oversubscribe -np 2)
  n=$("${MPI[@]}" "$S" rmt hermite --activation tanh,relu 2>/dev/null | grep -c '^tanh,')
  [ "$n" -eq 1 ] || { echo "FAIL: mpirun rmt hermite printed its table $n times"; fail=1; }
  "$S" ridge --alpha 0.5:4:6 --lambda 0.01:1:4:log --no-progress --shard 0/2 --out "$tmp/s0.csv"
  "$S" ridge --alpha 0.5:4:6 --lambda 0.01:1:4:log --no-progress --shard 1/2 --out "$tmp/s1.csv"
  n=$("${MPI[@]}" "$S" merge "$tmp/s0.csv" "$tmp/s1.csv" 2>/dev/null | grep -c '^# timing:')
  [ "$n" -eq 1 ] || { echo "FAIL: mpirun merge printed its table $n times"; fail=1; }
  "${MPI[@]}" "$S" "${ARGS[@]}" --cache "$tmp/mpicache" --out "$tmp/mc.csv" >"$tmp/mc.log" 2>&1 \
    || { echo "FAIL: mpirun --cache NEWDIR: $(tail -3 "$tmp/mc.log")"; fail=1; }
  cmp -s <(body "$tmp/ref.csv") <(body "$tmp/mc.csv") || { echo "FAIL: mpirun --cache output differs"; fail=1; }
  # A damaged file is refused under mpirun too (rank 0 reads it; every rank exits 2).
  "${MPI[@]}" "$S" "${ARGS[@]}" --out "$tmp/d3.csv" --resume >/dev/null 2>"$tmp/mpi_d3.err"
  rc=$?
  [ "$rc" -eq 2 ] || { echo "FAIL: mpirun --resume of a damaged file: exit $rc (2 expected)"; fail=1; }
  # SIGTERM to mpirun: never a file with the timing line unless complete; --resume completes it.
  # 4 chains of 6 points, about 6 s on one process: SIGTERM after 1.5 s stops it midway.
  # Under the sanitizer build (SADDLE_TIME_SCALE > 1, about 15x slower) a quarter of the points
  # still runs far longer than 1.5 s; the four runs at 2048 points took 15 of the pass's 42 min.
  mpoints=2048
  [ "${SADDLE_TIME_SCALE:-1}" -gt 1 ] && mpoints=512
  MARGS=(slr erm --L 2 --nu 2 --lambda 0.1,0.2 --alpha 0.5:8:6 --activation softmax,linear --points "$mpoints"
         --replicates 4 --threads 1 --no-progress)
  "$S" "${MARGS[@]}" --out "$tmp/mref.csv" 2>/dev/null || { echo "FAIL: reference run (slr erm)"; fail=1; }
  total=$(($(ndata "$tmp/mref.csv") - 1))
  # TERM, INT: to mpirun (its own exit code, 1 in OpenMPI 4.1); RANKS: SIGTERM to the rank
  # processes (as srun or scancel --signal deliver it): the ranks' 130 is mpirun's exit code.
  for sig in TERM INT RANKS; do
    "${MPI[@]}" "$S" "${MARGS[@]}" --out "$tmp/m$sig.csv" >"$tmp/m$sig.log" 2>&1 &
    pid=$!
    sleep 1.5
    if [ "$sig" = RANKS ]; then
      # A rank's stop handler is installed when its grid starts, after the MPI start-up (slow
      # under the sanitizers: a SIGTERM before it ends the rank by the default action, exit
      # 143): wait until every rank catches SIGTERM (bit 15 of SigCgt), at most 30 s.
      exe=$(readlink -f "$S")
      for _ in $(seq 1 300); do
        ready=0
        for d in /proc/[0-9]*; do
          [ "$(readlink "$d/exe" 2>/dev/null)" = "$exe" ] || continue
          tr '\0' ' ' <"$d/cmdline" 2>/dev/null | grep -q -- "m$sig.csv" || continue
          m=$(awk '/^SigCgt:/ {print $2}' "$d/status" 2>/dev/null)
          if [ -n "$m" ] && [ $(((16#$m >> 14) & 1)) -eq 1 ]; then ready=$((ready + 1)); else ready=-99; fi
        done
        [ "$ready" -ge 2 ] && break
        sleep 0.1
      done
      kill -TERM $(cat /proc/"$pid"/task/*/children) 2>/dev/null
    else
      kill "-$sig" "$pid" 2>/dev/null
    fi
    wait "$pid"
    rc=$?
    pid=""
    n=$(($(ndata "$tmp/m$sig.csv") - 1))
    if grep -q '^# timing:' "$tmp/m$sig.csv"; then
      [ "$n" -eq "$total" ] || { echo "FAIL: mpirun SIG$sig: timing line with $n of $total rows"; fail=1; }
      echo "note: mpirun SIG$sig came after the run had finished"
    else
      [ "$rc" -ne 0 ] || { echo "FAIL: mpirun SIG$sig: exit 0 without the timing line"; fail=1; }
      [ "$sig" != RANKS ] || [ "$rc" -eq 130 ] || { echo "FAIL: SIGTERM to the ranks: mpirun exit $rc (130 expected)"; fail=1; }
      [ $((n % 6)) -eq 0 ] && [ "$n" -lt "$total" ] || { echo "FAIL: mpirun SIG$sig: $n rows (whole chains of 6 expected)"; fail=1; }
    fi
    "${MPI[@]}" "$S" "${MARGS[@]}" --out "$tmp/m$sig.csv" --resume >"$tmp/m$sig.log2" 2>&1 \
      || { echo "FAIL: mpirun --resume after SIG$sig: $(tail -3 "$tmp/m$sig.log2")"; fail=1; }
    cmp -s <(body "$tmp/mref.csv") <(body "$tmp/m$sig.csv") || { echo "FAIL: mpirun SIG$sig + --resume differs from a clean run"; fail=1; }
  done
else
  echo "note: MPI not compiled in; MPI tests skipped"
fi
[ "$fail" -eq 0 ] && echo "resume/MPI/stop tests passed"
exit "$fail"
