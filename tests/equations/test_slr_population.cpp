// Tests of the SLR population module (docs/equations/slr_population.md §3, §7a, §8; mc/slr_population_mc for docs/equations/slr_replica.md §6).
// Every expected value is independent of the code under test: closed forms of §3.6, the spec's
// smoke values (§8, computed independently and confirmed by tensor Gauss-Hermite), tensor
// Gauss-Hermite written here, 1-D adaptive quadrature, and Monte Carlo within 3 standard errors.
#include <catch2/catch.hpp>

#include <cmath>
#include <functional>
#include <limits>
#include <vector>

#include "equations/slr_population.hpp"
#include "integrators/quadrature.hpp"
#include "integrators/special.hpp"
#include "mc/slr_population_mc.hpp"
#include "mc/slr_sample.hpp"

using namespace saddle;
using namespace saddle::slr;

namespace {
const double kInfty = std::numeric_limits<double>::infinity();

PopulationSetting setting(Task t, std::vector<int> Ls, double nu, Activation a, double b = 0.0) {
  PopulationSetting s;
  s.task = t;
  s.lengths = std::move(Ls);
  s.nu = nu;
  s.activation = a;
  s.erf_b = b;
  return s;
}

// Tensor Gauss-Hermite of A and B: coordinates zeta (L teacher) and xi (L key noise, if r > 0).
AB tensor_gh(const PopulationSetting& s, double m, double q, int n) {
  const int L = s.lengths[0];
  const double r = q - m * m > 1e-12 ? std::sqrt(q - m * m) : 0.0;
  const int dim = r > 0 ? 2 * L : L;
  GaussianTensorRule rule(Eigen::VectorXd::Zero(dim), Eigen::MatrixXd::Identity(dim, dim), n);
  std::vector<double> cs(L), chi(L), sv(L), p(L);
  double A = 0, B = 0;
  for (int j = 0; j < rule.size(); ++j) {
    const double* x = rule.point(j);
    for (int l = 0; l < L; ++l) {
      cs[l] = x[l];
      if (s.task == Task::Spiked && l == 0) cs[l] += std::sqrt(s.nu);  // eps* = 1
      chi[l] = m * cs[l] + (r > 0 ? r * x[L + l] : 0.0);
    }
    attention_weights(s.activation, s.erf_b, chi.data(), L, sv.data());
    double a = 0, b = 0;
    for (int l = 0; l < L; ++l) a += sv[l] * sv[l];
    if (s.task == Task::Spiked) {
      b = sv[0];
    } else {
      location_posterior(s.task, s.nu, cs.data(), L, p.data());
      for (int l = 0; l < L; ++l) b += p[l] * sv[l];
    }
    A += rule.weight(j) * a;
    B += rule.weight(j) * b;
  }
  return {A, B};
}
}  // namespace

TEST_CASE("slr population: spec smoke values (§8)", "[slr][population]") {
  // Spec §8, computed independently with (S26)-(S30) and 100-node tensor Gauss-Hermite.
  auto d1 = population_AB(setting(Task::Spiked, {3}, 2.0, Activation::Softmax), 1.0, 1.5);
  CHECK(d1.A == Approx(0.5818371052).epsilon(2e-10));
  CHECK(d1.B == Approx(0.5742182722).epsilon(2e-10));
  auto d2 = population_AB(setting(Task::Max, {3}, 2.0, Activation::Softmax), 1.0, 1.0);
  CHECK(d2.A == Approx(0.4815657208).epsilon(2e-10));
  CHECK(d2.B == Approx(0.5448195617).epsilon(2e-10));
}

