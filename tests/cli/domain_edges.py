#!/usr/bin/env python3
"""Every domain edge of every command, read from the README's domain table (issue 20), so that the
table and the code cannot drift apart: for each entry `--opt` in [lo, hi] (or (lo, hi], ...):

* just inside each end (the end itself when it is closed, the nearest value inside when it is open)
  the command must succeed: exit 0, and every value it writes finite (a row may say converged=0);
* just outside each end (lo - 1e-3 |lo| or the next integer, hi + 1e-3 |hi|) it must refuse:
  exit 2, exactly one line `saddle: error: ...` on stderr, nothing on stdout.

Sizes (points, replicates, draws, nodes, seeds, D, n) are tested inside at their lower end only (the
upper end is bounded but not cheap). The other options of a command take the cheap values of
BASE below. Usage: domain_edges.py SADDLE README.md
"""
import math
import os
import re
import subprocess
import sys
import tempfile

SADDLE, README = os.path.abspath(sys.argv[1]), sys.argv[2]

# Cheap settings per command; the option under test replaces its own entry.
BASE = {
    "ridge": ["--alpha", "1", "--lambda", "0.1", "--delta", "0.25"],
    "ridge-classifier": ["--alpha", "1", "--lambda", "0.1", "--flip", "0"],
    "slr erm": ["--alpha", "2", "--nu", "2", "--lambda", "0.1", "--delta", "0", "--L", "2",
                "--activation", "linear", "--points", "64", "--replicates", "2", "--target-se", "0"],
    "slr bayes": ["--alpha", "2", "--nu", "2", "--delta", "0", "--L", "2", "--points", "64",
                  "--replicates", "2", "--init", "informed"],
    "slr population": ["--task", "spiked", "--L", "2", "--nu", "2", "--activation", "linear"],
    "rmt attention": ["--c", "0.5", "--gamma", "0.1", "--snr", "1"],
    "rmt ridge": ["--c", "0.5", "--gamma", "0.1", "--snr", "1"],
    "mc rmt": ["--n", "64", "--c", "0.5", "--gamma", "0.1", "--snr", "1", "--draws", "2"],
    "mc slr": ["--D", "16", "--alpha", "1", "--seeds", "1", "--n-test", "100", "--L", "2"],
}
SIZES = {"points", "replicates", "draws", "nodes", "seeds", "D", "n", "n-test", "max-iter", "restarts"}
# Written values that are documented as infinite (rmt ridge at gamma = 0: m = q = inf for c <= 1).
ALLOWED_INF = {("rmt ridge", "m"), ("rmt ridge", "q")}


def parse_table(text):
    """(command, option, lo, lo_open, hi, hi_open, integer) from the domain table."""
    block = text.split("Domains of the main parameters", 1)[1].split("\n\n", 2)[1]
    out = []
    for line in block.splitlines():
        if not line.startswith("| `"):
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        commands = re.findall(r"`([a-z][a-z -]*)`", cells[0])
        for m in re.finditer(r"`--([a-zA-Z0-9-]+)` (?:0 or )?in ([\[(])([^,\]]+), ([^\])]+)([\])])( integer)?",
                             cells[1]):
            opt, lb, lo, hi, hb, integer = m.groups()
            for cmd in commands:
                out.append((cmd, opt, float(lo), lb == "(", float(hi), hb == ")", bool(integer)))
    return out


def run(cmd, opt, value):
    args = list(BASE.get(cmd, []))
    if "--" + opt in args:
        i = args.index("--" + opt)
        del args[i:i + 2]
    args += ["--" + opt, value]
    if not cmd.startswith("mc"):
        args.append("--no-progress")
    with tempfile.TemporaryDirectory() as d:
        try:
            p = subprocess.run([SADDLE] + cmd.split() + args, capture_output=True, text=True,
                               timeout=180, cwd=d)
        except subprocess.TimeoutExpired:
            return None, "", "timeout (180 s)", args
    return p.returncode, p.stdout, p.stderr, args


def text_of(v):
    return repr(v) if v != int(v) or abs(v) >= 1e16 else str(int(v))


def bad_values(cmd, out):
    """Non-finite written values (outside the documented ones)."""
    lines = [l for l in out.splitlines() if l and not l.startswith("#")]
    if not lines:
        return ["no rows"]
    cols = lines[0].split(",")
    bad = []
    for row in lines[1:]:
        for c, v in zip(cols, row.split(",")):
            low = v.strip().lower().lstrip("+-")
            if low.startswith("nan") or (low in ("inf", "infinity") and (cmd, c) not in ALLOWED_INF
                                          and c != "nu"):
                bad.append(f"{c}={v}")
    return bad


def main():
    with open(README) as f:
        entries = parse_table(f.read())
    if len(entries) < 20:
        print(f"FAIL: the README domain table gave only {len(entries)} entries")
        return 1
    fail = 0
    n = 0
    for cmd, opt, lo, lo_open, hi, hi_open, integer in entries:
        step = 1.0 if integer else None
        inside, outside = [], []
        for end, is_open, sign in ((lo, lo_open, -1), (hi, hi_open, +1)):
            if math.isinf(end):
                continue
            if integer:
                inside.append(end - sign if is_open else end)
                outside.append(end if is_open else end + sign * step)
            else:
                delta = max(abs(end) * 1e-3, 1e-300 if end == 0 else 0)
                if is_open:
                    inside.append(end * (1 - 1e-9) if end != 0 and sign > 0 else
                                  (end * (1 + 1e-9) if end != 0 else 1e-300))
                    outside.append(end + sign * delta if end != 0 or sign > 0 else -1e-300)
                else:
                    inside.append(end)
                    outside.append(end + sign * (delta if end != 0 else 1e-9))
        if opt in SIZES:
            inside = inside[:1]
        for v in inside:
            n += 1
            rc, out, err, args = run(cmd, opt, text_of(v))
            bad = bad_values(cmd, out) if rc == 0 else []
            if rc != 0 or bad:
                fail = 1
                print(f"FAIL inside: saddle {cmd} {' '.join(args)}: rc={rc} {err.strip()[:200]} {bad[:3]}")
        for v in outside:
            n += 1
            rc, out, err, args = run(cmd, opt, text_of(v))
            lines = err.splitlines()
            if rc != 2 or out or len(lines) != 1 or not lines[0].startswith("saddle: error:"):
                fail = 1
                print(f"FAIL outside: saddle {cmd} {' '.join(args)}: rc={rc} stdout={len(out)}B "
                      f"stderr={err.strip()[:200]!r}")
    print(f"domain edges: {len(entries)} table entries, {n} runs" + ("" if fail else ", all as documented"))
    return fail


sys.exit(main())
