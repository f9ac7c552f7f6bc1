# Shared by the scripts that stop runs with signals (sourced, not run): $S is the saddle binary,
# $fail the script's status, $tmp a scratch directory removed on exit (a background run $pid is
# killed then), body prints a CSV without its timing line, now/elapsed measure seconds, and
# stop_after runs a command and signals it.
S="$1"
fail=0
tmp=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
body() { grep -v '^# timing:' "$1"; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }
# stop_after SECONDS SIGNAL ERRFILE ARGS...: runs saddle ARGS in the background (stderr to
# ERRFILE), sends SIGNAL after SECONDS and waits; sets rc (its exit code) and dt (seconds from the
# signal to its end).
stop_after() {
  local secs="$1" sig="$2" err="$3" t0
  shift 3
  "$S" "$@" 2>"$err" &
  pid=$!
  sleep "$secs"
  t0=$(now)
  kill "-$sig" "$pid"
  wait "$pid"
  rc=$?
  pid=""
  dt=$(elapsed "$t0")
}
