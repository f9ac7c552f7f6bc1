"""The module in a batch job or a notebook (issue 28.4, 28.7): a process locale with a decimal
comma changes nothing, SLURM array variables never shard a call, SIGTERM ends the process even
when user code swallows KeyboardInterrupt, and text the CLI could not represent (a NUL, a seed
of 2**64) is refused."""

import os
import shutil
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import saddle
from saddle import _core


# The start of a script whose progress callback sends SIGTERM to its own process during a call.
KILL_FROM_PROGRESS = """
import os, signal
import saddle
from saddle import _command

class Kill:
    def __init__(self, stream):
        pass
    def __call__(self, done, total):
        os.kill(os.getpid(), signal.SIGTERM)
    def close(self):
        pass
"""


def _python(script, env_extra, tmp_path):
    env = dict(os.environ)
    package_dir = os.path.dirname(os.path.dirname(os.path.abspath(saddle.__file__)))
    env["PYTHONPATH"] = os.pathsep.join([package_dir] + [p for p in [env.get("PYTHONPATH")] if p])
    env.update(env_extra)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(script) if not script.startswith(KILL_FROM_PROGRESS) else KILL_FROM_PROGRESS + textwrap.dedent(script[len(KILL_FROM_PROGRESS):])], capture_output=True,
                          text=True, env=env, cwd=str(tmp_path), timeout=120, check=False)


@pytest.fixture(scope="module")
def de_locale(tmp_path_factory):
    """LOCPATH of a compiled de_DE.UTF-8 (decimal comma), or skip when localedef cannot make it."""
    localedef = shutil.which("localedef")
    if localedef is None:
        pytest.skip("localedef not found: cannot compile de_DE.UTF-8")
    d = tmp_path_factory.mktemp("locales")
    r = subprocess.run([localedef, "-i", "de_DE", "-f", "UTF-8", str(d / "de_DE.UTF-8")],
                       capture_output=True, text=True, check=False)
    # localedef can fail (no sources under /usr/share/i18n: Debian's `locales` package, which
    # tools/setup-deps.sh installs) yet leave an empty output folder behind: judge it by its exit
    # code (0 written, 1 written with warnings, 4 nothing written) and by the compiled category.
    if r.returncode not in (0, 1) or not (d / "de_DE.UTF-8" / "LC_NUMERIC").exists():
        pytest.skip(f"localedef could not compile de_DE.UTF-8 (exit {r.returncode}; install Debian's "
                    f"'locales' package): {r.stderr.strip()[:200]}")
    return str(d)


def test_decimal_comma_locale_changes_nothing(de_locale, tmp_path):
    # The same grid in this process (C locale) and under LC_NUMERIC=de_DE.UTF-8, as notebooks set.
    ref = saddle.ridge(alpha=[0.5, 1.5], lambda_="0.1", delta=0.25)
    script = """
        import locale, json
        locale.setlocale(locale.LC_NUMERIC, "de_DE.UTF-8")
        assert locale.localeconv()["decimal_point"] == ","
        import saddle
        df = saddle.ridge(alpha=[0.5, 1.5], lambda_="0.1", delta=0.25)
        one = saddle.ridge(alpha="0.5", lambda_=0.1, delta="0.25")
        print(json.dumps({"columns": list(df.columns), "values": df.to_numpy(dtype=object).tolist(),
                          "one": len(one), "alpha": float(one["alpha"].iloc[0]),
                          "solver": df.attrs["settings"].get("solver", "")}))
    """
    r = _python(script, {"LOCPATH": de_locale}, tmp_path)
    assert r.returncode == 0, r.stderr
    import json
    got = json.loads(r.stdout)
    assert got["columns"] == list(ref.columns)  # no column shifted by a decimal comma
    assert got["one"] == 1 and got["alpha"] == 0.5  # '0.5' is a number in any locale
    assert "," not in got["solver"].split("mix=")[1].split()[0]  # mix=0.5 in the header
    for row_got, row_ref in zip(got["values"], ref.to_numpy(dtype=object).tolist()):
        for a, b in zip(row_got, row_ref):
            if isinstance(b, float) and np.isnan(b):
                assert a is None or (isinstance(a, float) and np.isnan(a))
            else:
                assert a == b


