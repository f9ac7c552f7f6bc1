"""The Python module `saddle` (issue 13): closed forms, equality with the CLI, bad input,
unconverged points, the input forms of a sweep, Ctrl-C, tables without pandas."""

import math
import os
import signal
import threading
import time

import numpy as np
import pytest

import saddle
from saddle import _command


def _csv(cli, tmp_path, *args):
    out = tmp_path / "cli.csv"
    r = cli(*args, "--out", str(out), "--no-progress")
    assert r.returncode == 0, r.stderr
    return _command.read_csv(str(out))


def test_version_matches_cli(cli):
    r = cli("--version")
    assert r.returncode == 0
    assert r.stdout.split()[1] == saddle.__version__


def test_linear_attention_closed_form_and_softmax_is_bayes():
    L = 3
    nu = np.linspace(0.5, 8, 6)
    df = saddle.slr.population(task="spiked", L=L, nu=nu, activation=["softmax", "linear"])
    assert list(df["activation"]) == ["softmax", "linear"] * len(nu)
    lin = df[df["activation"] == "linear"]
    soft = df[df["activation"] == "softmax"]
    np.testing.assert_allclose(lin["nu"].to_numpy(), nu, rtol=1e-11)
    expected = L * (L - 1) / (L**2 + nu * (L - 1))  # docs/equations/slr_population.md §3: linear attention, spiked SLR
    np.testing.assert_allclose(lin["risk"].to_numpy(), expected, rtol=1e-8)
    # Softmax attention is Bayes-optimal at population level for spiked SLR.
    np.testing.assert_allclose(soft["risk"].to_numpy(), soft["bayes_risk"].to_numpy(), rtol=1e-7)
    assert (lin["risk"].to_numpy() > lin["bayes_risk"].to_numpy()).all()


def test_ridge_fixture_closed_form():
    alpha = np.array([0.25, 0.5, 1.0, 2.0, 4.0])
    lam, delta = 0.3, 0.2
    df = saddle.ridge(alpha=alpha, lambda_=lam, delta=delta)
    assert (df["converged"] == 1).all()
    # docs/equations/ridge.md §4.8: V > 0 root of lam V^2 + (lam + alpha - 1) V - 1 = 0, m = alpha V / (1 + V),
    # theta = alpha V^2 / (1+V)^2, q = (m^2 + theta (1 - 2m + delta)) / (1 - theta).
    b = lam + alpha - 1
    V = (-b + np.sqrt(b * b + 4 * lam)) / (2 * lam)
    m = alpha * V / (1 + V)
    theta = alpha * V**2 / (1 + V) ** 2
    q = (m**2 + theta * (1 - 2 * m + delta)) / (1 - theta)
    np.testing.assert_allclose(df["V"], V, rtol=1e-7)
    np.testing.assert_allclose(df["m"], m, rtol=1e-7)
    np.testing.assert_allclose(df["q"], q, rtol=1e-7)
    np.testing.assert_allclose(df["test_error"], 1 - 2 * m + q, rtol=1e-7)
    np.testing.assert_allclose(df["train_error"], (1 - 2 * m + q + delta) / (1 + V) ** 2, rtol=1e-7)


CASES = [
    ("ridge", {"alpha": "0.5:4:5", "lambda_": [0.1, 1.0], "delta": 0.25},
     ["ridge", "--alpha", "0.5:4:5", "--lambda", "0.1,1.0", "--delta", "0.25"]),
    ("slr.population", {"task": "spiked,max", "L": [2, 3], "nu": np.array([0.5, 2.0]),
                        "activation": "softmax,linear,erf"},
     ["slr", "population", "--task", "spiked,max", "--L", "2,3", "--nu", "0.5,2.0",
      "--activation", "softmax,linear,erf"]),
    ("rmt.attention", {"c": [0.5, 2], "gamma": "1e-3:1:4:log", "activation": "tanh,relu"},
     ["rmt", "attention", "--c", "0.5,2", "--gamma", "1e-3:1:4:log", "--activation", "tanh,relu"]),
    ("rmt.ridge", {"c": 0.5, "gamma": [0, 1e-3, 0.1, 1]},
     ["rmt", "ridge", "--c", "0.5", "--gamma", "0,0.001,0.1,1"]),
    ("rmt.hermite", {"activation": "tanh,relu"}, ["rmt", "hermite", "--activation", "tanh,relu"]),
    ("mc.rmt", {"n": 64, "c": [0.5, 2], "draws": 3, "seed": 5},
     ["mc", "rmt", "--n", "64", "--c", "0.5,2", "--draws", "3", "--seed", "5"]),
    ("slr.bayes", {"L": 2, "nu": 2, "alpha": [0.5, 2], "points": 256, "replicates": 4},
     ["slr", "bayes", "--L", "2", "--nu", "2", "--alpha", "0.5,2", "--points", "256",
      "--replicates", "4"]),
]


