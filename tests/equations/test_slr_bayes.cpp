// Tests of the SLR Bayes-optimal state evolution (equations/slr_bayes*, docs/equations/slr_bayes.md §5). Every
// assertion is against an independent computation:
//  - L = 1: Q_v = [(1+Delta+alpha) - sqrt((1+Delta+alpha)^2 - 4 alpha)]/2, E_BO = 1 - Q_v (§5);
//  - alpha -> inf: E_BO -> E_Bayes (S9) from the population module;
//  - the Nishimori identity A_hat = B_hat at the fixed point (§5), within the QMC error bar;
//  - E_Bayes <= E_BO(alpha) <= E_ERM(alpha, lambda) (§5), ERM from the replica module;
//  - the output function G (S23): max nu = inf at L = 2 against P_1 = Phi((w_1 - w_2)/sqrt(2V)),
//    max finite nu at L = 2 against a 1-D adaptive integral, gradients against central
//    differences.
#include <catch2/catch.hpp>

#include <cmath>

#include "equations/slr_bayes.hpp"
#include "equations/slr_replica.hpp"
#include "equations/slr_replica_curve.hpp"
#include "integrators/quadrature.hpp"
#include "integrators/special.hpp"

using namespace saddle;
using namespace saddle::slr;

TEST_CASE("BO state evolution at L = 1 has the closed form of §5", "[bayes]") {
  BayesSetting set;
  set.L = 1;
  set.delta = 0.3;
  set.n_points = 1024;
  set.replicates = 4;
  const std::vector<double> alphas{0.5, 2.0, 5.0};
  const auto pts = bayes_curve(set, alphas, {BayesInit::Uninformed}, BayesCurveOptions());
  for (const auto& p : pts) {
    const double a = p.alpha, b = 1.0 + set.delta + a;
    const double Qv = (b - std::sqrt(b * b - 4.0 * a)) / 2.0;
    INFO("alpha " << a);
    CHECK(p.converged);
    CHECK(std::abs(p.Q_v.mean - Qv) < 5 * p.Q_v.se + 1e-4);
    CHECK(std::abs(p.test_error.mean - (1.0 - Qv)) < 5 * p.test_error.se + 1e-4);
  }
}

TEST_CASE("BO error tends to the Bayes risk, Nishimori holds, bounds hold (§5)", "[bayes]") {
  BayesSetting set;
  set.L = 2;
  set.nu = 2.0;
  set.delta = 0.1;
  set.n_points = 2048;
  set.replicates = 4;
  const std::vector<double> alphas{1.0, 4.0, 400.0};
  const auto pts = bayes_curve(set, alphas, {BayesInit::Informed}, BayesCurveOptions());
  const double eb = bayes_risk(Task::Spiked, {2}, 2.0);
  for (const auto& p : pts) {
    INFO("alpha " << p.alpha << " E_BO " << p.test_error.mean << " E_Bayes " << eb);
    CHECK(p.converged);
    // Nishimori: A_hat = B_hat (values 4 and 5), 5 s.e. plus 1e-3.
    CHECK(std::abs(p.A_hat.mean - p.B_hat.mean) < 5 * std::hypot(p.A_hat.se, p.B_hat.se) + 1e-3);
    CHECK(p.test_error.mean >= eb - 5 * p.test_error.se - 1e-4);
  }
  // alpha = 400: the overlaps are 1 - O(1/alpha), the excess error O(1/alpha).
  CHECK(pts[2].test_error.mean == Approx(eb).margin(5e-3));
  CHECK(pts[0].test_error.mean > pts[1].test_error.mean);
  CHECK(pts[1].test_error.mean > pts[2].test_error.mean);

  // E_BO <= E_ERM: replica softmax ERM at the same alpha (lambda = 0.1), informed branch.
  ReplicaSetting rs;
  rs.L = 2;
  rs.nu = 2.0;
  rs.delta = 0.1;
  rs.lambda = 0.1;
  rs.n_points = 1024;
  rs.replicates = 4;
  const auto erm = replica_curve(rs, {1.0, 4.0}, {ReplicaInit::Informed}, ReplicaCurveOptions());
  for (int i = 0; i < 2; ++i) {
    INFO("alpha " << erm[i].alpha << " E_ERM " << erm[i].test_error.mean << " E_BO " << pts[i].test_error.mean);
    CHECK(erm[i].test_error.mean + 4 * erm[i].test_error.se >= pts[i].test_error.mean);
  }
}

