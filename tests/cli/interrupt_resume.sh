#!/usr/bin/env bash
# Interrupted runs lose nothing (issue 15 item 6): a 2-D sweep (24 x 2 chains of 40 points) is
# killed halfway with SIGKILL and resumed with --resume; another is stopped with SIGINT, which
# must exit 130 after writing only complete chains (a well-formed file without the timing line)
# and is resumed too; so is one stopped with SIGTERM (a batch system's time limit). All results must equal an uninterrupted run, timing lines aside.
# Usage: interrupt_resume.sh /path/to/saddle
set -u
source "$(dirname "$0")/lib/signals.sh"
ARGS=(rmt attention --c 0.1:4:24 --gamma 1e-6:1:40:log --snr 0,1 --nodes 400 --threads 1 --no-progress)
rows() { grep -vc '^#' "$1" 2>/dev/null || echo 0; }  # data rows + the column header

"$S" "${ARGS[@]}" --out "$tmp/ref.csv" || { echo "FAIL: reference run"; exit 1; }
total=$(($(rows "$tmp/ref.csv") - 1))
[ "$total" -eq 1920 ] || { echo "FAIL: reference has $total rows, 1920 expected"; fail=1; }

# Starts the sweep writing $1, waits until at least 400 rows are written, sends signal $2.
# Sets $pid and $early (1 if the run ended before the signal could be sent).
interrupt() {
  early=0
  "$S" "${ARGS[@]}" --out "$1" 2>"$1.err" &
  pid=$!
  for _ in $(seq 1 6000); do
    [ "$(rows "$1")" -gt 400 ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.01
  done
  kill -0 "$pid" 2>/dev/null || early=1
  kill "-$2" "$pid" 2>/dev/null
}

# SIGKILL halfway, then --resume.
interrupt "$tmp/k.csv" KILL
wait "$pid" 2>/dev/null
pid=""
if [ "$early" -eq 1 ]; then
  echo "note: the run finished before SIGKILL; resuming a complete file instead"
else
  grep -q '^# timing:' "$tmp/k.csv" && { echo "FAIL: a killed run wrote the timing line"; fail=1; }
fi
"$S" "${ARGS[@]}" --out "$tmp/k.csv" --resume || { echo "FAIL: resume after SIGKILL"; fail=1; }
cmp -s <(body "$tmp/ref.csv") <(body "$tmp/k.csv") || { echo "FAIL: resumed after SIGKILL differs from an uninterrupted run"; fail=1; }

# SIGINT halfway: exit 130, complete chains only, one line on stderr; then --resume.
interrupt "$tmp/i.csv" INT
wait "$pid"
rc=$?
pid=""
if [ "$early" -eq 1 ]; then
  echo "note: the run finished before SIGINT"
else
  [ "$rc" -eq 130 ] || { echo "FAIL: SIGINT exit code $rc (130 expected)"; fail=1; }
  [ "$(wc -l <"$tmp/i.csv.err")" -eq 1 ] || { echo "FAIL: SIGINT stderr: $(cat "$tmp/i.csv.err")"; fail=1; }
  grep -q '^# timing:' "$tmp/i.csv" && { echo "FAIL: an interrupted run wrote the timing line"; fail=1; }
  [ "$(tail -c 1 "$tmp/i.csv" | od -An -c | tr -d ' ')" = '\n' ] || { echo "FAIL: torn last line after SIGINT"; fail=1; }
  n=$(($(rows "$tmp/i.csv") - 1))
  [ $((n % 40)) -eq 0 ] && [ "$n" -gt 0 ] && [ "$n" -lt 1920 ] \
    || { echo "FAIL: SIGINT left $n rows (a positive multiple of 40 below 1920 expected)"; fail=1; }
  # Well formed: the interrupted file is a prefix of the uninterrupted one.
  cmp -s "$tmp/i.csv" <(head -n "$(wc -l <"$tmp/i.csv")" "$tmp/ref.csv") \
    || { echo "FAIL: the interrupted file is not a prefix of the full result"; fail=1; }
fi
"$S" "${ARGS[@]}" --out "$tmp/i.csv" --resume || { echo "FAIL: resume after SIGINT"; fail=1; }
cmp -s <(body "$tmp/ref.csv") <(body "$tmp/i.csv") || { echo "FAIL: resumed after SIGINT differs from an uninterrupted run"; fail=1; }
# SIGTERM (a batch system's time limit) halfway: the same guarantee as SIGINT.
interrupt "$tmp/t.csv" TERM
wait "$pid"
rc=$?
pid=""
if [ "$early" -eq 1 ]; then
  echo "note: the run finished before SIGTERM"
else
  [ "$rc" -eq 130 ] || { echo "FAIL: SIGTERM exit code $rc (130 expected)"; fail=1; }
  grep -q '^# timing:' "$tmp/t.csv" && { echo "FAIL: a terminated run wrote the timing line"; fail=1; }
  n=$(($(rows "$tmp/t.csv") - 1))
  [ $((n % 40)) -eq 0 ] && [ "$n" -gt 0 ] || { echo "FAIL: SIGTERM left $n rows (a positive multiple of 40)"; fail=1; }
fi
"$S" "${ARGS[@]}" --out "$tmp/t.csv" --resume || { echo "FAIL: resume after SIGTERM"; fail=1; }
cmp -s <(body "$tmp/ref.csv") <(body "$tmp/t.csv") || { echo "FAIL: resumed after SIGTERM differs from an uninterrupted run"; fail=1; }
[ "$fail" -eq 0 ] && echo "interrupt/resume tests passed"
exit "$fail"