TEST_CASE("slr population: Laplace reduction = tensor Gauss-Hermite at L = 2, 3", "[slr][population]") {
  struct Case {
    Task t;
    int L;
    double nu, m, q;
    Activation a;
    int n;
  };
  const std::vector<Case> cases{
      {Task::Spiked, 2, 1.0, 0.8, 0.64, Activation::Softmax, 80},
      {Task::Spiked, 3, 1.0, 0.7, 0.49, Activation::Softplus, 60},
      {Task::Spiked, 2, 2.0, 0.6, 0.8, Activation::Softmax, 30},
      {Task::Spiked, 2, 1.5, 0.6, 0.8, Activation::Softplus, 30},
      {Task::Spiked, 3, 2.0, 0.5, 0.25, Activation::Erf, 60},
      {Task::Max, 2, 1.0, 0.8, 0.64, Activation::Softmax, 80},
      {Task::Max, 3, 1.0, 0.7, 0.49, Activation::Softplus, 60},
      {Task::Max, 2, 1.0, 0.6, 0.8, Activation::Softmax, 30},
      {Task::Max, 2, 1.0, 0.6, 0.8, Activation::Softplus, 30},
      {Task::Max, 3, 1.0, 0.5, 0.25, Activation::Erf, 60},
      {Task::Max, 2, 1.0, 0.5, 0.5, Activation::Erf, 30},
  };
  for (const auto& c : cases) {
    auto s = setting(c.t, {c.L}, c.nu, c.a, c.a == Activation::Erf ? -0.3 : 0.0);
    AB lap = population_AB(s, c.m, c.q);
    AB gh = tensor_gh(s, c.m, c.q, c.n);
    INFO(to_string(c.t) << " L=" << c.L << " nu=" << c.nu << " " << to_string(c.a) << " m=" << c.m
                        << " q=" << c.q);
    CHECK(lap.A == Approx(gh.A).epsilon(2e-7));
    CHECK(lap.B == Approx(gh.B).epsilon(2e-7));
  }
}

TEST_CASE("slr population: 6 significant digits under quadrature refinement", "[slr][population]") {
  const PopulationAccuracy def{};
  const PopulationAccuracy fine = def.refined(2.0);
  struct Case {
    Task t;
    double nu;
    Activation a;
    double m, q;
  };
  const std::vector<Case> cases{{Task::Spiked, 4.0, Activation::Softmax, 2.0, 4.0},
                                {Task::Spiked, 2.0, Activation::Softplus, 3.0, 9.5},
                                {Task::Max, 3.0, Activation::Softmax, 2.0, 4.0},
                                {Task::Max, 2.0, Activation::Softplus, 3.0, 9.0},
                                {Task::Max, kInfty, Activation::Softmax, 3.0, 9.0},
                                {Task::Max, 2.0, Activation::Erf, 1.5, 2.25}};
  for (const auto& c : cases)
    for (int L : {2, 10, 1000}) {
      auto s = setting(c.t, {L}, c.nu, c.a, -1.0);
      auto d0 = population_AB_detail(s, c.m, c.q, def);
      auto d1 = population_AB_detail(s, c.m, c.q, fine);
      INFO(to_string(c.t) << " nu=" << c.nu << " " << to_string(c.a) << " L=" << L);
      CHECK(risk_optimal_v(d0) == Approx(risk_optimal_v(d1)).epsilon(1e-7));
      CHECK(d0.A == Approx(d1.A).epsilon(1e-7));
      CHECK(d0.B == Approx(d1.B).epsilon(1e-7));
    }
}

TEST_CASE("slr population: linear attention closed forms (S10), (S12)", "[slr][population]") {
  for (int L : {2, 3, 7}) {
    for (double nu : {0.5, 2.0, 9.0}) {
      auto opt = optimise_population(setting(Task::Spiked, {L}, nu, Activation::Linear), {});
      INFO("L=" << L << " nu=" << nu);
      CHECK(opt.risk == Approx(L * (L - 1.0) / (L * L + nu * (L - 1.0))).epsilon(1e-9));  // (S10)
      CHECK(opt.m_k == Approx(std::sqrt(nu) * (L - 1.0) / L).margin(1e-5));
    }
  }
  // variable L: (S10) with L -> E[L] = 2
  auto v = optimise_population(setting(Task::Spiked, {1, 2, 3}, 2.0, Activation::Linear), {});
  CHECK(v.risk == Approx(2.0 / (4.0 + 2.0)).epsilon(1e-9));
  // max-SLR at nu = inf: exact values of (S12)
  auto m2 = optimise_population(setting(Task::Max, {2}, kInfty, Activation::Linear), {});
  CHECK(m2.risk == Approx(0.5 - 0.5 / kPi).epsilon(1e-9));
  CHECK(m2.m_k == Approx(1.0 / std::sqrt(kPi)).margin(1e-5));
  auto m3 = optimise_population(setting(Task::Max, {3}, kInfty, Activation::Linear), {});
  CHECK(m3.risk == Approx(2.0 / 3.0 - 3.0 / (4.0 * kPi)).epsilon(1e-9));
  CHECK(m3.m_k == Approx(1.5 / std::sqrt(kPi)).margin(1e-5));
  // finite nu: (S12) with mu_1 = nu E_Bayes (Stein) against the density mean of chi*_{eps*}
  for (int L : {2, 5, 100}) {
    const double nu = 1.5;
    const double mu1 = nu * bayes_risk(Task::Max, {L}, nu);
    CHECK(max_mu1(L, nu) == Approx(mu1).epsilon(1e-8));
    auto o = optimise_population(setting(Task::Max, {L}, nu, Activation::Linear), {});
    CHECK(o.risk == Approx(1.0 - (1.0 + mu1 * mu1) / L).epsilon(1e-9));
  }
}

