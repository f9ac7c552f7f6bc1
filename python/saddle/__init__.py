"""saddle: order-parameter fixed-point equations of high-dimensional learning theory, from Python.

Every function runs the same C++ code as the ``saddle`` program, in this process, and returns its
CSV as a table (a ``pandas.DataFrame``; a dict of numpy arrays without pandas): same columns,
names and values, with the header's provenance (version, command, settings, seed) in ``.attrs``.
Keywords are the CLI's option names with ``-`` replaced by ``_`` (``lambda`` is ``lambda_``); an
omitted keyword takes the CLI's default. Numeric options take a scalar, a list, a numpy array or
a CLI range string such as ``"0.5:8:16"``; several swept options give their cartesian product.

Functions::

    saddle.slr.population   saddle.slr.erm     saddle.slr.bayes       single-location regression
    saddle.rmt.attention    saddle.rmt.ridge   saddle.rmt.hermite     nonlinear attention (RMT)
    saddle.ridge                                                      ridge fixture (closed form)
    saddle.mc.slr           saddle.mc.rmt                             finite-size simulations
    saddle.validate.slr     saddle.validate.rmt                       theory against simulation

Bad input raises ValueError with the CLI's message; a point that did not converge is a row with
``converged == 0``; Ctrl-C stops a run and raises KeyboardInterrupt; ``threads=`` sets the
OpenMP threads (default: OMP_NUM_THREADS), ``progress=True`` shows a progress bar.
"""

from . import _core
from . import _command
from ._command import value_text  # noqa: F401

__version__ = _core.version

ridge = _command.command(
    "ridge",
    """Ridge regression fixture: the replica fixed point of ridge regression on a Gaussian
teacher (docs/equations/ridge.md §4.8, prior (S14)), which has a closed form; test_error = 1 - 2m + q.
Sweeps alpha, lambda, delta; columns m, q, V, their conjugates, test/train error, converged.""",
    name="ridge")

from . import mc, rmt, slr, validate  # noqa: E402,F401

__all__ = ["slr", "rmt", "mc", "validate", "ridge", "__version__"]
