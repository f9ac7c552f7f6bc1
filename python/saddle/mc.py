"""Finite-size Monte Carlo simulations of the models (error bars from independent seeds/draws)."""

from ._command import command

slr = command(
    "mc slr",
    """Direct simulation of single-location regression at finite dimension D (docs/equations/slr_replica.md §6):
mode="erm" trains (k, v) by L-BFGS on N = alpha D samples per seed; mode="population" evaluates
the population risk at prescribed overlaps. One row per setting with means and standard errors
over seeds.""")

rmt = command(
    "mc rmt",
    """Finite-size simulation of the nonlinear-attention and ridge interpolation errors
(docs/equations/rmt.md §8): independent draws at n tokens, p = round(c n), means and standard errors.""")

__all__ = ["slr", "rmt"]