TEST_CASE("slr population: Bayes risk, L = 2 integral, Nishimori, limits", "[slr][population]") {
  auto sig = [](double u) { return sigmoid(u); };
  for (double nu : {0.5, 2.0, 6.0}) {
    for (Task t : {Task::Spiked, Task::Max}) {
      const double mean = t == Task::Spiked ? nu : 0.0;
      const double var = t == Task::Spiked ? 2 * nu : 2 * nu * nu;
      auto r = integrate_adaptive(
          [&](double x) {
            const double u = mean + std::sqrt(var) * x;
            return 2.0 * sig(u) * sig(-u) * norm_pdf(x);
          },
          -kInfty, kInfty, 1e-14, 1e-12);
      INFO(to_string(t) << " nu=" << nu);
      CHECK(bayes_risk(t, {2}, nu) == Approx(r.value).epsilon(1e-8));
      for (int L : {2, 5, 1000})
        CHECK(bayes_risk(t, {L}, nu) ==
              Approx(bayes_risk_via_B(t, {L}, nu, PopulationAccuracy{})).epsilon(1e-8));
    }
  }
  CHECK(bayes_risk(Task::Max, {3}, kInfty) == 0.0);
  CHECK(bayes_risk(Task::Spiked, {1}, 3.0) == 0.0);
  // L -> inf: L (1 - E_Bayes) -> e^{c_nu^2} (spiked nu = 1: e; max nu = 1: e)
  const double L = 1e7;
  CHECK(L * (1.0 - bayes_risk(Task::Spiked, {int(L)}, 1.0)) == Approx(std::exp(1.0)).epsilon(2e-3));
  CHECK(L * (1.0 - bayes_risk(Task::Max, {int(L)}, 1.0)) == Approx(std::exp(1.0)).epsilon(2e-3));
}

TEST_CASE("slr population: softmax optimum at m_k = c_nu equals Bayes (Prop. 4.2)", "[slr][population]") {
  struct Case {
    Task t;
    std::vector<int> Ls;
    double nu;
  };
  const std::vector<Case> cases{{Task::Spiked, {2}, 1.0},    {Task::Spiked, {3}, 4.0},
                                {Task::Spiked, {1000}, 2.0}, {Task::Spiked, {1, 2, 3}, 3.0},
                                {Task::Max, {2}, 1.5},       {Task::Max, {10}, 2.5},
                                {Task::Max, {1, 2, 3}, 2.0}};
  for (const auto& c : cases) {
    auto o = optimise_population(setting(c.t, c.Ls, c.nu, Activation::Softmax), {});
    const double cn = c_nu(c.t, c.nu);
    INFO(to_string(c.t) << " L0=" << c.Ls[0] << " nu=" << c.nu);
    CHECK(o.m_k == Approx(cn).margin(2e-3 * std::max(1.0, cn)));
    CHECK(o.risk == Approx(bayes_risk(c.t, c.Ls, c.nu)).epsilon(1e-8));
    CHECK(o.m_v == Approx(1.0).margin(1e-6));  // A = B at the optimum
  }
}

TEST_CASE("slr population: Laplace reduction agrees with Monte Carlo at L = 10 and 1000", "[slr][population]") {
  struct Case {
    Task t;
    int L;
    double nu, m, q;
    Activation a;
    long n;
  };
  const std::vector<Case> cases{
      {Task::Spiked, 10, 2.0, 1.2, 1.8, Activation::Softmax, 200000},
      {Task::Max, 10, 2.0, 1.5, 2.25, Activation::Softmax, 200000},
      {Task::Max, 10, kInfty, 2.0, 4.5, Activation::Softplus, 200000},
      {Task::Spiked, 1000, 4.0, 2.5, 6.25, Activation::Softmax, 8000},
      {Task::Max, 1000, 2.0, 2.0, 4.0, Activation::Softplus, 8000},
      {Task::Max, 1000, kInfty, 3.0, 9.0, Activation::Softmax, 8000},
  };
  std::uint64_t seed = 11;
  for (const auto& c : cases) {
    auto s = setting(c.t, {c.L}, c.nu, c.a);
    AB lap = population_AB(s, c.m, c.q);
    PopulationMcOptions mo;
    mo.samples = c.n;
    mo.seed = seed++;
    auto mc = population_mc(s, c.m, c.q, 1.0, 1.0, mo);
    INFO(to_string(c.t) << " L=" << c.L << " nu=" << c.nu << " " << to_string(c.a) << " A " << lap.A
                        << " vs " << mc.A.mean << " +- " << mc.A.se << "; B " << lap.B << " vs "
                        << mc.B_rb.mean << " +- " << mc.B_rb.se);
    CHECK(std::abs(lap.A - mc.A.mean) < 3.0 * mc.A.se);
    CHECK(std::abs(lap.B - mc.B_rb.mean) < 3.0 * mc.B_rb.se);
  }
}