@pytest.mark.parametrize("name,kwargs,argv", CASES, ids=[c[0] for c in CASES])
def test_module_equals_cli(cli, tmp_path, name, kwargs, argv):
    group, _, fn = name.rpartition(".")
    func = getattr(getattr(saddle, group) if group else saddle, fn)
    df = func(**kwargs)
    if argv[1] in ("hermite", "rmt"):  # one-table commands: no --no-progress
        out = tmp_path / "cli.csv"
        r = cli(*argv, "--out", str(out))
        assert r.returncode == 0, r.stderr
        columns, rows, attrs = _command.read_csv(str(out))
    else:
        columns, rows, attrs = _csv(cli, tmp_path, *argv)
    assert list(df.columns) == columns
    assert len(df) == len(rows) > 0
    assert df.attrs["version"] == attrs["version"] == saddle.__version__
    assert df.attrs["settings"] == attrs["settings"]
    # The module records the command without its temporary --out file.
    assert df.attrs["command"] == attrs["command"].replace(" --out " + str(tmp_path / "cli.csv"), "")
    timing = [c for c in columns if "seconds" in c or c.startswith("wall")]
    for i, c in enumerate(columns):
        if c in timing:
            continue
        texts = [r[i] for r in rows]
        got = df[c].to_numpy()
        if got.dtype == object:
            assert list(got) == texts, c
        else:  # the same printed digits: reading the CLI's text gives the identical number
            assert got.tolist() == [type(g)(float(t)) if got.dtype.kind == "f" else int(t)
                                    for g, t in zip(got.tolist(), texts)], c


def test_bad_input_raises_value_error_with_cli_message(cli):
    for kwargs, argv in [({"alpha": -1}, ["ridge", "--alpha", "-1"]),
                         ({"alpha": "1:2"}, ["ridge", "--alpha", "1:2"]),
                         ({"method": "newtonish"}, ["ridge", "--method", "newtonish"]),
                         ({"lambda_": float("nan")}, ["ridge", "--lambda", "nan"])]:
        r = cli(*argv)
        assert r.returncode == 2 and r.stdout == ""
        with pytest.raises(ValueError) as e:
            saddle.ridge(**kwargs)
        assert "saddle: error: " + str(e.value) == r.stderr.strip()
    with pytest.raises(ValueError):
        saddle.slr.population(task="bogus")
    with pytest.raises(TypeError):
        saddle.ridge(bogus=1)


def test_unconverged_point_is_a_row_not_an_exception():
    df = saddle.ridge(alpha=[0.5, 1, 2], max_iter=1, no_polish=True, no_retry=True)
    assert len(df) == 3
    assert (df["converged"] == 0).all()
    assert np.isfinite(df["residual"]).all()
    df = saddle.rmt.attention(c=0.5, gamma=[1e-3, 0.1], max_iter=1, tol=1e-300)
    assert len(df) == 2 and (df["converged"] == 0).all()


