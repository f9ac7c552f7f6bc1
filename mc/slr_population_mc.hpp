// Monte Carlo of the SLR population risk (docs/equations/slr_replica.md §6 "Population module", (S5)-(S7), (S9)):
// the predictor f = sigma(chi).z evaluated on sampled sequences, either in field space through
// (S6) (exact at any D) or in feature space with explicit k, v at finite D with the prescribed
// overlaps (k = m_k k* + sqrt(q_k - m_k^2) u_k, v = m_v v* + sqrt(q_v - m_v^2) u_v, u_k, u_v
// orthogonal to each other and to k*, v*, |u|^2 = D). Returns means with standard errors.
#pragma once
#include <cstdint>

#include "equations/slr_model.hpp"
#include "integrators/estimate.hpp"

namespace saddle {
namespace slr {

struct PopulationMcOptions {
  long samples = 100000;     // number of sampled sequences
  std::uint64_t seed = 1;
  double delta = 0.0;        // label noise variance Delta (S4); the excess (y - f)^2 - Delta is reported
  int D = 0;                 // 0: field space (S6); > 0: explicit tokens in R^D (feature space)
};

struct PopulationMcResult {
  Estimate risk;       // E[(y - f)^2] - Delta at (m_k, q_k, m_v, q_v)
  Estimate A;          // E[sum_l s_l^2]
  Estimate B;         // E[s_{eps*}]
  Estimate B_rb;      // Rao-Blackwellised B = E[sum_l p_l s_l] (field space only; else = B)
  Estimate bayes;     // 1 - E[sum_l p_l^2] (S9)
  long samples = 0;
};

// Throws std::invalid_argument on bad input (q < m^2, samples < 2, ...).
PopulationMcResult population_mc(const PopulationSetting& set, double m_k, double q_k,
                                 double m_v, double q_v, const PopulationMcOptions& opt);

}  // namespace slr
}  // namespace saddle
