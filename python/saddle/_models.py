"""One Python function per model registered with ``register_model<M>`` (tools/cli/models.cpp).

Nothing here names a model: the list comes from the compiled core (``_core.models()``, the
models' cards), so a model added to the C++ registry is a function of the package with no Python
edit. The function is named after the command with ``-`` replaced by ``_`` (``ridge-classifier``
-> ``saddle.ridge_classifier``); its signature holds the card's parameters with their defaults
(then the command's solver and curve options), its docstring the card's summary, equations,
parameter help and domains; it returns the command's CSV as a DataFrame (see _command.run).
"""

import inspect
import math

from . import _command
from . import _core


def _default_value(text):
    """The card's default as a Python value: a number when it is one, else the CLI text (a list
    or a range such as "0.5:4:8")."""
    try:
        v = float(text)
    except ValueError:
        return text
    return v


def _number(v):
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return f"{v:g}"


def domain_text(p):
    """The parameter's domain, e.g. "[1e-06, 1e+06]" or "(0, 1e+12]" (integers: "integer in ...";
    a choice: "one of spiked, max")."""
    if p["choices"]:
        return "one of " + ", ".join(p["choices"]) + " (or a comma list)"
    lo = ("[" if p["min_inclusive"] else "(") + _number(p["min"])
    hi = _number(p["max"]) + ("]" if p["max_inclusive"] else ")")
    return ("integer in " if p["integer"] else "") + lo + ", " + hi + (" or inf" if p["allow_inf"] else "")


def function_name(command):
    """``ridge-classifier`` -> ``ridge_classifier``; a grouped command ``slr bayes`` -> ``bayes``
    (a function of the group's module, saddle.slr.bayes)."""
    return _command._py_name(command.split()[-1])


def _doc(card, path):
    lines = [card["summary"] + ".", "", f"Equations: {card['equations']}."]
    if card["observables_note"]:
        lines += ["", card["observables_note"] + "."]
    lines += ["", f"Continuation (warm starts) along {card['continuation']}; the other parameters'",
              "values give one curve each (their cartesian product).", "", "Parameters",
              "----------"]
    for p in card["params"]:
        lines.append(f"{_command._py_name(p['name'])} : default {p['default']!r}, domain {domain_text(p)}")
        lines.append(f"    {p['help']}")
    for st in card["settings"]:
        lines.append(f"{_command._py_name(st['name'])} : text, default: not given")
        lines.append(f"    {st['help']}")
    lines += ["", "Other keywords (the command's solver and curve options, default: the CLI's):"]
    names = {_command._py_name(p["name"]) for p in card["params"] + card["settings"]}
    for o in _command._describe()[path]["options"]:
        if o["name"] in _command._HIDDEN or _command._py_name(o["name"]) in names:
            continue
        lines.append(f"    {_command._py_name(o['name'])}: {o['description']}")
    lines += [
        "",
        "Numeric parameters take a scalar, a list, a numpy array or a CLI range 'start:stop:count[:log]'.",
        "",
        "Returns",
        "-------",
        "pandas.DataFrame (a dict of numpy arrays without pandas): one row per point, the CLI's columns",
        "(the parameters, the unknowns, the model's values, converged, iterations, residual,",
        "map_radius, repelling, ...); attrs holds version, command and settings.",
        "",
        "Raises ValueError for a value outside its domain (the CLI's message).",
        "",
        f"Command line: saddle {path} [OPTIONS]",
    ]
    return "\n".join(lines)


def make_function(card):
    """The function of one model card."""
    path = card["command"]
    base = _command.command(path, card["summary"], name=function_name(path))
    own = {_command._py_name(p["name"]): _default_value(p["default"]) for p in card["params"]}
    params = []
    for prm in base.__signature__.parameters.values():
        if prm.name in own:
            prm = prm.replace(default=own[prm.name])
        params.append(prm)
    # The card's parameters first, in card order.
    order = [_command._py_name(p["name"]) for p in card["params"]]
    params.sort(key=lambda q: order.index(q.name) if q.name in order else len(order))
    base.__signature__ = inspect.Signature(params)
    base.__doc__ = _doc(card, path)
    base.card = card
    return base


def functions():
    """One function per registered model of the top level (``ridge``, ...), in registration
    order; a grouped model (``slr bayes``) is its group module's (function_of)."""
    return [make_function(card) for card in _core.models() if " " not in card["command"]]


def function_of(command):
    """The function of the registered model ``command`` (e.g. "slr bayes")."""
    for card in _core.models():
        if card["command"] == command:
            return make_function(card)
    raise KeyError(f"saddle: no registered model '{command}'")
