// Linear-regression baseline of the RMT model, docs/equations/rmt.md §5: Phi = X, closed form (LR1)-(LR3),
// including the ridgeless limit gamma = 0.
#pragma once

namespace saddle {
namespace rmt {

struct RidgeBaseline {
  double m = 0.0;      // (LR1): lim (1/n) tr (Z^T Z / n + gamma)^-1 (inf at gamma = 0, c <= 1)
  double q = 0.0;      // (LR2): lim y^T Q_0 y / n (inf at gamma = 0, c <= 1)
  double error = 0.0;  // (LR3): E_RR(gamma); at gamma = 0 the limit (1 - c)^+ / (1 + snr)
};

// c = p/n > 0, gamma >= 0, snr = |mu|^2 >= 0. Throws std::invalid_argument otherwise.
RidgeBaseline ridge_baseline(double c, double gamma, double snr);

}  // namespace rmt
}  // namespace saddle