TEST_CASE("BO state evolution with a variable length (§1.4)", "[bayes]") {
  // L ~ Unif{1, 2, 3}, spiked nu = 2, Delta = 0.1: E_BO tends to the variable-length Bayes risk
  // E_L E_Bayes(L) (S9), stays above it, and Nishimori holds; at L ~ Unif{1, 1} it is the L = 1
  // closed form.
  BayesSetting set;
  set.lengths = {1, 2, 3};
  set.nu = 2.0;
  set.delta = 0.1;
  set.n_points = 1024;
  set.replicates = 4;
  const std::vector<double> alphas{2.0, 400.0};
  const auto pts = bayes_curve(set, alphas, {BayesInit::Informed}, BayesCurveOptions());
  const double eb = bayes_risk(Task::Spiked, {1, 2, 3}, 2.0);
  for (const auto& p : pts) {
    INFO("alpha " << p.alpha << " E_BO " << p.test_error.mean << " E_Bayes " << eb);
    CHECK(p.converged);
    CHECK(std::abs(p.A_hat.mean - p.B_hat.mean) < 5 * std::hypot(p.A_hat.se, p.B_hat.se) + 1e-3);
    CHECK(p.test_error.mean >= eb - 5 * p.test_error.se - 1e-4);
  }
  CHECK(pts[1].test_error.mean == Approx(eb).margin(5e-3));
  BayesSetting ones = set;
  ones.lengths = {1, 1};
  const auto p1 = bayes_curve(ones, {2.0}, {BayesInit::Uninformed}, BayesCurveOptions());
  const double b = 1.0 + set.delta + 2.0, Qv = (b - std::sqrt(b * b - 8.0)) / 2.0;
  CHECK(std::abs(p1[0].Q_v.mean - Qv) < 5 * p1[0].Q_v.se + 1e-4);
}

TEST_CASE("BO output function G (S23): closed forms and finite differences", "[bayes]") {
  const double inf = std::numeric_limits<double>::infinity();
  const double w2[2] = {0.4, -0.3};
  for (double Qk : {0.2, 0.7}) {
    const double V = 1.0 - Qk;
    // max nu = inf, L = 2: P_1 = Phi((w_1 - w_2)/sqrt(2V)).
    BayesSetting a;
    a.task = Task::Max;
    a.L = 2;
    a.nu = inf;
    BayesOutput oa(a, Qk);
    double G[2], dG[4];
    oa.eval(w2, G, dG);
    const double P1 = norm_cdf((w2[0] - w2[1]) / std::sqrt(2.0 * V));
    CHECK(G[0] == Approx(P1).epsilon(1e-9));
    CHECK(G[1] == Approx(1.0 - P1).epsilon(1e-9));
    CHECK(dG[0] == Approx(norm_pdf((w2[0] - w2[1]) / std::sqrt(2 * V)) / std::sqrt(2 * V)).epsilon(1e-8));
    // max finite nu, L = 2: G_1/L = E[sig(nu (h_1 - h_2))], h_1 - h_2 ~ N(w_1 - w_2, 2V): 1-D
    // adaptive integral.
    BayesSetting b = a;
    b.nu = 2.5;
    BayesOutput ob(b, Qk);
    ob.eval(w2, G, dG);
    const double mu = w2[0] - w2[1], sd = std::sqrt(2.0 * V);
    const auto I = integrate_adaptive(
        [&](double x) { return norm_pdf(x) * sigmoid(b.nu * (mu + sd * x)); }, -inf, inf);
    CHECK(G[0] == Approx(I.value).epsilon(1e-6));  // 64 GH nodes
  }
  // Gradients against central differences: max nu = inf and finite nu at L = 3, spiked L = 3.
  const double w3[3] = {0.3, -0.5, 0.1};
  for (int kind = 0; kind < 3; ++kind) {
    BayesSetting s;
    s.L = 3;
    s.task = kind == 0 ? Task::Spiked : Task::Max;
    s.nu = kind == 1 ? inf : 1.7;
    BayesOutput o(s, 0.6);
    double G[3], dG[9], Gp[3], Gm[3], tmp[9];
    o.eval(w3, G, dG);
    for (int l = 0; l < 3; ++l) {
      double wp[3] = {w3[0], w3[1], w3[2]}, wm[3] = {w3[0], w3[1], w3[2]};
      wp[l] += 1e-5;
      wm[l] -= 1e-5;
      o.eval(wp, Gp, tmp);
      o.eval(wm, Gm, tmp);
      // spiked G is normalised by its max (a common factor): compare ratios G_e/G_0 there.
      for (int e = 0; e < 3; ++e) {
        INFO("kind " << kind << " e " << e << " l " << l);
        if (kind == 0) {
          const double fd = (Gp[e] / Gp[0] - Gm[e] / Gm[0]) / 2e-5;
          const double an = (dG[e * 3 + l] * G[0] - G[e] * dG[l]) / (G[0] * G[0]);
          CHECK(an == Approx(fd).margin(1e-6).epsilon(1e-5));
        } else {
          CHECK(dG[e * 3 + l] == Approx((Gp[e] - Gm[e]) / 2e-5).margin(1e-7).epsilon(1e-5));
        }
      }
    }
  }
}
