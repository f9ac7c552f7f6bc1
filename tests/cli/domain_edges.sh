#!/usr/bin/env bash
# Every domain edge of every command in the README's domain table, just inside (must work, finite
# output) and just outside (exit 2, one error line): tests/cli/domain_edges.py.
# Usage: domain_edges.sh /path/to/saddle
here=$(cd "$(dirname "$0")" && pwd)
exec python3 "$here/domain_edges.py" "$1" "$here/../../README.md"