TEST_CASE("slr population: (S7) matches direct Monte Carlo of the predictor", "[slr][population]") {
  // random points with q >= m^2; field space (S6) and explicit tokens at D = 40
  struct Case {
    Task t;
    std::vector<int> Ls;
    double nu;
    Activation a;
    double mk, qk, mv, qv;
    int D;
  };
  const std::vector<Case> cases{
      {Task::Spiked, {3}, 2.0, Activation::Softmax, 0.9, 1.3, 0.7, 0.8, 0},
      {Task::Max, {2}, kInfty, Activation::Softmax, 1.7, 3.1, 0.6, 0.5, 0},
      {Task::Max, {4}, 1.5, Activation::Softplus, 1.1, 1.6, 0.8, 1.0, 0},
      {Task::Spiked, {1, 2, 3}, 3.0, Activation::Erf, 0.4, 0.3, 0.3, 0.2, 0},
      {Task::Max, {3}, 2.0, Activation::Linear, 0.5, 0.4, 0.3, 0.1, 0},
      {Task::Spiked, {3}, 2.0, Activation::Softmax, 0.9, 1.3, 0.7, 0.8, 40},
      {Task::Max, {3}, 2.0, Activation::Softplus, 1.2, 1.7, 0.9, 1.0, 40},
  };
  std::uint64_t seed = 101;
  for (const auto& c : cases) {
    auto s = setting(c.t, c.Ls, c.nu, c.a, -0.4);
    const double E = population_risk(s, c.mk, c.qk, c.mv, c.qv);
    PopulationMcOptions mo;
    mo.samples = c.D > 0 ? 40000 : 200000;
    mo.seed = seed++;
    mo.D = c.D;
    mo.delta = 0.1;
    auto mc = population_mc(s, c.mk, c.qk, c.mv, c.qv, mo);
    INFO(to_string(c.t) << " " << to_string(c.a) << " D=" << c.D << ": E = " << E << " MC "
                        << mc.risk.mean << " +- " << mc.risk.se);
    CHECK(std::abs(E - mc.risk.mean) < 3.0 * mc.risk.se);
  }
}

TEST_CASE("slr population: orderings over a grid", "[slr][population]") {
  for (Task t : {Task::Spiked, Task::Max})
    for (double nu : {1.0, 3.0})
      for (std::vector<int> Ls : {std::vector<int>{2}, std::vector<int>{5}, std::vector<int>{1, 2, 3}}) {
        const double eb = bayes_risk(t, Ls, nu);
        auto sm = optimise_population(setting(t, Ls, nu, Activation::Softmax), {});
        auto sp = optimise_population(setting(t, Ls, nu, Activation::Softplus), {});
        auto lin = optimise_population(setting(t, Ls, nu, Activation::Linear), {});
        auto er = optimise_population(setting(t, Ls, nu, Activation::Erf), {});
        INFO(to_string(t) << " nu=" << nu << " L0=" << Ls[0] << " n=" << Ls.size());
        CHECK(sm.risk == Approx(eb).epsilon(1e-8));
        CHECK(sp.risk >= eb - 1e-9);
        CHECK(er.risk <= lin.risk + 1e-9);
        CHECK(lin.risk <= 1.0);
      }
  // max-SLR at nu = inf: linear attention's risk increases to 1 with L, (S12)
  double prev = 0.0;
  for (int L : {2, 10, 100, 10000, 1000000}) {
    auto lin = optimise_population(setting(Task::Max, {L}, kInfty, Activation::Linear), {});
    CHECK(lin.risk > prev);
    prev = lin.risk;
    // 1 - E = (1 + mu_1^2)/L with mu_1 = E[max] <= sqrt(2 log L)
    CHECK(1.0 - lin.risk <= (1.0 + 2.0 * std::log(double(L))) / L + 1e-12);
  }
  CHECK(prev > 0.9999);
}

