# Shared by the command-line test scripts (sourced, not run): $S is the saddle binary, $tmp a
# scratch directory removed on exit, $fail the script's status, and expect_error, which checks
# the bad-input convention (exit code 2, exactly one line on stderr, nothing on stdout).
S="$1"
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

expect_error() {  # expect_error "description" args...
  local what="$1"; shift
  "$S" "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  local lines
  lines=$(wc -l <"$tmp/err")
  if [ "$rc" -ne 2 ] || [ -s "$tmp/out" ] || [ "$lines" -ne 1 ]; then
    echo "FAIL ($what): rc=$rc stdout=$(wc -c <"$tmp/out")B stderr_lines=$lines: $(head -c 300 "$tmp/err")"
    fail=1
  fi
}
