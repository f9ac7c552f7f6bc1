#!/usr/bin/env bash
# Table of bad invocations (issue 15 item 4), one per line, covering every subcommand: each must
# exit with code 2, write exactly one line on stderr starting "saddle: error:", and nothing on
# stdout. Includes every crash and silent acceptance reported in issue 15 (shard/merge indices,
# narrowing casts, NaN/inf results, unbounded sizes, empty values, malformed rows).
# Usage: bad_inputs.sh /path/to/saddle
set -u
S="$1"
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"

# Files the merge/plot/resume cases read.
"$S" rmt ridge --c 0.5,2 --gamma 0.1,1 --snr 1 --shard 0/2 --out s0.csv --no-progress
"$S" rmt ridge --c 0.5,2 --gamma 0.1,1 --snr 1 --shard 1/2 --out s1.csv --no-progress
"$S" ridge --alpha 1,2 --out ridge.csv --no-progress
for sh in 5/2 0/0 0/2000000000 1/4294967297 -1/2 x/2; do
  sed "s|# shard: 1/2|# shard: $sh|" s1.csv >"shard_$(echo "$sh" | tr '/' '_').csv"
done
sed 's|^2,0.1,|2,junk,0.1,|' s1.csv >malformed.csv
grep -v '^# timing' s1.csv >incomplete.csv
printf 'a,b\n1,2\n' >notours.csv
head -n 5 ridge.csv >resume_bad.csv; echo "1,2,3" >>resume_bad.csv; tail -n 1 ridge.csv >>resume_bad.csv
[ -s s0.csv ] && [ -s s1.csv ] && [ -s ridge.csv ] || { echo "FAIL: could not make the input files"; exit 1; }

n=0
while IFS= read -r line; do
  case "$line" in ''|'#'*) continue ;; esac
  eval "args=($line)"
  n=$((n + 1))
  timeout 120 "$S" "${args[@]}" >out.txt 2>err.txt
  rc=$?
  lines=$(wc -l <err.txt)
  if [ "$rc" -ne 2 ] || [ -s out.txt ] || [ "$lines" -ne 1 ] || ! head -n 1 err.txt | grep -q '^saddle: error:'; then
    echo "FAIL [$line]: rc=$rc stdout=$(wc -c <out.txt)B stderr_lines=$lines: $(head -c 300 err.txt)"
    fail=1
  fi
done <<'CASES'
# ridge (and the run options every grid command shares)
ridge --alpha 1e308
ridge --alpha 0
ridge --alpha nan
ridge --alpha ''
ridge --alpha 1:2:0
ridge --alpha 1:2:1e8
ridge --alpha 1,,2
ridge --lambda -1
ridge --delta inf
ridge --shard 0/0
ridge --shard 0/2147483648
ridge --shard 1/4294967297
ridge --shard 3/3
ridge --shard -1/2
ridge --shard 1/2/3
ridge --shard ' 0/2'
ridge --shard 0/100
ridge --out ''
ridge --resume
ridge --threads -1
ridge --mix 0
ridge --tol nan
ridge --max-iter 0
ridge --method newton2
ridge --cache ''
ridge --plot ''
ridge --plot-title ''
ridge --alpha 1,2 --out s1.csv --resume
ridge --alpha 1,2 --out resume_bad.csv --resume
ridge --bogus
# slr population
slr population --nu -1
slr population --L 0
slr population --L-dist ''
slr population --activation foo
slr population --task min
# slr erm
slr erm --alpha 1e308
slr erm --alpha 1e-320
slr erm --nu 1e300
slr erm --points 2000000000
slr erm --replicates 2000000000
slr erm --points 8
slr erm --lambda 1e5
slr erm --init sideways
slr erm --activation ''
# slr bayes
slr bayes --alpha 1e308
slr bayes --replicates 100000
slr bayes --points 2000000000
slr bayes --delta -1
# rmt hermite
rmt hermite --activation foo
rmt hermite --activation ''
rmt hermite --out ''
# rmt attention
rmt attention --wk 1,0
rmt attention --wk 1,0,0,0
rmt attention --wk ''
rmt attention --wq 1e300,0,0
rmt attention --wk 1e300,0,0 --wq 1e300,0,0
rmt attention --gamma 1e-300
rmt attention --gamma 1e300
rmt attention --c 1e-300
rmt attention --snr 1e300
rmt attention --nodes 100000
rmt attention --nodes 2
rmt attention --max-iter 0
rmt attention --tol 1
rmt attention --activation tanh,,relu
# rmt ridge
rmt ridge --gamma 1e-300
rmt ridge --gamma -1
rmt ridge --c 0
# mc rmt
mc rmt --snr 1e300
mc rmt --draws 1
mc rmt --draws 1000000
mc rmt --n 100000 --c 1
mc rmt --c 1e300
mc rmt --model foo
mc rmt --wk 1,0
mc rmt --n 64 --c 1 --gamma 1 --wk 1e3,1e3,1e3 --wq 1e3,-1e3,1e3 --draws 2 --activation exp
# mc slr
mc slr --task foo
mc slr --activation ''
mc slr --out ''
# validate
validate rmt --n 10
validate rmt --draws 2
validate rmt --out ''
validate slr --out ''
# merge
merge
merge missing.csv
merge s0.csv shard_5_2.csv
merge s0.csv shard_0_0.csv
merge s0.csv shard_0_2000000000.csv
merge s0.csv shard_1_4294967297.csv
merge s0.csv shard_-1_2.csv
merge s0.csv shard_x_2.csv
merge s0.csv malformed.csv
merge s0.csv incomplete.csv
merge s0.csv notours.csv
merge s0.csv s1.csv --out ''
merge s1.csv
merge s1.csv s1.csv
merge s0.csv ridge.csv
# plot
plot missing.csv --out x.png
plot notours.csv --out x.png
plot ridge.csv --out ''
plot ridge.csv --out no/such/dir/x.png
plot ridge.csv --out x.png --y nosuchcolumn
plot ridge.csv --out x.png --diff bad
plot ridge.csv
# top level
frobnicate
CASES
[ "$n" -ge 60 ] || { echo "FAIL: only $n cases (>= 60 wanted)"; fail=1; }
ls ./*.png >/dev/null 2>&1 && { echo "FAIL: a failed plot left a PNG: $(ls ./*.png)"; fail=1; }
[ "$fail" -eq 0 ] && echo "bad-input table passed ($n cases)"
exit "$fail"
