#!/bin/bash
# CLI test of `saddle slr population` (docs/equations/slr_population.md §3, §7a): closed-form values in the output,
# and input validation (exit code 2, one-line error, nothing on stdout).
set -u
SADDLE="$1"
fail() { echo "FAIL: $*"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Linear attention, spiked (S10): E_lin(L=3, nu=2) = 6/(9 + 4) = 6/13; max nu=inf L=2: 1/2 - 1/(2 pi).
"$SADDLE" slr population --task spiked --L 3 --nu 2 --activation linear,softmax --no-progress \
  --out "$tmp/a.csv" || fail "run 1"
python3 - "$tmp/a.csv" <<'PY' || fail "values 1"
import csv, math, sys
rows = [r for r in csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith('#'))]
lin = [r for r in rows if r['activation'] == 'linear'][0]
assert abs(float(lin['risk']) - 6/13) < 1e-9, lin['risk']
assert abs(float(lin['m_k']) - math.sqrt(2)*2/3) < 1e-5, lin['m_k']
sm = [r for r in rows if r['activation'] == 'softmax'][0]
assert abs(float(sm['risk']) - float(sm['bayes_risk'])) < 1e-8
assert abs(float(sm['m_k']) - math.sqrt(2)) < 1e-3, sm['m_k']
for r in rows:
    for k in ('task','L','nu','activation','m_k','q_k','m_v','q_v','risk','bayes_risk'):
        assert k in r and r[k] not in ('', 'nan'), k
PY
"$SADDLE" slr population --task max --L 2 --nu inf --activation linear --no-progress \
  --out "$tmp/b.csv" || fail "run 2"
python3 - "$tmp/b.csv" <<'PY' || fail "values 2"
import csv, math, sys
rows = [r for r in csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith('#'))]
assert abs(float(rows[0]['risk']) - (0.5 - 0.5/math.pi)) < 1e-9, rows[0]['risk']
assert float(rows[0]['bayes_risk']) == 0.0
PY
# variable length, given m_k, Monte Carlo column
"$SADDLE" slr population --task spiked --L-dist 1,2,3 --nu 2 --activation linear --m-k 0.5 \
  --mc-samples 20000 --no-progress --out "$tmp/c.csv" || fail "run 3"
python3 - "$tmp/c.csv" <<'PY' || fail "values 3"
import csv, math, sys
rows = [r for r in csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith('#'))]
r = rows[0]
assert r['L'] == '1|2|3' and float(r['m_k']) == 0.5
# linear spiked, q = m^2: A = Lbar + 2 m sqrt(nu) + m^2 (Lbar + nu), B = 1 + m sqrt(nu); E = 1 - B^2/A
m, nu, Lb = 0.5, 2.0, 2.0
A = Lb + 2*m*math.sqrt(nu) + m*m*(Lb + nu); B = 1 + m*math.sqrt(nu)
assert abs(float(r['risk']) - (1 - B*B/A)) < 1e-10, r['risk']
assert abs(float(r['risk_mc']) - float(r['risk'])) < 4*float(r['risk_mc_se'])
PY

# the extended domain (nu up to 1e3, key overlaps up to 1e12 for softmax): finite values
"$SADDLE" slr population --task max,spiked --nu 150,1000 --L 3 --activation softmax,linear --no-progress \
  --out "$tmp/d.csv" || fail "run 4"
"$SADDLE" slr population --task spiked --m-k 200 --nu 3 --L 2 --activation softmax --no-progress \
  >>"$tmp/d.csv" || fail "run 5"
python3 - "$tmp/d.csv" <<'PY' || fail "values 4"
import csv, math, sys
rows = [r for r in csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith('#'))]
rows = [r for r in rows if r['task'] != 'task']  # the second run's header line
assert len(rows) >= 9, len(rows)
for r in rows:
    risk, bayes = float(r['risk']), float(r['bayes_risk'])
    assert math.isfinite(risk) and 0 <= bayes <= risk + 1e-9 and risk <= 1 + 1e-9, r
    if r['activation'] == 'softmax' and r['m_k'] and r['nu'] != '3':
        assert abs(risk - bayes) <= 1e-6 * max(1.0, bayes) + 1e-12, r   # softmax attains Bayes (Prop. 4.2)
PY
# bad input: exit code 2, an error line, no CSV on stdout
for args in "--task spiked --nu inf" "--nu -1" "--activation relu" "--L 0" "--L 2.5" \
            "--L 3 --L-dist 1,2" "--m-k -1" "--m-k nan" "--refine 100" \
            "--task max --nu 50,1001" "--task spiked --nu 1e6" "--nu 1e300" "--task max --nu 1e300" \
            "--m-k 1e6" "--activation erf --m-k 1e150" "--erf-b 1e300,-1e300" "--erf-b 11" \
            "--dq-k 1e7" "--m-k 100 --dq-k 1e5" "--task spiked --m-k 2e6 --nu 3" "--m-k-max 1e9" "--b-max 1e300" \
            "--mc-samples 2000000000" "--L 100000000 --mc-samples 1000"; do
  out=$("$SADDLE" slr population $args --no-progress 2>"$tmp/err"); rc=$?
  [ $rc -eq 2 ] || fail "rc=$rc for '$args'"
  [ -z "$out" ] || fail "stdout not empty for '$args'"
  grep -q "error" "$tmp/err" || fail "no error message for '$args'"
done
# an empty --L-dist is an error, not an absent option (issue 15)
out=$("$SADDLE" slr population --L-dist '' --no-progress 2>"$tmp/err"); rc=$?
[ $rc -eq 2 ] && [ -z "$out" ] && grep -q "^saddle: error: --L-dist" "$tmp/err" || fail "--L-dist ''"
echo "slr_population CLI tests passed"
