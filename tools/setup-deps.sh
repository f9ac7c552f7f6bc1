#!/usr/bin/env bash
# Installs the Debian 12 packages saddle needs, if any is missing (apt-get as root; no sudo).
# Nothing is downloaded at build or run time.
set -euo pipefail
# Every program the tests call is here too: python3 (tests/cli), clang and its libFuzzer runtime
# (tests/fuzz), numpy/pandas/pytest/pybind11/matplotlib (the Python module and its tests), and
# locales (the locale sources under /usr/share/i18n that the decimal-comma test compiles with
# localedef; libc-bin has localedef but not the sources).
PKGS=(g++ cmake make libboost-dev libgsl-dev libceres-dev libeigen3-dev catch2 libcli11-dev
      libbenchmark-dev libomp-dev gnuplot-nox libopenmpi-dev openmpi-bin
      python3 python3-dev python3-numpy python3-pandas python3-pytest pybind11-dev
      python3-matplotlib clang libclang-rt-14-dev locales)
missing=()
for p in "${PKGS[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  if [ "$(id -u)" -ne 0 ]; then
    echo "setup: missing packages (${missing[*]}) and not root: run as root" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
fi
