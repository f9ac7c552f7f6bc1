"""Every model registered with register_model<M> (tools/cli/models.cpp) is a function of the package
(issue 21): the test walks the registry of the compiled core, so a new model cannot be left out.
For each: the name (command with - -> _), the card's parameters with their defaults as the
signature, help and domain in the docstring, a run at the card's defaults (a cheaper grid for the
models whose default curve takes minutes, CHEAP) against the CLI's CSV (same columns, same rows),
and a value outside a domain refused with ValueError."""

import inspect
import math

import pytest

import saddle
from saddle import _command, _core, _models

CARDS = _core.models()

# Models whose default curve takes more than seconds (the SLR replica fixed points: 16 alphas x 2
# activations at 4096 QMC points; 1RSB nested points): the same call on a small grid.
CHEAP = {
    "slr erm": {"alpha": "2,3", "activation": "softmax", "points": 256, "replicates": 2, "target_se": 0},
    "slr erm-1rsb": {"alpha": 2.5, "activation": "linear", "points": 128, "inner_points": 8, "replicates": 2},
}


def _function(card):
    """saddle.ridge_classifier for "ridge-classifier"; saddle.slr.bayes for the grouped "slr bayes"."""
    *group, name = card["command"].replace("-", "_").split()
    module = getattr(saddle, group[0]) if group else saddle
    return module, name, getattr(module, name, None)


def test_registry_is_not_empty_and_names_the_known_models():
    commands = [c["command"] for c in CARDS]
    assert "ridge" in commands and "ridge-classifier" in commands and "slr bayes" in commands
    assert "slr erm" in commands and "slr erm-1rsb" in commands
    top = [c for c in commands if " " not in c]
    assert sorted(saddle.models) == sorted(c.replace("-", "_") for c in top)


@pytest.mark.parametrize("card", CARDS, ids=[c["command"] for c in CARDS])
def test_every_registered_model_is_a_function(card, cli, tmp_path):
    module, name, f = _function(card)
    assert callable(f), f"saddle.{name} missing for the registered model '{card['command']}'"
    assert name in module.__all__
    sig = inspect.signature(f)
    names = list(sig.parameters)
    doc = f.__doc__
    assert card["summary"] in doc and card["equations"] in doc
    for i, p in enumerate(card["params"]):
        py = _command._py_name(p["name"])
        assert names[i] == py  # card order first
        default = sig.parameters[py].default
        assert str(default) == p["default"] or default == float(p["default"])
        assert p["help"] in doc
        assert _models.domain_text(p) in doc
    # A run at the card's defaults is the CLI's run: same columns, same rows.
    cheap = CHEAP.get(card["command"], {})
    df = f(**cheap)
    out = tmp_path / "cli.csv"
    args = [a for k, v in cheap.items() for a in ("--" + k.replace("_", "-"), str(v))]
    r = cli(*card["command"].split(), *args, "--out", str(out), "--no-progress")
    assert r.returncode == 0, r.stderr
    columns, rows, _ = _command.read_csv(str(out))
    assert list(df.columns) == columns
    assert len(df) == len(rows) > 0
    for col in [p["name"] for p in card["params"]] + ["converged", "iterations", "residual"]:
        assert col in df.columns
    for j, c in enumerate(columns):
        if c in ("seconds",):
            continue
        got = [str(v) for v in df[c].tolist()]
        want = [row[j] for row in rows]
        if df[c].dtype.kind == "f":
            assert all((math.isnan(float(a)) and (b in ("", "nan"))) or float(a) == float(b) for a, b in zip(got, want)), c
        else:
            assert got == want, c
    # A value outside a parameter's domain is a ValueError naming the option.
    for p in card["params"]:
        bad = p["max"] * 10 + 1 if math.isfinite(p["max"]) else (p["min"] - 1 if math.isfinite(p["min"]) else None)
        if bad is None:
            continue
        with pytest.raises(ValueError, match=p["name"].replace("_", "[-_]")):
            f(**{_command._py_name(p["name"]): bad})
