"""Turns a subcommand of the ``saddle`` program into a Python function.

The function builds the CLI's argument vector from its keyword arguments (a keyword is the
option's long name with ``-`` replaced by ``_``; ``lambda`` is spelled ``lambda_``), runs the
command in this process through :mod:`saddle._core` (the same C++ code as the program, with
the GIL released), and reads the CSV it wrote into a table. An omitted keyword omits the flag,
so every default is the CLI's own. Nothing about the mathematics lives here.
"""

import csv
import inspect
import keyword
import numbers
import os
import sys
import tempfile
import warnings

import numpy as np

from . import _core

try:  # pandas is optional: without it a table is a dict of numpy arrays
    import pandas as _pd
except ImportError:  # pragma: no cover - exercised only where pandas is missing
    _pd = None

# Options the module handles itself (the CSV goes to a temporary file and comes back as a table;
# figures are drawn in Python; shards, resume and cache are for the command line).
_HIDDEN = {"help", "out", "resume", "shard", "cache", "no-progress", "threads", "plot",
           "plot-x", "plot-y", "plot-z", "plot-by", "plot-diff", "plot-title"}

_ERROR_PREFIX = "saddle: error: "

_DESCRIPTION = None


def _describe():
    global _DESCRIPTION
    if _DESCRIPTION is None:
        _DESCRIPTION = _core.describe()
    return _DESCRIPTION


def _py_name(cli_name):
    name = cli_name.replace("-", "_")
    return name + "_" if keyword.iskeyword(name) else name


