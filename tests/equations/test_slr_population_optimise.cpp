// Tests of equations/slr_population_optimise (docs/equations/slr_population.md §3.4): the optimum
// of (S7) over the key and value overlaps against closed forms (S10), (S12), Prop. 4.2 (softmax
// at m_k = c_nu attains the Bayes risk (S9)), orderings, and at nu = 1e3 the same closed forms and
// the automatic search bound inside the domain.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <vector>

#include "equations/slr_population.hpp"
#include "tests/equations/slr_population_setting.hpp"
#include "integrators/special.hpp"

using namespace saddle;
using namespace saddle::slr;
using namespace saddle::slr::testing;

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

TEST_CASE("slr population optimise: closed forms and Prop. 4.2 at nu = 1e3", "[slr][population]") {
  const double nu = 1000.0;
  // (S10): E_lin = L(L-1)/(L^2 + nu(L-1)) at m_k = sqrt(nu)(L-1)/L
  for (int L : {2, 4}) {
    const auto lin = optimise_population(setting(Task::Spiked, {L}, nu, Activation::Linear), {});
    INFO("L=" << L);
    CHECK(lin.risk == Approx(L * (L - 1.0) / (L * L + nu * (L - 1.0))).epsilon(1e-9));
    CHECK(lin.m_k == Approx(std::sqrt(nu) * (L - 1.0) / L).margin(1e-5));
    // softmax attains the Bayes risk ~ e^{-nu/4} = 1e-110 at m_k = sqrt(nu), to relative 1e-8
    const auto sm = optimise_population(setting(Task::Spiked, {L}, nu, Activation::Softmax), {});
    const double eb = bayes_risk(Task::Spiked, {L}, nu);
    CHECK(eb > 0.0);
    CHECK(eb < 1e-100);
    CHECK(sm.risk == Approx(eb).epsilon(1e-8));
    CHECK(sm.m_k == Approx(std::sqrt(nu)).epsilon(1e-4));
  }
  // (S12) in max-SLR with mu_1 = nu E_Bayes (Stein): E_lin = 1 - (1 + mu_1^2)/L
  const double mu1 = nu * bayes_risk(Task::Max, {3}, nu);
  const auto ml = optimise_population(setting(Task::Max, {3}, nu, Activation::Linear), {});
  CHECK(ml.risk == Approx(1.0 - (1.0 + mu1 * mu1) / 3.0).epsilon(1e-9));
  CHECK(ml.m_k == Approx(mu1).margin(1e-5));
}

TEST_CASE("slr population optimise: the automatic bound of m_k stays inside the domain", "[slr][population]") {
  // max-SLR softmax at nu = 1e3: max(10, 2 nu) = 2000 is capped at sqrt(1e6) = 1000 = c_nu (the
  // optimum, reported on the cap); normalised softplus at nu = inf keeps its bound 10
  CHECK(population_max_mk(setting(Task::Max, {2}, 1000.0, Activation::Softmax), 0.0) == Approx(1000.0));
  CHECK(population_max_mk(setting(Task::Max, {2}, kInfty, Activation::Softplus), 0.0) == Approx(10.0));
  CHECK(population_max_mk(setting(Task::Max, {2}, 3.0, Activation::Erf), 4.0) == Approx(30.0));
  CHECK(population_max_mk(setting(Task::Spiked, {2}, 3.0, Activation::Softmax), 1e12) == 0.0);
  // a search whose top lies outside the domain is refused before any evaluation
  OptimiseOptions big;
  big.m_k_max = 2000.0;
  CHECK_THROWS_AS(optimise_population(setting(Task::Max, {2}, 1000.0, Activation::Softmax), big),
                  PopulationDomainError);
  OptimiseOptions dq;
  dq.dq_k = 2e6;
  CHECK_THROWS_AS(optimise_population(setting(Task::Max, {2}, 10.0, Activation::Softmax), dq),
                  PopulationDomainError);
}
