#!/usr/bin/env python3
"""Runs the command examples of README.md and docs/*.md and checks the numbers their text quotes.

Usage: docs_examples.py SADDLE_BINARY [--list] [--only FILE]

Examples. Every line of a fenced code block (or a 4-space indented block) that starts with
`./build/saddle` or `saddle` is a command example (a trailing `\\` continues it on the next line);
it is run with the given binary in a scratch directory (one per document, so a later example can
read what an earlier one wrote) and must exit 0, or the code its trailing comment names as
`(exit N)`. A ```python block of README.md and docs/python.md runs too when the module `saddle`
can be imported from the build tree. Long examples are run in a smaller form, said in the
document itself next to the block, in an HTML comment the renderer hides:

    <!-- docs-test: "OLD" -> "NEW" -->          the next block runs with the text OLD replaced by NEW
    <!-- docs-test: "TEXT" skip: REASON -->     the command of the next block holding TEXT is not run

A directive that matches nothing in its block is an error, so they cannot outlive the example.

A block right after a line ending in "Runs:" (docs/figures.md) is the record of what made a
committed panel; it is compared with that panel CSV's '# run:' lines instead of being run.

Numbers. check_numbers below ties quoted numbers to a pattern of the document text and to an
independent source: a command run here, or a committed data file. A pattern that no longer
matches the text is a failure too (update the check with the text).
"""
import csv
import glob
import io
import math
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DIRECTIVE = re.compile(r'<!--\s*docs-test:\s*"((?:[^"\\]|\\.)*)"\s*(?:->\s*"((?:[^"\\]|\\.)*)"|skip:\s*(.*?))\s*-->')
# seconds per example (the whole script is meant to take a few minutes); the sanitizer build
# (CMakeLists.txt) sets SADDLE_TIME_SCALE, as every command runs several times slower there
TIMEOUT = 120 * float(os.environ.get("SADDLE_TIME_SCALE", "1"))

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL: " + msg, flush=True)


def docs():
    return ["README.md"] + sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "docs", "*.md")))


def blocks(path):
    """(kind, first line number, text, directives) of each code block of a markdown file."""
    lines = open(os.path.join(ROOT, path), encoding="utf-8").read().split("\n")
    out, pending = [], []
    i = 0
    while i < len(lines):
        line = lines[i]
        for m in DIRECTIVE.finditer(line):
            old = m.group(1).replace('\\"', '"')
            new = m.group(2).replace('\\"', '"') if m.group(2) is not None else None
            pending.append((old, new, m.group(3), i + 1))
        fence = re.match(r"^\s*```\s*([A-Za-z]*)", line)
        if fence:
            kind = fence.group(1) or "sh"
            before = next((l for l in reversed(lines[:i]) if l.strip()), "")
            if before.rstrip().endswith("Runs:"):  # docs/figures.md: the runs a panel's CSV records
                kind = "record"  # (compared with the CSV's '# run:' lines by check_committed)
            j = i + 1
            while j < len(lines) and not re.match(r"^\s*```", lines[j]):
                j += 1
            out.append((kind, i + 2, "\n".join(lines[i + 1:j]), pending))
            pending = []
            i = j + 1
            continue
        if line.startswith("    ") and (i == 0 or not lines[i - 1].strip()) and line.strip().startswith("saddle "):
            j = i
            while j < len(lines) and lines[j].startswith("    "):
                j += 1
            out.append(("sh", i + 1, "\n".join(l[4:] for l in lines[i:j]), pending))
            pending = []
            i = j
            continue
        i += 1
    if pending:
        fail("%s:%d: a docs-test directive with no code block after it" % (path, pending[0][3]))
    return out


def commands(text):
    """The saddle commands of a shell block: (command text, expected exit code)."""
    out, cur = [], ""
    for line in text.split("\n"):
        s = line.strip()
        if cur:
            cur += " " + s
        elif re.match(r"^(\./build/)?saddle\s", s):
            cur = s
        else:
            continue
        if cur.endswith("\\"):
            cur = cur[:-1].rstrip()
            continue
        m = re.search(r"#.*\(exit (\d+)\)", cur)
        out.append((cur, int(m.group(1)) if m else 0))
        cur = ""
    return out


