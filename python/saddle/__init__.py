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
    saddle.ridge  saddle.ridge_classifier  ...                        every model registered with
                                                                      register_model (tools/cli/models.cpp)
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

from . import mc, rmt, slr, validate  # noqa: E402,F401
from . import _models  # noqa: E402

__all__ = ["slr", "rmt", "mc", "validate", "__version__"]

# One function per model registered with register_model<M> (tools/cli/models.cpp): saddle.ridge,
# saddle.ridge_classifier, ... A model named like a submodule would hide it: refused here.
models = []
for _f in _models.functions():
    if _f.__name__ in globals():
        raise ImportError(f"saddle: model '{_f.card['command']}' is named like saddle.{_f.__name__}")
    globals()[_f.__name__] = _f
    __all__.append(_f.__name__)
    models.append(_f.__name__)
del _f