TEST_CASE("slr population: bad input throws", "[slr][population]") {
  auto s = setting(Task::Spiked, {2}, kInfty, Activation::Softmax);
  CHECK_THROWS_AS(population_AB(s, 1.0, 1.0), std::invalid_argument);
  s.nu = -1;
  CHECK_THROWS_AS(population_AB(s, 1.0, 1.0), std::invalid_argument);
  s.nu = 1;
  CHECK_THROWS_AS(population_AB(s, 1.0, 0.5), std::invalid_argument);  // q < m^2
  s.lengths = {0};
  CHECK_THROWS_AS(population_AB(s, 1.0, 1.0), std::invalid_argument);
  CHECK_THROWS_AS(parse_activation("relu"), std::invalid_argument);
  CHECK(parse_task("max") == Task::Max);
  CHECK(to_string(Activation::Softplus) == "softplus");
}

TEST_CASE("slr population: max-SLR at large nu (closed forms, limits, domain)", "[slr][population]") {
  // At m_k = c_nu = nu, q_k = nu^2 the softmax weights are the posterior p, so B = E sum p_l s_l
  // equals A = E sum s_l^2 (Prop. 4.2): the 2-D finite-nu B (S30, ridge-aligned grid) against the
  // independent 1-D A. Also at L = 1000 (the large-L step shrink) and with key noise (q > m^2 is
  // not Bayes, so only A(q) vs its own value: skipped).
  for (double nu : {20.0, 50.0, 100.0})
    for (int L : {2, 3, 1000}) {
      INFO("nu=" << nu << " L=" << L);
      const auto ab = population_AB_detail(setting(Task::Max, {L}, nu, Activation::Softmax), nu,
                                           nu * nu, PopulationAccuracy{});
      CHECK(ab.B == Approx(ab.A).epsilon(2e-9));
      CHECK(ab.cB == Approx(ab.cA).epsilon(1e-6));  // 1 - B = 1 - A = E_Bayes ~ 1/nu
    }
  // L = 2: E_Bayes = 2 E[sig(u) sig(-u)], u ~ N(0, 2 nu^2) (§3.6), by a plain trapezoid in u
  // (the integrand has width ~1 in u, tiny against the Gaussian scale); ~ 1/(sqrt(pi) nu) for
  // large nu.
  for (double nu : {30.0, 100.0}) {
    const double sd = std::sqrt(2.0) * nu, h = 1e-3;
    double s = 0.0;
    for (double u = -60.0; u <= 60.0; u += h)
      s += 2.0 * sigmoid(u) * sigmoid(-u) * std::exp(-0.5 * u * u / (sd * sd)) / (std::sqrt(2 * M_PI) * sd);
    s *= h;
    INFO("nu=" << nu);
    CHECK(bayes_risk(Task::Max, {2}, nu) == Approx(s).epsilon(1e-8));
    CHECK(nu * s * std::sqrt(M_PI) == Approx(1.0).epsilon(0.5 / (nu * nu) + 1e-3));
  }
  // Linear attention (S12) at nu = 50: E_lin = 1 - (1 + mu_1^2)/L with mu_1 = nu E_Bayes (Stein),
  // against the optimiser, whose B uses the tilt density (another route).
  {
    const double nu = 50.0;
    const auto lin = optimise_population(setting(Task::Max, {3}, nu, Activation::Linear), {});
    const double mu1 = nu * bayes_risk(Task::Max, {3}, nu);
    CHECK(lin.risk == Approx(1.0 - (1.0 + mu1 * mu1) / 3.0).epsilon(1e-8));
    CHECK(lin.m_k == Approx(mu1).margin(1e-5));
  }
  // The domain: outside it the functions refuse before allocating.
  CHECK_THROWS_AS(population_AB(setting(Task::Max, {3}, 1e300, Activation::Softmax), 1.0, 1.0),
                  std::invalid_argument);
  CHECK_THROWS_AS(population_AB(setting(Task::Spiked, {3}, 1e6, Activation::Softmax), 1.0, 1.0),
                  std::invalid_argument);
  CHECK_THROWS_AS(population_AB(setting(Task::Max, {3}, 2.0, Activation::Erf), 1e150, 1e300),
                  std::invalid_argument);
  CHECK_THROWS_AS(population_AB(setting(Task::Max, {3}, 2.0, Activation::Erf, 1e300), 1.0, 1.0),
                  std::invalid_argument);
}