def apply_directives(path, line, text, directives, is_python):
    """The block's text with its replacements made, and the skip rules [(text, reason)]."""
    skips = []
    for old, new, reason, at in directives:
        if old not in text:
            fail("%s:%d: docs-test directive \"%s\" matches nothing in the block at line %d" % (path, at, old, line))
            continue
        if new is not None:
            text = text.replace(old, new)
        else:
            skips.append((old, reason))
    return text, skips


def run_command(path, cmd, expect, cwd, saddle):
    argv = shlex.split(cmd, comments=True)
    argv[0] = saddle
    t0 = time.time()
    try:
        p = subprocess.run(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        fail("%s: `%s` ran past %d s" % (path, cmd, TIMEOUT))
        return None
    dt = time.time() - t0
    print("  %5.1f s  rc=%d  %s" % (dt, p.returncode, cmd[:150]), flush=True)
    if p.returncode != expect:
        fail("%s: `%s` exited %d (expected %d): %s" % (path, cmd, p.returncode, expect,
                                                        p.stderr.decode(errors="replace").strip()[-400:]))
        return None
    return p.stdout.decode(errors="replace")


def run_examples(saddle, only=None):
    python_dir = os.path.join(os.path.dirname(os.path.abspath(saddle)), "python")
    env = dict(os.environ, PYTHONPATH=python_dir + os.pathsep + os.environ.get("PYTHONPATH", ""),
               SADDLE_CLI=os.path.abspath(saddle), MPLBACKEND="Agg")
    # The interpreter the module was built for: this one, or Debian's (tools/setup-deps.sh).
    python = next((p for p in [sys.executable, "/usr/bin/python3"]
                   if os.path.exists(p) and subprocess.run([p, "-c", "import saddle, pandas, matplotlib"], env=env,
                                                            stdout=subprocess.DEVNULL,
                                                            stderr=subprocess.DEVNULL).returncode == 0), None)
    have_python = python is not None
    count = 0
    for path in docs():
        if only and path != only:
            continue
        cwd = tempfile.mkdtemp(prefix="saddle_docs_")
        print(path, flush=True)
        for kind, line, text, directives in blocks(path):
            if kind in ("sh", "bash", "") and "saddle" in text:
                text, skips = apply_directives(path, line, text, directives, False)
                for cmd, expect in commands(text):
                    reason = next((r for s, r in skips if s in cmd), None)
                    if reason is not None:
                        print("  skip     %s  (%s)" % (cmd[:110], reason), flush=True)
                        continue
                    count += 1
                    run_command(path, cmd, expect, cwd, saddle)
            elif kind == "python" and "import" in text and "saddle" in text:
                text, skips = apply_directives(path, line, text, directives, True)
                if skips:
                    print("  skip     python block at line %d  (%s)" % (line, skips[0][1]), flush=True)
                    continue
                if not have_python:
                    print("  skip     python block at line %d (module saddle not built)" % line, flush=True)
                    continue
                count += 1
                t0 = time.time()
                p = subprocess.run([python, "-c", text], cwd=cwd, env=env, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, timeout=TIMEOUT)
                print("  %5.1f s  rc=%d  python block at line %d" % (time.time() - t0, p.returncode, line), flush=True)
                if p.returncode != 0:
                    fail("%s:%d: the python example failed: %s" % (path, line,
                                                                    p.stderr.decode(errors="replace")[-600:]))
            elif directives:
                fail("%s:%d: docs-test directive before a block that is not run" % (path, line))
    return count


# ----------------------------------------------------------------------------------------------
# Numbers the text quotes.

def text_of(path):
    return re.sub(r"\s+", " ", open(os.path.join(ROOT, path), encoding="utf-8").read())


def find(path, pattern):
    m = re.search(pattern, text_of(path))
    if not m:
        fail("%s: the text no longer matches the pattern of a number check: %s" % (path, pattern))
    return m


def read_table(text):
    rows = [l for l in text.split("\n") if l and not l.startswith("#")]
    return list(csv.DictReader(io.StringIO("\n".join(rows))))


def run_table(saddle, args):
    p = subprocess.run([saddle] + shlex.split(args) + ["--no-progress"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=TIMEOUT)
    if p.returncode != 0:
        fail("`saddle %s` exited %d: %s" % (args, p.returncode, p.stderr.decode(errors="replace")[-300:]))
        return []
    return read_table(p.stdout.decode())


def close(what, quoted, value, digits=None):
    """The quoted text equals value at the precision it is printed with (half a unit of the last
    printed digit, or a given number of decimals)."""
    q = float(quoted)
    if digits is None:
        digits = len(quoted.split(".")[1]) if "." in quoted else 0
    tol = 0.5 * 10 ** (-digits) + 1e-12
    if not (abs(q - value) <= tol):
        fail("%s: the text says %s, the computation gives %.6g" % (what, quoted, value))


def rows_where(rows, **kw):
    out = [r for r in rows if all(r.get(k) == v for k, v in kw.items())]
    if not out:
        fail("no row with %s" % kw)
    return out


def check_numbers(saddle):
    n = 0
    # README, SLR population: max-SLR at nu = inf, linear attention at L = 1000; softplus against
    # Bayes at max-SLR, nu = 4, L = 1000.
    m = find("README.md", r"linear attention's risk goes to 1 like 1 - \(1 \+ 2 log L\)/L \(([0-9.]+) at L = 1000\)")
    if m:
        r = rows_where(run_table(saddle, "slr population --task max --nu inf --L 1000 --activation linear"))[0]
        close("README: linear risk at max-SLR nu = inf, L = 1000", m.group(1), float(r["risk"]))
        n += 1
    m = find("README.md", r"normalised softplus falls behind Bayes as L and nu grow \(([0-9.]+) against ([0-9.]+) at max-SLR, nu = 4, L = 1000\)")
    if m:
        r = rows_where(run_table(saddle, "slr population --task max --nu 4 --L 1000 --activation softplus"))[0]
        close("README: softplus risk at max-SLR nu = 4, L = 1000", m.group(1), float(r["risk"]))
        close("README: Bayes risk at max-SLR nu = 4, L = 1000", m.group(2), float(r["bayes_risk"]))
        n += 2
    # README: the main job's closed form for linear attention, L(L-1)/(L^2 + nu(L-1)) at L = 3.
    if find("README.md", r"linear attention follows the closed form L\(L-1\)/\(L\^2 \+ nu\(L-1\)\)"):
        for r in rows_where(run_table(saddle, "slr population --task spiked --L 3 --nu 0.5:8:16 --activation linear")):
            L, nu = 3.0, float(r["nu"])
            close("README: linear closed form at nu = %s" % r["nu"], "%.6f" % (L * (L - 1) / (L * L + nu * (L - 1))),
                  float(r["risk"]))
            n += 1
    # README: the RMT table (tanh, c = 0.5, |mu|^2 = 1, w_K = w_Q = w e1).
    text = text_of("README.md")
    table = re.findall(r"\| (1e-6|1e-2|1) \| ([0-9.]+) \| ([0-9.]+) \| ([0-9.]+) \| ([0-9.]+)", text)
    if len(table) != 3:
        fail("README: the RMT table (gamma 1e-6, 1e-2, 1) no longer has its three rows")
    for w_i, w in enumerate(["0,0,0", "1,0,0", "2,0,0"]):
        rows = run_table(saddle, "rmt attention --c 0.5 --gamma 1e-6,1e-2,1 --snr 1 --activation tanh --wk %s --wq %s" % (w, w))
        for g, *vals in table:
            r = [x for x in rows if float(x["gamma"]) == float(g)]
            if not r:
                fail("rmt attention: no row at gamma %s" % g)
                continue
            close("README RMT table, gamma %s, w = %d" % (g, w_i), vals[w_i], float(r[0]["error"]))
            n += 1
            if w_i == 0:
                close("README RMT table, gamma %s, ridge" % g, vals[3], float(r[0]["error_ridge"]))
                n += 1
    # docs/slr_population.md: 1 - E_lin at max-SLR, nu = inf.
    m = find("docs/slr_population.md", r"1 − E_lin = ([0-9.]+) \(L = 2\), ([0-9.]+) \(10\), ([0-9.]+) \(100\), ([0-9.]+) \(1000\), ([0-9.]+) \(10⁴\), ([0-9.e-]+) \(10⁵\)")
    if m:
        rows = run_table(saddle, "slr population --task max --nu inf --L 2,10,100,1000,10000,100000 --activation linear")
        for q, L in zip(m.groups(), ["2", "10", "100", "1000", "10000", "100000"]):
            r = rows_where(rows, L=L)[0]
            digits = None
            if "e" in q:  # 2.0e-4: two significant digits
                mant, ex = q.split("e")
                digits = len(mant.split(".")[1]) - int(ex) if "." in mant else -int(ex)
            close("docs/slr_population.md: 1 - E_lin at L = %s" % L, str(float(q)), 1 - float(r["risk"]), digits)
            n += 1
    n += check_committed()
    return n


def read_csv_file(path):
    return read_table(open(os.path.join(ROOT, path), encoding="utf-8").read())


def check_committed():
    """Numbers the text quotes from committed data files."""
    n = 0
    # docs/figures.md: each panel's "Markers:" line against data/figures/summary.csv, and its runs
    # against the '# run:' lines of the panel CSV.
    fig = open(os.path.join(ROOT, "docs/figures.md"), encoding="utf-8").read()
    summary = {r["panel"]: r for r in read_csv_file("data/figures/summary.csv")}
    for panel, body in re.findall(r"^## (\w+)\n(.*?)(?=^## |\Z)", fig, re.S | re.M):
        if panel not in summary:
            continue
        s = summary[panel]
        m = re.search(r"Markers: (\d+); compared with an RS-stable theory point: (\d+), largest \|z\| = ([0-9]+(?:\.[0-9]+)?)", body)
        if not m:
            fail("docs/figures.md, %s: no 'Markers: ...' line" % panel)
            continue
        for q, col in zip(m.groups(), ["markers", "compared_rs_stable", "max_abs_z"]):
            if float(q) != float(s[col]):
                fail("docs/figures.md, %s: %s %s, summary.csv %s" % (panel, col, q, s[col]))
            n += 1
        m = re.search(r"at RS-unstable points: (\d+)", body)
        if (m.group(1) if m else "0") != s["compared_rs_unstable"]:
            fail("docs/figures.md, %s: markers at RS-unstable points %s, summary.csv %s"
                 % (panel, m.group(1) if m else "(none said)", s["compared_rs_unstable"]))
        m = re.search(r"\(parameters: `([^`]*)`; ([0-9.]+) s\)", body)
        head = [l for l in open(os.path.join(ROOT, "data/figures/%s.csv" % panel), encoding="utf-8")
                if l.startswith("#")]
        params = [l[len("# parameters: "):].strip() for l in head if l.startswith("# parameters: ")]
        if not m or not params or m.group(1) != params[0]:
            fail("docs/figures.md, %s: parameters differ from the panel CSV's '# parameters:' line" % panel)
        elif float(m.group(2)) != float(s["seconds"]):
            fail("docs/figures.md, %s: %s s, summary.csv %s s" % (panel, m.group(2), s["seconds"]))
        runs = [l[len("# run: "):].strip() for l in head if l.startswith("# run: saddle ")]
        block = re.search(r"Runs:\n\n```\n(.*?)```", body, re.S)
        if not block or [l.strip() for l in block.group(1).strip().split("\n")] != runs:
            fail("docs/figures.md, %s: the Runs block differs from the '# run:' lines of data/figures/%s.csv"
                 % (panel, panel))
        n += 3
    # docs/mc_slr.md: the verdict tally of the committed full validate slr run.
    m = find("docs/mc_slr.md", r"data/validation/validate_slr_full.csv \((\d+) pass, (\d+) known_gap, (\d+) rs_unstable, (\d+) rsb_\w+, 0 FAIL")
    if m:
        verdicts = [r["verdict"] for r in read_csv_file("data/validation/validate_slr_full.csv")]
        got = [sum(v == "pass" for v in verdicts), sum(v == "known_gap" for v in verdicts),
               sum(v == "rs_unstable" for v in verdicts), sum(v.startswith("rsb_") for v in verdicts)]
        if [int(x) for x in m.groups()] != got or any(v in ("FAIL", "fail") for v in verdicts):
            fail("docs/mc_slr.md: tally %s, data/validation/validate_slr_full.csv %s" % (m.groups(), got))
        n += 4
    return n


def main():
    args = sys.argv[1:]
    if not args:
        print(__doc__)
        return 2
    saddle = os.path.abspath(args[0])
    only = args[args.index("--only") + 1] if "--only" in args else None
    if "--list" in args:
        for path in docs():
            for kind, line, text, directives in blocks(path):
                if kind in ("sh", "bash", ""):
                    for cmd, expect in commands(apply_directives(path, line, text, directives, False)[0]):
                        print("%s:%d: %s" % (path, line, cmd))
        return 1 if failures else 0
    t0 = time.time()
    ran = run_examples(saddle, only)
    checked = 0 if only else check_numbers(saddle)
    print("%d examples run, %d quoted numbers checked, %.0f s, %d failures" % (ran, checked, time.time() - t0,
                                                                                 len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
