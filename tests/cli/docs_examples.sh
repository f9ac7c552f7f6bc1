#!/usr/bin/env bash
# The documentation's examples and numbers stay true: runs every `saddle ...` command example of
# README.md and docs/*.md (long ones in the smaller form the document names next to them), the
# Python examples when the module is built, and checks the numbers the text quotes against a run
# or a committed data file (tests/cli/docs_examples.py says how). About a minute on 2 cores.
# Usage: docs_examples.sh /path/to/saddle
set -u
exec python3 "$(dirname "$0")/docs_examples.py" "$1"
