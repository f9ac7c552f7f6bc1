// The 1-D Laplace reductions of docs/equations/slr_population.md §7a for normalised activations
// (softmax, normalised softplus): spiked-SLR A, B, 1 - A, 1 - B ((S26)-(S28), (S26a)) and
// max-SLR A, 1 - A ((S27a)). Products of many factors are formed in log space, so L enters only
// as an exponent.
#include <algorithm>
#include <cmath>

#include "equations/slr_laplace_lognormal.hpp"
#include "equations/slr_population_internal.hpp"

namespace saddle {
namespace slr {
namespace detail {

namespace {
// One-token tables on the tau grid: the shared-lattice laplace_table up to q = kLatticeMaxQ
// (about 1e5 lattice nodes), beyond it (softmax) every entry by the log-normal kernel
// (equations/slr_laplace_lognormal.hpp), whose cost does not grow with q.
LapTable one_token_table(Activation act, double mu, double q, const Grid& tau,
                         const PopulationAccuracy& acc) {
  if (act == Activation::Softmax && q > kLatticeMaxQ) return laplace_table_lognormal(mu, q, tau, acc);
  return laplace_table(act, mu, q, tau, acc);
}
}  // namespace

// Spiked-SLR, normalised activation: (S26), (S27), (S28) and 1 - B = (L-1) int L0(mu) L1(0)
// L0(0)^{L-2} dt, conditioned on eps* = 1 (chi_1 ~ N(mu_s, q), others N(0, q)).
std::vector<ABDetail> spiked_normalised(Activation act, double mu_s, double q,
                                        const std::vector<int>& lengths,
                                        const PopulationAccuracy& acc) {
  std::vector<ABDetail> out;
  const double sq = std::sqrt(q);
  const int Lmax = max_length(lengths);
  // t a(Y) ~ 1 for some token value Y = mu + sqrt(q) x, |x| <= x_tail (ridge_tau_grid)
  const double lo = -std::log(double(Lmax)) -
                    log_act_a(act, std::max(mu_s, 0.0) + acc.x_tail * sq) - acc.tail;
  const double hi = std::log(acc.tail) - log_act_a(act, std::min(mu_s, 0.0) - acc.x_tail * sq) + 1.0;
  Grid tau = make_grid(lo, hi, ridge_tau_step(act, sq, Lmax, acc));
  LapTable Ts = one_token_table(act, mu_s, q, tau, acc);
  LapTable T0 = one_token_table(act, 0.0, q, tau, acc);
  for (int L : lengths) {
    ABDetail r;
    if (L == 1) {
      r.A = r.B = 1.0;
      r.cA = r.cB = r.dAB = 0.0;
      out.push_back(r);
      continue;
    }
    double A = 0, B = 0, cA = 0, cB = 0, D1 = 0, D2 = 0;
    const double Lm1 = L - 1;
    for (int i = 0; i < tau.n; ++i) {
      // dt = t dtau: B = int t L1 .., A = int t^2 L2 .. (S26)-(S28)
      const double l0 = T0.logL0[i];
      const double e1 = powlog(l0, Lm1), e2 = powlog(l0, Lm1 - 1), e3 = powlog(l0, Lm1 - 2);
      const double L0s = std::exp(Ts.logL0[i]);
      // D1 = E sum_{l >= 2} s_l^2, D2 = E sum_{l != j >= 2} s_l s_j (the untilted parts of (S27),
      // (S28)): A - B^2 = 2 D1 + D2 - (1 - B)^2 (S8a)
      const double d1 = Lm1 * T0.t2L2[i] * L0s * e2;
      const double d2 = L >= 3 ? Lm1 * (Lm1 - 1) * T0.tL1[i] * T0.tL1[i] * L0s * e3 : 0.0;
      B += Ts.tL1[i] * e1;
      cB += Lm1 * L0s * T0.tL1[i] * e2;
      A += Ts.t2L2[i] * e1 + d1;
      cA += 2.0 * Lm1 * Ts.tL1[i] * T0.tL1[i] * e2 + d2;
      D1 += d1;
      D2 += d2;
    }
    r.A = A * tau.h;
    r.B = B * tau.h;
    r.cA = cA * tau.h;
    r.cB = cB * tau.h;
    r.dAB = (2.0 * D1 + D2) * tau.h - r.cB * r.cB;
    out.push_back(r);
  }
  return out;
}

// Max-SLR, normalised activation, A and 1 - A (§7a): chi ~ N(0, q I_L).
void max_normalised_A(Activation act, double q, const std::vector<int>& lengths,
                      const PopulationAccuracy& acc, std::vector<ABDetail>& out) {
  const double sq = std::sqrt(q);
  const int Lmax = max_length(lengths);
  const double lo = -std::log(double(Lmax)) - log_act_a(act, acc.x_tail * sq) - acc.tail;
  const double hi = std::log(acc.tail) - log_act_a(act, -acc.x_tail * sq) + 1.0;
  Grid tau = make_grid(lo, hi, ridge_tau_step(act, sq, Lmax, acc));
  LapTable T0 = one_token_table(act, 0.0, q, tau, acc);
  for (std::size_t j = 0; j < lengths.size(); ++j) {
    const int L = lengths[j];
    if (one_token_A(L, out[j])) continue;
    double A = 0, cA = 0;
    for (int i = 0; i < tau.n; ++i) {
      const double l0 = T0.logL0[i];
      A += T0.t2L2[i] * powlog(l0, L - 1);
      cA += T0.tL1[i] * T0.tL1[i] * powlog(l0, L - 2);
    }
    out[j].A = A * tau.h * L;
    out[j].cA = cA * tau.h * double(L) * (L - 1);
  }
}

}  // namespace detail
}  // namespace slr
}  // namespace saddle
