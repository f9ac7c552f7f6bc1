// The SLR attention activations (docs/equations/slr_population.md §2), one definition
// shared by the simulations (mc/slr_sample, mc/slr_erm) and the population Monte Carlo:
//   softmax   s = softmax(chi) (max subtracted);
//   linear    s_l = 1 + chi_l;
//   erf       s_l = 1 + erf(b + chi_l), written erfc(-(b + chi_l)) (no cancellation for b << 0);
//   softplus  s_l = log(1 + e^{chi_l}) / T, T = sum_j log(1 + e^{chi_j}).
// With the values z: f = s.z and w = J^T z, the gradient of s.z in chi:
//   softmax w_l = s_l (z_l - f); linear w_l = z_l; erf w_l = z_l (2/sqrt(pi)) e^{-(b+chi_l)^2};
//   softplus w_l = (z_l - f) sigmoid(chi_l) / T.
// Header-only so that it inlines into the simulation's per-sample loop.
// (The replica prox, equations/slr_replica_prox.hpp, keeps its own Eigen fixed-size softmax and
// linear with the Hessian term T_z; the population equations use expectations of a(y), not
// these element-wise values.)
#pragma once
#include <cmath>

#include "equations/slr_model.hpp"
#include "integrators/special.hpp"

namespace saddle {
namespace slr {

// Fills s = sigma(chi) (L entries); when z is given, also w = J^T z (if w is not null) and
// returns f = s.z (0 when z is null).
inline double attention_forward(Activation act, double erf_b, int L, const double* chi,
                                const double* z, double* s, double* w) {
  double f = 0;
  switch (act) {
    case Activation::Linear:
      for (int l = 0; l < L; ++l) s[l] = 1.0 + chi[l];
      if (!z) return f;
      for (int l = 0; l < L; ++l) {
        if (w) w[l] = z[l];
        f += s[l] * z[l];
      }
      return f;
    case Activation::Erf: {
      const double c = 2.0 / std::sqrt(kPi);
      for (int l = 0; l < L; ++l) s[l] = std::erfc(-(erf_b + chi[l]));
      if (!z) return f;
      for (int l = 0; l < L; ++l) {
        const double u = erf_b + chi[l];
        if (w) w[l] = z[l] * c * std::exp(-u * u);
        f += s[l] * z[l];
      }
      return f;
    }
    case Activation::Softmax:
      softmax(chi, s, static_cast<std::size_t>(L));
      if (!z) return f;
      for (int l = 0; l < L; ++l) f += s[l] * z[l];
      if (w)
        for (int l = 0; l < L; ++l) w[l] = s[l] * (z[l] - f);
      return f;
    case Activation::Softplus: {
      double T = 0;
      for (int l = 0; l < L; ++l) {
        s[l] = log1p_exp(chi[l]);
        T += s[l];
      }
      for (int l = 0; l < L; ++l) s[l] /= T;
      if (!z) return f;
      for (int l = 0; l < L; ++l) f += s[l] * z[l];
      if (w)
        for (int l = 0; l < L; ++l) w[l] = (z[l] - f) * sigmoid(chi[l]) / T;
      return f;
    }
  }
  return f;
}

// s = sigma(chi) only.
inline void attention_weights(Activation act, double erf_b, const double* chi, int L, double* s) {
  attention_forward(act, erf_b, L, chi, nullptr, s, nullptr);
}

}  // namespace slr
}  // namespace saddle
