#!/usr/bin/env bash
# Regenerates the phase diagrams of data/figures/ (issue 6). Run from the repository root after
# building (bash tools/build.sh). Each diagram is one command.
#   bash data/figures/make_figures.sh            compute both grids again (CSV + PNG)
#   bash data/figures/make_figures.sh --redraw   only the PNGs, from the committed CSVs (seconds)
set -euo pipefail
S=./build/saddle
T1="tanh attention minus ridge, |mu|^2 = 1, w_K = w_Q = e_1"
T2="test error, softmax minus linear attention (spiked SLR, L = 2, nu = 2)"
if [ "${1:-}" = --redraw ]; then
  $S plot data/figures/rmt_attention_minus_ridge.csv --out data/figures/rmt_attention_minus_ridge.png \
    --z error-error_ridge --x c --by gamma --title "$T1"
  $S plot data/figures/slr_softmax_minus_linear.csv --out data/figures/slr_softmax_minus_linear.png \
    --diff activation:softmax-linear --z test_error --x alpha --by lambda --title "$T2"
  exit 0
fi
# 100 x 100: tanh attention minus ridge regression over (c, gamma), RMT deterministic equivalent
# (docs/equations/rmt.md §5-§6), |mu|^2 = 1, aligned weights w_K = w_Q = e1. About 2 s on 2 cores.
$S rmt attention --c 0.05:4:100 --gamma 1e-6:10:100:log --snr 1 --activation tanh --wk 1,0,0 --wq 1,0,0 \
  --out data/figures/rmt_attention_minus_ridge.csv --plot data/figures/rmt_attention_minus_ridge.png \
  --plot-z error-error_ridge --plot-x c --plot-by gamma --plot-title "$T1" --no-progress
# 40 x 40: softmax minus linear attention, test error of ridge ERM over (alpha, lambda), replica
# fixed point (docs/equations/slr_replica.md §4, §7b), spiked SLR, L = 2, nu = 2, Delta = 0, informed start.
# QMC 2048 points x 4 shifts, no slow retry of failed replicates and no error-bar refinement
# (unconverged points are flagged converged=0, and points where either RS fixed point is unstable
# rs_stability=unstable; both are left blank (grey) in the figure). About 4 min on 2 cores.
$S slr erm --task spiked --L 2 --nu 2 --delta 0 --alpha 0.5:8:40 --lambda 0.01:1:40:log \
  --activation softmax,linear --points 2048 --replicates 4 --no-retry --target-se 0 \
  --out data/figures/slr_softmax_minus_linear.csv --plot data/figures/slr_softmax_minus_linear.png \
  --plot-diff activation:softmax-linear --plot-z test_error --plot-x alpha --plot-by lambda \
  --plot-title "$T2" --no-progress
