#!/usr/bin/env python3
"""Baseline for the SLR trainer: the ERM objective (S13) of `saddle mc slr` minimised by
PyTorch's L-BFGS (float64, strong Wolfe line search, autograd), on the same problem size.

  min_{k,v} 1/2 sum_mu (y_mu - s(X_mu k/sqrt D) . X_mu v/sqrt D)^2 + lambda/2 (|k|^2 + |v|^2)

Spiked SLR (docs/equations/slr_population.md §1.5): tokens x_l ~ N(0, I_D), the location eps* uniform, the spike
sqrt(nu)/sqrt(D) k* added to x_{eps*}, label y = z*_{eps*} (Delta = 0); softmax attention;
informed start k = sqrt(nu) k*, v = v*. The data are drawn here with NumPy (not the C++ streams),
so the minimum agrees with `saddle mc slr` within seed noise, not bit for bit.

Uses Debian's python3-torch when importable; without it, says so and exits 0 (optional baseline).
Prints one line: `torch_erm seconds=<wall> iterations=<n> evals=<n> loss=<train loss/N>
test_error=<mse - Delta on fresh samples> threads=<n>`.
"""
import argparse
import sys
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--L", type=int, default=3)
    ap.add_argument("--nu", type=float, default=2.0)
    ap.add_argument("--lambda", dest="lam", type=float, default=0.1)
    ap.add_argument("--alpha", type=float, default=4.0)
    ap.add_argument("--D", type=int, default=1000)
    ap.add_argument("--n-test", type=int, default=20000)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--gtol", type=float, default=1e-9)
    a = ap.parse_args()
    try:
        import numpy as np
        import torch
    except ImportError as e:
        print(f"torch_erm: skipped: PyTorch not importable ({e}); install Debian's python3-torch "
              "to measure this baseline")
        return 0
    torch.set_num_threads(a.threads)
    rng = np.random.default_rng(a.seed)
    D, L = a.D, a.L
    N = max(1, int(round(a.alpha * D)))
    ks = rng.standard_normal(D)
    vs = rng.standard_normal(D)
    vs -= ks * (ks @ vs) / (ks @ ks)
    ks *= np.sqrt(D) / np.linalg.norm(ks)
    vs *= np.sqrt(D) / np.linalg.norm(vs)

    def draw(n):
        X = rng.standard_normal((n, L, D))
        eps = rng.integers(0, L, n)
        X[np.arange(n), eps, :] += np.sqrt(a.nu) / np.sqrt(D) * ks
        y = X[np.arange(n), eps, :] @ vs / np.sqrt(D)
        return torch.from_numpy(X), torch.from_numpy(y)

    X, y = draw(N)
    Xt, yt = draw(a.n_test)
    isd = 1.0 / np.sqrt(D)
    k = torch.tensor(np.sqrt(a.nu) * ks, requires_grad=True)
    v = torch.tensor(vs.copy(), requires_grad=True)

    def predict(Xb):
        chi = Xb @ k * isd
        z = Xb @ v * isd
        return (torch.softmax(chi, dim=1) * z).sum(dim=1)

    evals = [0]

    def closure():
        opt.zero_grad()
        r = y - predict(X)
        loss = 0.5 * (r * r).sum() + 0.5 * a.lam * ((k * k).sum() + (v * v).sum())
        loss.backward()
        evals[0] += 1
        return loss

    opt = torch.optim.LBFGS([k, v], lr=1.0, max_iter=20000, history_size=20,
                            tolerance_grad=a.gtol, tolerance_change=1e-15,
                            line_search_fn="strong_wolfe")
    t0 = time.perf_counter()
    opt.step(closure)
    secs = time.perf_counter() - t0
    with torch.no_grad():
        r = y - predict(X)
        loss = (0.5 * (r * r).sum() + 0.5 * a.lam * ((k * k).sum() + (v * v).sum())).item() / N
        test = ((yt - predict(Xt)) ** 2).mean().item()
    it = opt.state[opt._params[0]].get("n_iter", -1)
    print(f"torch_erm seconds={secs:.3f} iterations={it} evals={evals[0]} loss={loss:.6g} "
          f"test_error={test:.6g} threads={a.threads} torch={torch.__version__}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
