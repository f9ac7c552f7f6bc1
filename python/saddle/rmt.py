"""Nonlinear attention in the random-matrix regime (docs/equations/rmt.md)."""

from ._command import command

attention = command(
    "rmt attention",
    """Deterministic equivalent of the interpolation error E(gamma) of nonlinear attention
(docs/equations/rmt.md §6, equations (R1)-(R6); error = -gamma^2 dq/dgamma by implicit differentiation (R6)),
with the linear-regression baseline error_ridge (LR3). Sweeps c = p/n, gamma, snr and the
activation; converged == 0 marks a point where the Newton/damped solve missed the tolerance.""")

ridge = command(
    "rmt ridge",
    """Linear-regression baseline E_RR(gamma) in closed form, (LR1)-(LR3) (docs/equations/rmt.md §5);
gamma = 0 gives the ridgeless limit.""")

hermite = command(
    "rmt hermite",
    """Hermite data of activations (docs/equations/rmt.md §3, probabilists' convention): a0 (removed),
a1, a2, nu = E[(f - a0)^2], sigma2 = nu - a1^2, kappa_d.""")

__all__ = ["attention", "ridge", "hermite"]