class Table(dict):
    """The table of a run when pandas is not installed: column name -> numpy array, with the
    CSV header's provenance in ``attrs`` (as ``DataFrame.attrs``)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.attrs = {}


def _scalar_text(v, name):
    if isinstance(v, (bool, np.bool_)):
        raise TypeError(f"{name}: a boolean is not a value of this option")
    if isinstance(v, str):
        if "\0" in v:
            raise ValueError(f"{name}: the text contains a NUL character")
        return v
    if isinstance(v, numbers.Integral):
        return str(int(v))
    if isinstance(v, numbers.Real):
        x = float(v)
        if x != x:
            return "nan"
        if x in (float("inf"), float("-inf")):
            return "inf" if x > 0 else "-inf"
        return repr(x)  # shortest text that reads back to the same double
    raise TypeError(f"{name}: cannot pass a value of type {type(v).__name__}")


def value_text(v, name="value"):
    """The CLI text of a keyword value: a scalar, a string (a CLI range such as "0.5:8:16" or a
    comma list), or a list/tuple/range/numpy array (a comma list, each number in full precision)."""
    if isinstance(v, np.ndarray):
        v = v.ravel().tolist()
    if isinstance(v, (list, tuple, range)):
        items = list(v)
        if not items:
            raise ValueError(f"{name}: empty list")
        return ",".join(_scalar_text(x.item() if isinstance(x, np.generic) else x, name)
                        for x in items)
    if isinstance(v, np.generic):
        v = v.item()
    return _scalar_text(v, name)


def _column(texts):
    if not texts:
        return np.array([], dtype=float)
    if all(t.lstrip("-").isdigit() for t in texts):
        values = [int(t) for t in texts]
        for dtype in (np.int64, np.uint64):  # a 64-bit seed needs the unsigned type
            info = np.iinfo(dtype)
            if all(info.min <= v <= info.max for v in values):
                return np.array(values, dtype=dtype)
        return np.array(values, dtype=object)
    try:
        # an empty cell: a value a not-converged row could not compute
        return np.array([float(t) if t else float("nan") for t in texts], dtype=float)
    except ValueError:
        return np.array(texts, dtype=object)


def read_csv(path):
    """Reads a CSV written by saddle: returns (columns, rows as lists of strings, provenance).
    Records are read with the csv module (RFC 4180: quoted fields may hold commas); lines
    starting with '#' outside a record are the provenance header."""
    attrs = {"version": None, "command": None, "settings": {}, "timing": None}
    columns, rows = None, []

    def records(f):  # the non-comment lines, for csv.reader; comments go to attrs
        for line in f:
            if line.startswith("#"):
                body = line.rstrip("\r\n")[1:].strip()
                if columns is None and body.startswith("saddle ") and attrs["version"] is None:
                    attrs["version"] = body[len("saddle "):]
                elif body.startswith("timing:"):
                    attrs["timing"] = body[len("timing:"):].strip()
                elif ":" in body:
                    key, _, value = body.partition(":")
                    if key == "command":
                        attrs["command"] = value.strip()
                    else:
                        attrs["settings"][key.strip()] = value.strip()
                continue
            yield line

    with open(path, encoding="utf-8", newline="") as f:
        for fields in csv.reader(records(f), strict=True):
            if not fields:
                continue
            if columns is None:
                columns = fields
            elif len(fields) != len(columns):
                raise RuntimeError(f"saddle wrote a row of {len(fields)} fields under a header "
                                   f"of {len(columns)} ({path})")
            else:
                rows.append(fields)
    return columns or [], rows, attrs


def make_table(columns, rows, attrs):
    data = {c: _column([r[i] for r in rows]) for i, c in enumerate(columns)}
    if _pd is not None:
        table = _pd.DataFrame(data, columns=columns)
    else:
        table = Table(data)
    table.attrs.update(attrs)
    return table


class _ProgressBar:
    def __init__(self, stream):
        self.stream = stream
        self.shown = False

    def __call__(self, done, total):
        if total <= 0 or (done, total) == getattr(self, "last", None):
            return
        self.last = (done, total)
        width = 30
        fill = int(width * done / total)
        self.stream.write(f"\r[{'#' * fill}{'.' * (width - fill)}] {done}/{total} points")
        self.stream.flush()
        self.shown = True

    def close(self):
        if self.shown:
            self.stream.write("\n")
            self.stream.flush()


def _threads_text(threads):
    if threads is None:
        env = os.environ.get("OMP_NUM_THREADS", "").split(",")[0].strip()
        return env if env.isdigit() and int(env) > 0 else None
    if isinstance(threads, bool) or not isinstance(threads, numbers.Integral) or threads < 0:
        raise ValueError("threads: must be an integer >= 0")
    return str(int(threads))


def run(path, kwargs, threads=None, progress=False):
    """Runs subcommand ``path`` (e.g. "slr population") with keyword arguments in the module's
    spelling; returns the table. See :func:`command` for the rules."""
    info = _describe()[path]
    options = {_py_name(o["name"]): o for o in info["options"] if o["name"] not in _HIDDEN}
    names = {o["name"] for o in info["options"]}
    args = ["saddle"] + path.split()
    used = {}
    for key, value in kwargs.items():
        if key not in options:
            raise TypeError(f"saddle.{path.replace(' ', '.')}() got an unexpected keyword "
                            f"argument '{key}'")
        if value is None:
            continue
        opt = options[key]
        if opt["flag"]:
            if value is True or value is False or isinstance(value, np.bool_):
                if value:
                    args.append("--" + opt["name"])
                used[opt["name"]] = bool(value)
                continue
            raise TypeError(f"{key}: a flag takes True or False")
        text = value_text(value, key)
        args += ["--" + opt["name"], text]
        used[opt["name"]] = text
    t = _threads_text(threads)
    if t is not None and "threads" in names:
        args += ["--threads", t]
    if "no-progress" in names:
        args.append("--no-progress")
    # Never a shard of the grid: the program takes its shard from SLURM_ARRAY_TASK_ID/COUNT when
    # --shard is absent, which in a batch array would silently return part of the table.
    run_only = ["--shard", "0/1"] if "shard" in names else []
    fd, out = tempfile.mkstemp(prefix="saddle_", suffix=".csv")
    os.close(fd)
    bar = _ProgressBar(sys.stderr) if progress else None
    try:
        try:
            rc, message = _core.run(args + run_only + ["--out", out], bar)
        finally:
            if bar is not None:
                bar.close()
        if rc == 2:
            raise ValueError(message[len(_ERROR_PREFIX):] if message.startswith(_ERROR_PREFIX)
                             else message)
        if rc == _core.interrupted_exit:
            raise KeyboardInterrupt
        columns, rows, attrs = read_csv(out) if rc in (0, 1) else ([], [], {})
        if rc != 0 and not (rows and attrs.get("version")):
            raise RuntimeError(message or f"saddle exited with code {rc}")
        if rc != 0:  # a validation that wrote its table and then reported disagreements
            warnings.warn(message, RuntimeWarning, stacklevel=3)
            attrs["error"] = message
        attrs["exit_code"] = rc
    finally:
        os.unlink(out)
        # A SIGTERM stopped the call: end the process as the signal would have (no except
        # clause may turn a batch system's kill into a KeyboardInterrupt that is swallowed).
        _core.end_if_terminated()
    if attrs.get("command"):  # commands that record --out: the temporary file is not provenance
        attrs["command"] = attrs["command"].replace(" --out " + out, "")
        if threads is None and t is not None:  # nor the thread count taken from OMP_NUM_THREADS
            attrs["command"] = attrs["command"].replace(" --threads " + t, "")
    attrs["argv"] = args[1:]
    attrs["options"] = used
    if "seed" in names:
        seed = used.get("seed")
        if seed is None:
            seed = next(o["default"] for o in info["options"] if o["name"] == "seed") or None
        attrs["seed"] = int(seed) if seed is not None and str(seed).isdigit() else seed
    return make_table(columns, rows, attrs)


def _doc(path, summary):
    info = _describe()[path]
    lines = [summary.strip("\n"), "", "Parameters", "----------"]
    for o in info["options"]:
        if o["name"] in _HIDDEN:
            continue
        name = _py_name(o["name"])
        if o["flag"]:
            kind = "bool, default False"
        elif o["default"]:
            kind = f"default {o['default']!r} (the CLI's)"
        else:
            kind = "default: set by the command"
        lines.append(f"{name} : {kind}")
        lines.append(f"    --{o['name']}: {o['description']}")
    lines += [
        "threads : int, optional",
        "    OpenMP threads (--threads); default: OMP_NUM_THREADS, else all cores.",
        "progress : bool, default False",
        "    Show a progress bar on stderr while the grid is computed.",
        "",
        "Numeric options take a scalar, a list, a tuple or a numpy array (a sweep; several",
        "swept options give their cartesian product, as on the command line), or the CLI's",
        "text: a comma list 'a,b,c' or a range 'start:stop:count[:log]'.",
        "",
        "Returns",
        "-------",
        "pandas.DataFrame (a dict of numpy arrays when pandas is missing): the CLI's CSV, one row",
        "per point, same columns and values; attrs holds version, command, settings, seed.",
        "",
        "Raises",
        "------",
        "ValueError: bad input (the CLI's one-line message). A point that did not converge is a",
        "row with converged == 0, not an exception. KeyboardInterrupt on Ctrl-C.",
        "",
        f"Command line: saddle {path} [OPTIONS]",
    ]
    return "\n".join(lines)


def command(path, summary, name=None):
    """The Python function of subcommand ``path`` with a generated signature and docstring."""
    info = _describe()[path]
    params = [inspect.Parameter(_py_name(o["name"]), inspect.Parameter.KEYWORD_ONLY, default=None)
              for o in info["options"] if o["name"] not in _HIDDEN]
    params += [inspect.Parameter("threads", inspect.Parameter.KEYWORD_ONLY, default=None),
               inspect.Parameter("progress", inspect.Parameter.KEYWORD_ONLY, default=False)]

    def function(*, threads=None, progress=False, **kwargs):
        return run(path, kwargs, threads=threads, progress=progress)

    function.__name__ = name or path.split()[-1]
    function.__qualname__ = function.__name__
    function.__doc__ = _doc(path, summary)
    function.__signature__ = inspect.Signature(params)
    return function
