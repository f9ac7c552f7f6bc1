// SLR population level (docs/equations/slr_population.md §3.3-§3.7, §7a): A, B of (S7) for softmax, linear, erf and
// normalised softplus attention, the Bayes risk (S9), the closed forms (S10)-(S12), and the
// optimisation of §3.4. See equations/slr_population.hpp for the reductions used.
//
// This file holds the accuracy settings, the domain checks, the dispatch of A and B to the
// evaluation paths (equations/slr_population_internal.hpp: the 1-D Laplace reductions, max-SLR B
// at finite and infinite nu, the element-wise activations; tables in
// equations/slr_laplace_tables.hpp), the risk (S7)-(S8), the Bayes risk (S9), mu_1 (S11) and the
// linear closed forms (S10), (S12). The optimiser is equations/slr_population_optimise.cpp.
#include "equations/slr_population.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "equations/slr_population_internal.hpp"

namespace saddle {
namespace slr {

using namespace detail;

namespace {
std::string fmt_num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}
}  // namespace

namespace detail {
void check_lengths(const std::vector<int>& lengths) {
  if (lengths.empty()) throw std::invalid_argument("SLR population: empty length set");
  for (int L : lengths)
    if (L < 1) throw std::invalid_argument("SLR population: L must be >= 1");
}
void check_nu(Task task, double nu) {
  if (std::isnan(nu) || nu < 0) throw std::invalid_argument("SLR population: nu must be >= 0");
  if (task == Task::Spiked && std::isinf(nu))
    throw std::invalid_argument("SLR population: nu = inf is only defined for max-SLR");
  if (std::isfinite(nu) && nu > kPopulationMaxNu)
    throw PopulationDomainError("SLR population: nu must be <= 1e3" +
                                std::string(task == Task::Max ? " or inf" : "") +
                                " (the domain of the population formulas)");
}
}  // namespace detail

double population_max_qk(Task task, Activation act, double nu) {
  switch (act) {
    case Activation::Linear: return kPopulationMaxQkLinear;
    case Activation::Erf: return kPopulationMaxQkErf;
    case Activation::Softmax: return task == Task::Spiked ? kPopulationMaxQkSoftmax : kPopulationMaxQkSoftmaxMax;
    case Activation::Softplus: break;
  }
  if (task == Task::Spiked) return kPopulationMaxQkSoftplus;
  return std::isinf(nu) ? kPopulationMaxQkSoftplusMaxInf : kPopulationMaxQkSoftplusMax;
}

double population_max_mk(const PopulationSetting& set, double dq_k) {
  const double qmax = population_max_qk(set.task, set.activation, set.nu);
  double m = qmax > dq_k ? std::sqrt(qmax - dq_k) : 0.0;
  if (set.task == Task::Max && set.activation == Activation::Erf)
    m = std::min(m, kPopulationMaxErfSlope * std::sqrt(1.0 + 2.0 * dq_k));
  return m;
}

void check_population_domain(const PopulationSetting& set, double m_k, double q_k) {
  check_lengths(set.lengths);
  check_nu(set.task, set.nu);
  if (!(std::abs(set.erf_b) <= kPopulationMaxErfB))
    throw std::invalid_argument("SLR population: erf b must be in [-10, 10]");
  if (!std::isfinite(m_k) || !std::isfinite(q_k))
    throw PopulationDomainError("SLR population: the key overlaps m_k = " + fmt_num(m_k) +
                                ", q_k = " + fmt_num(q_k) + " are not finite");
  if (q_k < m_k * m_k * (1.0 - 1e-12) - 1e-300)
    throw std::invalid_argument("SLR population: q_k must be >= m_k^2");
  const double qmax = population_max_qk(set.task, set.activation, set.nu);
  if (q_k > qmax * (1.0 + 1e-12))  // the rounding of m_k^2 at the edge stays inside
    throw PopulationDomainError("SLR population: q_k = " + fmt_num(q_k) + " is above " +
                                fmt_num(qmax) + ", the largest key overlap of " +
                                to_string(set.activation) + " attention in " + to_string(set.task) +
                                "-SLR" + (set.task == Task::Max && std::isinf(set.nu) ? " at nu = inf" : ""));
  // erf, max-SLR: B integrates 1 + erf(b + m x) (a step of width ~sqrt(1 + 2 r^2)/m) against the
  // tabulated density of chi*_{eps*} (step 0.02)
  if (set.task == Task::Max && set.activation == Activation::Erf &&
      std::abs(m_k) > kPopulationMaxErfSlope * std::sqrt(1.0 + 2.0 * std::max(0.0, q_k - m_k * m_k)))
    throw PopulationDomainError("SLR population: erf attention in max-SLR needs |m_k| <= 10 sqrt(1 + 2 (q_k - m_k^2)); m_k = " +
                                fmt_num(m_k) + ", q_k = " + fmt_num(q_k));
}

// ---------------------------------------------------------------------------------------------
ABDetail population_AB_detail(const PopulationSetting& set, double m_k, double q_k,
                              const PopulationAccuracy& acc) {
  check_population_domain(set, m_k, q_k);
  q_k = std::max(q_k, m_k * m_k);
  const std::vector<int>& Ls = set.lengths;
  std::vector<ABDetail> per(Ls.size());
  if (!normalised(set.activation)) {
    for (std::size_t j = 0; j < Ls.size(); ++j) {
      per[j] = elementwise_AB(set, Ls[j], m_k, q_k, acc);
      if (set.task == Task::Max) per[j].B = elementwise_max_B(set, Ls[j], m_k, q_k, acc);
    }
  } else if (q_k == 0.0) {
    // s is uniform: A = B = 1/L.
    for (std::size_t j = 0; j < Ls.size(); ++j) {
      per[j].A = per[j].B = 1.0 / Ls[j];
      per[j].cA = per[j].cB = 1.0 - 1.0 / Ls[j];
    }
  } else if (set.task == Task::Spiked) {
    per = spiked_normalised(set.activation, m_k * std::sqrt(set.nu), q_k, Ls, acc);
  } else {
    max_normalised_A(set.activation, q_k, Ls, acc, per);
    if (set.nu == 0.0) {
      for (std::size_t j = 0; j < Ls.size(); ++j) {
        per[j].B = 1.0 / Ls[j];
        per[j].cB = 1.0 - per[j].B;
      }
    } else if (std::isinf(set.nu)) {
      // X-representation (exact at q = m^2; softmax via Lambda_{r^2}); softplus with a large
      // key noise r uses the Y-representation instead (its xi-average would be costly).
      double r2 = q_k - m_k * m_k;
      if (r2 <= 1e-14 * std::max(1.0, q_k)) r2 = 0.0;
      const double s_eta2 = r2 / q_k;
      if (m_k == 0.0)
        for (std::size_t j = 0; j < Ls.size(); ++j) {
          per[j].B = 1.0 / Ls[j];  // s independent of the location
          per[j].cB = 1.0 - per[j].B;
        }
      else if (set.activation == Activation::Softmax || s_eta2 < 0.0625)
        max_normalised_B_inf_x(set.activation, m_k, std::sqrt(r2), Ls, acc, per);
      else
        max_normalised_B_inf_smooth(set.activation, m_k, q_k, Ls, acc, per);
    } else {
      PopulationAccuracy a2 = acc;
      a2.h_tau *= acc.coarse_2d;
      a2.h_x *= acc.coarse_2d;
      a2.steep *= acc.coarse_2d;
      max_normalised_B_finite(set.activation, set.nu, m_k, q_k, Ls, a2, per);
    }
  }
  ABDetail r;
  r.A = r.B = r.cA = r.cB = 0.0;
  for (const auto& p : per) {
    r.A += p.A;
    r.B += p.B;
    r.cA += p.cA;
    r.cB += p.cB;
  }
  const double n = static_cast<double>(per.size());
  r.A /= n;
  r.B /= n;
  r.cA /= n;
  r.cB /= n;
  // A - B^2 of the averages: mean of the per-length A_L - B_L^2 plus the variance of B_L over the
  // law (from the complements, without cancellation)
  if (std::isfinite(per.front().dAB)) {
    double d = 0.0, v = 0.0;
    for (const auto& p : per) {
      d += p.dAB;
      v += (p.cB - r.cB) * (p.cB - r.cB);
    }
    r.dAB = (d + v) / n;
  }
  return r;
}

AB population_AB(const PopulationSetting& set, double m_k, double q_k,
                 const PopulationAccuracy& acc) {
  ABDetail d = population_AB_detail(set, m_k, q_k, acc);
  AB r;
  r.A = d.A;
  r.B = d.B;
  return r;
}

AB population_AB(const PopulationSetting& set, double m_k, double q_k) {
  return population_AB(set, m_k, q_k, PopulationAccuracy{});
}

double population_risk(const PopulationSetting& set, double m_k, double q_k, double m_v,
                       double q_v) {
  if (!std::isfinite(m_v) || !std::isfinite(q_v) || q_v < m_v * m_v * (1.0 - 1e-12) - 1e-300)
    throw std::invalid_argument("SLR population: need finite m_v, q_v with q_v >= m_v^2");
  AB ab = population_AB(set, m_k, q_k);
  return 1.0 - 2.0 * m_v * ab.B + q_v * ab.A;  // (S7)
}

double risk_optimal_v(const ABDetail& ab) {
  // The complement form only helps when A is near 1 (small risks); for small A it would
  // amplify the absolute error of 1 - A.
  if (std::isfinite(ab.cA) && std::isfinite(ab.cB) && ab.A >= 0.5) {
    // (S8) 1 - B^2/A = [(1 - B)(1 + B) - (1 - A)] / A
    const double r = (ab.cB * (1.0 + ab.B) - ab.cA) / ab.A;
    // when that difference cancels (the risk far below 1 - B), A - B^2 from its positive parts
    if (std::isfinite(ab.dAB) && !(r > 1e-3 * ab.cB)) return ab.dAB / ab.A;
    return r;
  }
  return 1.0 - ab.B * ab.B / ab.A;
}

// The softmax predictor of the Bayes risk (S9) at (task, lengths, nu).
static PopulationSetting softmax_setting(Task task, const std::vector<int>& lengths, double nu) {
  PopulationSetting s;
  s.task = task;
  s.lengths = lengths;
  s.nu = nu;
  s.activation = Activation::Softmax;
  return s;
}

double bayes_risk(Task task, const std::vector<int>& lengths, double nu,
                  const PopulationAccuracy& acc) {
  check_lengths(lengths);
  check_nu(task, nu);
  if (task == Task::Max && std::isinf(nu)) return 0.0;
  // (S9) E_Bayes = 1 - E sum p^2 = 1 - A of softmax with chi = c_nu chi*:
  // spiked: (S28) with mu_s = nu, q = nu; max: q = nu^2.
  const PopulationSetting s = softmax_setting(task, lengths, nu);
  const double c = c_nu(task, nu);
  if (task == Task::Max && c > 0.0) {
    // only A is needed: (S27a) at q = nu^2, without the 2-D B of population_AB_detail
    std::vector<ABDetail> per(lengths.size());
    max_normalised_A(Activation::Softmax, c * c, lengths, acc, per);
    double cA = 0.0;
    for (const auto& p : per) cA += p.cA;
    return cA / static_cast<double>(per.size());
  }
  ABDetail d = population_AB_detail(s, c, c * c, acc);
  return d.cA;
}

double bayes_risk(Task task, const std::vector<int>& lengths, double nu) {
  return bayes_risk(task, lengths, nu, PopulationAccuracy{});
}

double bayes_risk_via_B(Task task, const std::vector<int>& lengths, double nu,
                        const PopulationAccuracy& acc) {
  check_lengths(lengths);
  check_nu(task, nu);
  const PopulationSetting s = softmax_setting(task, lengths, nu);
  const double c = c_nu(task, nu);
  if (task == Task::Max && std::isinf(nu)) return 0.0;
  return population_AB_detail(s, c, c * c, acc).cB;
}

double max_mu1(int L, double nu, const PopulationAccuracy& acc) {
  if (L < 1) throw std::invalid_argument("max_mu1: L must be >= 1");
  check_nu(Task::Max, nu);
  auto D = tilt_density(nu, L, acc);
  double s = 0.0;
  for (int k = 0; k < D->x.n; ++k) s += D->f[k] * D->x.at(k);
  return s * D->x.h;
}

LinearOptimum linear_closed_form(Task task, const std::vector<int>& lengths, double nu,
                                 const PopulationAccuracy& acc) {
  check_lengths(lengths);
  check_nu(task, nu);
  double Lbar = 0.0;
  for (int L : lengths) Lbar += L;
  Lbar /= lengths.size();
  LinearOptimum r;
  if (task == Task::Spiked) {
    // (S10) with L -> E[L]: m_k = sqrt(nu)(L-1)/L; A = L + 2 m sqrt(nu) + m^2 (L + nu), B = 1 + m sqrt(nu).
    r.m_k = std::sqrt(nu) * (Lbar - 1.0) / Lbar;
    const double A = Lbar + 2 * r.m_k * std::sqrt(nu) + r.m_k * r.m_k * (Lbar + nu);
    const double B = 1 + r.m_k * std::sqrt(nu);
    r.m_v = B / A;
    r.risk = Lbar * (Lbar - 1.0) / (Lbar * Lbar + nu * (Lbar - 1.0));
  } else {
    // (S12): mu_1 = nu E_Bayes (finite nu, Stein) or E[max of L Gaussians] (nu = inf).
    double mu = 0.0;
    for (int L : lengths) {
      if (std::isinf(nu))
        mu += max_mu1(L, nu, acc);
      else
        mu += nu * bayes_risk(task, {L}, nu, acc);
    }
    mu /= lengths.size();
    r.m_k = mu;
    r.m_v = 1.0 / Lbar;
    r.risk = 1.0 - (1.0 + mu * mu) / Lbar;
  }
  return r;
}

void clear_population_caches() { clear_tilt_density_cache(); }

}  // namespace slr
}  // namespace saddle