def test_sweep_input_forms_agree():
    ref = saddle.ridge(alpha="0.5:2:4", lambda_=0.1)
    for alpha in ([0.5, 1.0, 1.5, 2.0], (0.5, 1, 1.5, 2), np.linspace(0.5, 2, 4),
                  np.array([0.5, 1.0, 1.5, 2.0], dtype=np.float32)):
        df = saddle.ridge(alpha=alpha, lambda_=np.float64(0.1))
        assert df["test_error"].tolist() == ref["test_error"].tolist()
    one = saddle.ridge(alpha=1.0, lambda_=0.1)
    assert len(one) == 1 and one["alpha"][0] == 1.0


def test_value_text_is_exact():
    for x in [0.1, 1 / 3, 2.0**-40, 1e300, np.float64(np.pi)]:
        assert float(_command.value_text(x)) == float(x)
    assert _command.value_text([1, 2.5, np.int64(3)]) == "1,2.5,3"
    assert _command.value_text(float("inf")) == "inf"
    assert _command.value_text("0.5:8:16") == "0.5:8:16"


def test_provenance_in_attrs():
    df = saddle.slr.erm(L=2, nu=2, alpha=[1, 2], activation="linear", points=256, replicates=4,
                        seed=7, target_se=0)
    assert df.attrs["version"] == saddle.__version__
    assert df.attrs["seed"] == 7
    assert df.attrs["command"].startswith("saddle slr erm ")
    assert "--out" not in df.attrs["command"]
    assert df.attrs["settings"]
    assert "test_error_se" in df.columns


def test_threads_and_progress(capsys):
    a = saddle.ridge(alpha="0.5:4:8", threads=1, progress=True)
    b = saddle.ridge(alpha="0.5:4:8", threads=2)
    assert a["test_error"].tolist() == b["test_error"].tolist()
    with pytest.raises(ValueError):
        saddle.ridge(threads=-1)


def test_table_without_pandas(monkeypatch):
    monkeypatch.setattr(_command, "_pd", None)
    t = saddle.ridge(alpha=[1, 2])
    assert isinstance(t, dict) and list(t) [:2] == ["alpha", "lambda"]
    assert isinstance(t["m"], np.ndarray) and t["m"].shape == (2,)
    assert t.attrs["version"] == saddle.__version__


def test_docstring_lists_parameters_and_equations():
    doc = saddle.slr.erm.__doc__
    assert "lambda_ :" in doc and "alpha :" in doc and "§4" in doc
    import inspect
    assert "nu" in inspect.signature(saddle.slr.population).parameters


def interrupted_after(seconds, call):
    """Sends SIGINT to this process `seconds` into call(), which must end in KeyboardInterrupt;
    returns the time from the signal to the exception."""
    fired = []

    def interrupt():
        fired.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGINT)

    timer = threading.Timer(seconds, interrupt)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            call()
    finally:
        timer.cancel()
    return time.monotonic() - fired[0]


def test_keyboard_interrupt_stops_a_long_sweep():
    # A sweep that would take far longer than the test: many slow ERM points on one thread.
    latency = interrupted_after(
        1.0, lambda: saddle.slr.erm(L=2, nu=2, alpha="0.5:8:400", activation="softmax", threads=1))
    print(f"KeyboardInterrupt {latency:.3f} s after SIGINT")
    # The module is usable again afterwards.
    assert len(saddle.ridge(alpha=1)) == 1


def test_preint_point_bounded_by_max_iter_and_interruptible():
    # Issue 28 item 5: a pre-integrated channel point whose replicates fail (linear attention at
    # lambda = 0 past the interpolation threshold) used to run the damped retry's 1500 iterations
    # whatever max_iter said (minutes); max_iter now bounds the retry too, and Ctrl-C reaches the
    # channel sums of one iteration.
    setting = dict(channel="preint", points=64, replicates=2, lambda_=0, alpha=2, activation="linear")
    t0 = time.monotonic()
    df = saddle.slr.erm(**setting, max_iter=2, threads=2)
    took = time.monotonic() - t0
    assert len(df) == 1
    assert took < 60, f"max_iter=2 took {took:.1f} s"
    # minutes when not interrupted
    latency = interrupted_after(1.0, lambda: saddle.slr.erm(**setting, threads=2))
    assert latency < 10, f"KeyboardInterrupt {latency:.1f} s after SIGINT"