def test_slurm_array_variables_do_not_shard(monkeypatch):
    monkeypatch.setenv("SLURM_ARRAY_TASK_ID", "1")
    monkeypatch.setenv("SLURM_ARRAY_TASK_COUNT", "2")
    df = saddle.ridge(alpha="1:2:8", lambda_=[0.1, 0.2])
    assert len(df) == 16  # 8 x 2: the whole grid
    np.testing.assert_allclose(sorted(set(df["alpha"])), np.linspace(1, 2, 8), rtol=1e-11)
    assert "--shard" not in (df.attrs["command"] or "")
    assert "shard" not in df.attrs["settings"]


def test_sigterm_ends_the_process_after_cleanup(tmp_path):
    # The progress callback sends SIGTERM to its own process during the call (no timing: the
    # callback runs while the command runs, or at its end); user code swallows every exception.
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    script = KILL_FROM_PROGRESS + """

        _command._ProgressBar = Kill
        try:
            saddle.ridge(alpha="0.1:10:400", lambda_="0.01:1:20", progress=True)
        except BaseException as e:
            print("swallowed", type(e).__name__, flush=True)
        print("survived", flush=True)
    """
    r = _python(script, {"TMPDIR": str(tmpdir)}, tmp_path)
    assert r.returncode == -signal.SIGTERM, (r.returncode, r.stdout, r.stderr)
    assert "survived" not in r.stdout and "swallowed" not in r.stdout
    assert not list(tmpdir.glob("saddle_*.csv"))  # the temporary CSV was removed first


def test_no_progress_call_after_a_sigterm(tmp_path):
    # A callback that sends SIGTERM at every call, polled every millisecond: the call must come
    # back (for the caller's cleanup) before the process ends. A second call during the stop sent
    # a second SIGTERM, which ends the process at once (the handler's own rule), and under load
    # the test above left its temporary CSV behind that way.
    script = KILL_FROM_PROGRESS + """

        from saddle import _core
        try:
            _core.run(["saddle", "ridge", "--alpha", "0.1:10:400", "--lambda", "0.01:1:20",
                       "--no-progress", "--out", "out.csv"], Kill(None), 0.001)
        except BaseException:
            pass
        print("returned", flush=True)
        _core.end_if_terminated()
        print("survived", flush=True)
    """
    r = _python(script, {}, tmp_path)
    assert r.returncode == -signal.SIGTERM, (r.returncode, r.stdout, r.stderr)
    assert "returned" in r.stdout and "survived" not in r.stdout, (r.stdout, r.stderr)


def test_an_ignored_sigterm_stays_ignored(tmp_path):
    # A script that ignores SIGTERM keeps ignoring it during a call (the call is not stopped, the
    # host goes on): the module takes over only signals left at their default. The same progress
    # callback as above sends the signal while the command runs.
    script = KILL_FROM_PROGRESS + """

        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        _command._ProgressBar = Kill
        df = saddle.ridge(alpha="0.1:10:40", lambda_="0.01:1:5", progress=True)
        print("rows", len(df), flush=True)
    """
    r = _python(script, {}, tmp_path)
    assert r.returncode == 0, (r.returncode, r.stdout, r.stderr)
    assert "rows 200" in r.stdout


def test_nul_in_text_is_refused():
    with pytest.raises(ValueError, match="NUL"):
        saddle.ridge(alpha="1\x002")
    rc, message = _core.run(["saddle", "ridge", "--alpha", "1\x002"])
    assert rc == 2 and "NUL" in message


@pytest.mark.parametrize("function", [saddle.slr.bayes, saddle.slr.erm, saddle.mc.slr])
def test_seed_beyond_64_bits_is_refused(function):
    with pytest.raises(ValueError, match="2\\^64"):
        function(seed=2**64)
    with pytest.raises(ValueError):
        function(seed=-1)


def test_largest_seed_is_accepted():
    df = saddle.slr.bayes(alpha=1, points=16, replicates=2, seed=2**64 - 1)
    assert df.attrs["seed"] == 2**64 - 1 and len(df) == 2


@pytest.mark.parametrize("option", [{"max_iter": "0x10"}, {"max_iter": 2**64}, {"tol": "1e400"},
                                    {"tol": "nan"}, {"alpha": "0x10"}, {"alpha": "1e400"}])
def test_numbers_are_decimal_and_in_range(option):
    kwargs = {"alpha": 1}
    kwargs.update(option)
    with pytest.raises(ValueError):
        saddle.ridge(**kwargs)
