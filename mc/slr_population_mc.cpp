// Monte Carlo of the SLR population risk (docs/equations/slr_replica.md §6 "Population module"): field space (S6)
// or explicit finite-D tokens; see mc/slr_population_mc.hpp.
#include "mc/slr_population_mc.hpp"

#include <cmath>
#include <stdexcept>
#include <vector>

#include "mc/slr_sample.hpp"

namespace saddle {
namespace slr {
namespace {

struct Acc {
  double s = 0, s2 = 0;
  long n = 0;
  void add(double x) {
    s += x;
    s2 += x * x;
    ++n;
  }
  Estimate value() const {  // se = sample sd / sqrt(n), from the moments
    Estimate v;
    v.mean = s / n;
    const double var = std::max(0.0, (s2 - s * s / n) / (n - 1));
    v.se = std::sqrt(var / n);
    return v;
  }
};

// Orthonormal-ish directions in R^D with |.|^2 = D: k*, v*, u_k, u_v (Gram-Schmidt).
std::vector<std::vector<double>> directions(int D, Rng& rng) {
  std::vector<std::vector<double>> e(4, std::vector<double>(D));
  for (int a = 0; a < 4; ++a) {
    for (double& x : e[a]) x = rng.normal();
    for (int b = 0; b < a; ++b) {
      double dot = 0;
      for (int i = 0; i < D; ++i) dot += e[a][i] * e[b][i];
      for (int i = 0; i < D; ++i) e[a][i] -= dot / D * e[b][i];
    }
    double nrm = 0;
    for (double x : e[a]) nrm += x * x;
    const double sc = std::sqrt(D / nrm);
    for (double& x : e[a]) x *= sc;
  }
  return e;
}

}  // namespace

PopulationMcResult population_mc(const PopulationSetting& set, double m_k, double q_k,
                                 double m_v, double q_v, const PopulationMcOptions& opt) {
  if (opt.samples < 2) throw std::invalid_argument("population_mc: need >= 2 samples");
  if (!(q_k >= m_k * m_k * (1 - 1e-12)) || !(q_v >= m_v * m_v * (1 - 1e-12)))
    throw std::invalid_argument("population_mc: need q_k >= m_k^2 and q_v >= m_v^2");
  if (opt.D < 0 || (opt.D > 0 && opt.D < 4))
    throw std::invalid_argument("population_mc: D must be 0 (field space) or >= 4");
  FieldSampler sampler(set.task, set.lengths, set.nu, opt.delta);
  Rng rng(opt.seed);
  const double r_k = std::sqrt(std::max(0.0, q_k - m_k * m_k));
  const double r_v = std::sqrt(std::max(0.0, q_v - m_v * m_v));
  Acc risk, A, B, Brb, bayes;
  FieldDraw d;
  std::vector<double> chi, z, s, p;
  if (opt.D == 0) {
    for (long n = 0; n < opt.samples; ++n) {
      sampler.draw(rng, d);
      const int L = d.L;
      chi.resize(L);
      z.resize(L);
      s.resize(L);
      p.resize(L);
      // (S6) fields of the trained k, v
      for (int l = 0; l < L; ++l) chi[l] = m_k * d.chi_star[l] + r_k * rng.normal();
      for (int l = 0; l < L; ++l) z[l] = m_v * d.z_star[l] + r_v * rng.normal();
      attention_weights(set.activation, set.erf_b, chi.data(), L, s.data());
      location_posterior(set.task, set.nu, d.chi_star.data(), L, p.data());
      double f = 0, a = 0, brb = 0, pp = 0;
      for (int l = 0; l < L; ++l) {
        f += s[l] * z[l];
        a += s[l] * s[l];
        brb += p[l] * s[l];
        pp += p[l] * p[l];
      }
      risk.add((d.y - f) * (d.y - f) - opt.delta);
      A.add(a);
      B.add(s[d.eps]);
      Brb.add(brb);
      bayes.add(1.0 - pp);
    }
  } else {
    // Feature space: explicit tokens x_l ~ N(0, I_D), spike / tilt along k*.
    const int D = opt.D;
    auto e = directions(D, rng);
    const auto &ks = e[0], &vs = e[1], &uk = e[2], &uv = e[3];
    std::vector<double> k(D), v(D), x;
    for (int i = 0; i < D; ++i) {
      k[i] = m_k * ks[i] + r_k * uk[i];
      v[i] = m_v * vs[i] + r_v * uv[i];
    }
    const double isD = 1.0 / std::sqrt(double(D));
    std::vector<double> chis, zs;
    for (long n = 0; n < opt.samples; ++n) {
      const int L = sampler.draw_L(rng);
      x.assign(static_cast<std::size_t>(L) * D, 0.0);
      for (double& xi : x) xi = rng.normal();
      int eps = 0;
      chis.resize(L);
      zs.resize(L);
      p.resize(L);
      if (set.task == Task::Spiked) {
        eps = rng.below(L);
        const double a = std::sqrt(set.nu) * isD;
        for (int i = 0; i < D; ++i) x[static_cast<std::size_t>(eps) * D + i] += a * ks[i];
      }
      for (int l = 0; l < L; ++l) {
        double c = 0, zz = 0;
        for (int i = 0; i < D; ++i) {
          c += x[static_cast<std::size_t>(l) * D + i] * ks[i];
          zz += x[static_cast<std::size_t>(l) * D + i] * vs[i];
        }
        chis[l] = c * isD;
        zs[l] = zz * isD;
      }
      if (set.task == Task::Max) eps = draw_max_location(L, chis.data(), set.nu, rng.uniform());
      location_posterior(set.task, set.nu, chis.data(), L, p.data());
      double y = zs[eps];
      if (opt.delta > 0) y += std::sqrt(opt.delta) * rng.normal();
      chi.resize(L);
      z.resize(L);
      s.resize(L);
      for (int l = 0; l < L; ++l) {
        double c = 0, zz = 0;
        for (int i = 0; i < D; ++i) {
          c += x[static_cast<std::size_t>(l) * D + i] * k[i];
          zz += x[static_cast<std::size_t>(l) * D + i] * v[i];
        }
        chi[l] = c * isD;
        z[l] = zz * isD;
      }
      attention_weights(set.activation, set.erf_b, chi.data(), L, s.data());
      double f = 0, a = 0, pp = 0;
      for (int l = 0; l < L; ++l) {
        f += s[l] * z[l];
        a += s[l] * s[l];
        pp += p[l] * p[l];
      }
      risk.add((y - f) * (y - f) - opt.delta);
      A.add(a);
      B.add(s[eps]);
      Brb.add(s[eps]);
      bayes.add(1.0 - pp);
    }
  }
  PopulationMcResult r;
  r.risk = risk.value();
  r.A = A.value();
  r.B = B.value();
  r.B_rb = Brb.value();
  r.bayes = bayes.value();
  r.samples = opt.samples;
  return r;
}

}  // namespace slr
}  // namespace saddle
