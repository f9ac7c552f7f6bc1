"""Theory against simulation on built-in cases. A table is returned even when a comparison
disagrees; then a RuntimeWarning carries the CLI's message and attrs['exit_code'] is 1."""

from ._command import command

slr = command(
    "validate slr",
    """Population, Bayes and replica theory of single-location regression against direct
simulation (docs/equations/slr_replica.md §6); quick=True runs the built-in quick subset (about 5 s on two cores).""")

rmt = command(
    "validate rmt",
    """Deterministic equivalent of nonlinear attention and the ridge baseline against Monte
Carlo on built-in cases (tanh, ReLU; aligned and not; c = 1/2 and 2) (docs/equations/rmt.md §6, §8);
quick=True: n = 512, 8 draws.""")

__all__ = ["slr", "rmt"]
