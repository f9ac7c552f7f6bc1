#!/usr/bin/env bash
# The main job on its defaults: install deps if missing, build in Release, compute a real theory
# curve to CSV and print a short table: population risk of softmax vs linear attention against
# the Bayes risk, spiked SLR, L = 3, as the signal strength nu grows (docs/equations/slr_population.md §3, §7a).
# Output: out/main_curve.csv (or the path given as $1), and out/main_curve.png. Also builds and
# installs the Python module `saddle` (import saddle from any directory; docs/python.md).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/build.sh --target saddle saddle_python
# The Python module: installed where Debian's python3 finds it (docs/python.md).
cmake --install build --component python >/dev/null
out="${1:-out/main_curve.csv}"
mkdir -p "$(dirname "$out")"
./build/saddle slr population --task spiked --L 3 --nu 0.5:8:16 --activation softmax,linear \
  --out "$out" --plot "${out%.csv}.png" --no-progress
echo "Spiked single-location regression, L = 3: population risk (excess) of the best softmax and"
echo "linear attention, and the Bayes risk, against the signal strength nu"
grep -v '^#' "$out" | awk -F, 'NR==1 {for (i=1;i<=NF;i++) c[$i]=i; next}
  {r[$c["nu"] "," $c["activation"]] = $c["risk"]; b[$c["nu"]] = $c["bayes_risk"]; if (!($c["nu"] in seen)) {seen[$c["nu"]]=1; order[n++]=$c["nu"]}}
  END {printf "%6s %10s %10s %10s\n", "nu", "softmax", "linear", "Bayes";
       for (i=0;i<n;i++) {v=order[i]; printf "%6.3g %10.6f %10.6f %10.6f\n", v, r[v ",softmax"], r[v ",linear"], b[v]}}'
echo "CSV written to $out (figure: ${out%.csv}.png)"
