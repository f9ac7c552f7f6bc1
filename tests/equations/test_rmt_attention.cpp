// Deterministic equivalent of nonlinear attention (docs/equations/rmt.md §5-§7, §9) and the Marchenko-Pastur
// quadrature (§6.5): closed forms, limits, independent computations (exact Stieltjes partial
// fractions, theta-midpoint reference rule, central finite differences, the generic solver) and
// the spec's independently computed smoke values (§9).
#include <catch2/catch.hpp>

#include <cmath>

#include "equations/rmt_attention.hpp"
#include "equations/rmt_mp.hpp"
#include "equations/rmt_ridge.hpp"
#include "solver/fixed_point.hpp"

using namespace saddle;
using namespace saddle::rmt;

namespace {

HermiteData H(const char* name) { return hermite_data(parse_activation(name)); }

Geometry geom(double snr, Eigen::Vector3d wk = Eigen::Vector3d::Zero(),
              Eigen::Vector3d wq = Eigen::Vector3d::Zero()) {
  Geometry g;
  g.mu << std::sqrt(snr), 0.0, 0.0;
  g.wk = wk;
  g.wq = wq;
  return g;
}

AttentionResult de(const char* act, double c, double gamma, const Geometry& g, bool keep = false) {
  return solve_attention(make_params(c, gamma, H(act), keep, g));
}

double rel(double a, double b) { return std::abs(a - b) / std::max(std::abs(b), 1e-300); }

}  // namespace

// ------------------------------------------------------------------------------------------
TEST_CASE("rmt MP quadrature: mass, moments, Stieltjes transform (§6.1, §6.5)", "[rmt][mp]") {
  for (double c : {0.25, 0.5, 1.0, 2.0, 4.0}) {
    for (int which = 0; which < 3; ++which) {
      MPRule r = which == 0   ? mp_theta_midpoint(c, 2000)
                 : which == 1 ? mp_split_rule(c, 1e-6, 0.6, 0.0, 48)
                              : mp_split_rule(c, 1e-3, 1.0, 1.0, 48);
      double m0 = 0, m1 = 0, m2 = 0;
      for (int j = 0; j < r.size(); ++j) {
        m0 += r.w[j];
        m1 += r.w[j] * r.s[j];
        m2 += r.w[j] * r.s[j] * r.s[j];
      }
      INFO("c=" << c << " rule " << which);
      CHECK(m0 == Approx(1.0).epsilon(1e-14));
      CHECK(m1 == Approx(c).epsilon(1e-12));
      CHECK(m2 == Approx(c * (1.0 + c)).epsilon(1e-12));
      for (double g : {1e-3, 0.1, 1.0}) {
        double st = 0;
        for (int j = 0; j < r.size(); ++j) st += r.w[j] / (r.s[j] + g);
        CHECK(st == Approx(ridge_baseline(c, g, 0.0).m).epsilon(1e-9));  // <1/(s+gamma)> = (LR1)
        CHECK(mp_stieltjes(c, {-g, 0.0}).real() == Approx(ridge_baseline(c, g, 0.0).m).epsilon(1e-13));
      }
    }
  }
}

TEST_CASE("rmt ridge baseline: closed form (LR1)-(LR3) and its equivalent forms (§5)", "[rmt][ridge]") {
  for (double c : {0.25, 0.5, 1.0, 2.0})
    for (double snr : {0.0, 1.0, 4.0})
      for (double g : {1e-6, 1e-3, 0.1, 1.0, 10.0}) {
        RidgeBaseline r = ridge_baseline(c, g, snr);
        const double m = r.m;
        const double mt = (-(1 - c + g) + std::sqrt((1 - c + g) * (1 - c + g) + 4 * c * g)) / (2 * c * g);
        INFO("c=" << c << " snr=" << snr << " gamma=" << g);
        CHECK(g * m * m + (g - 1 + c) * m - 1 == Approx(0.0).margin(1e-9 * (1 + g * m * m)));
        CHECK(g * mt == Approx(1.0 / (1.0 + m)).epsilon(1e-9));
        CHECK(m == Approx(c * mt + (1 - c) / g).epsilon(1e-9));
        CHECK(r.q == Approx(m / (1 + snr * g * m * mt)).epsilon(1e-9));
        CHECK(r.error >= 0.0);
        CHECK(r.error <= 1.0);
        if (snr == 0.0) {  // mu = 0: E_RR = -gamma^2 m'(gamma), m' by central differences
          const double h = 1e-4 * g;
          const double dm = (ridge_baseline(c, g + h, 0).m - ridge_baseline(c, g - h, 0).m) / (2 * h);
          CHECK(r.error == Approx(-g * g * dm).epsilon(1e-6));
        }
      }
  SECTION("ridgeless limit (1-c)^+/(1+|mu|^2)") {
    for (double c : {0.25, 0.5, 2.0})
      for (double snr : {0.0, 1.0, 3.0}) {
        const double lim = std::max(0.0, 1 - c) / (1 + snr);
        CHECK(ridge_baseline(c, 0.0, snr).error == Approx(lim).margin(1e-15));
        CHECK(ridge_baseline(c, 1e-10, snr).error == Approx(lim).margin(1e-7));
      }
    CHECK(ridge_baseline(1.0, 1e-12, 1.0).error < 1e-5);  // c = 1: ~ sqrt(gamma)
    CHECK(ridge_baseline(1.0, 0.0, 1.0).error == 0.0);
  }
  CHECK_THROWS(ridge_baseline(-1, 0.1, 1));
  CHECK_THROWS(ridge_baseline(0.5, -0.1, 1));
}

// ------------------------------------------------------------------------------------------
TEST_CASE("rmt DE: smoke values of rmt.md §9 (independently computed)", "[rmt][de]") {
  Geometry g = geom(2.0, Eigen::Vector3d(1, 0.5, 0), Eigen::Vector3d(1, -0.5, 0));
  AttentionResult r = de("erf", 0.75, 0.05, g);
  REQUIRE(r.converged);
  CHECK(r.delta == Approx(0.1477392211).epsilon(1e-9));
  CHECK(r.delta_tilde == Approx(10.8886776293).epsilon(1e-9));
  CHECK(r.q == Approx(3.7942637072).epsilon(1e-9));
  CHECK(r.error == Approx(0.1505479599).epsilon(1e-9));
  CHECK(ridge_baseline(0.75, 0.05, 2.0).error == Approx(0.0930915269).epsilon(1e-9));
  Geometry g0 = g;
  g0.mu.setZero();
  CHECK(de("erf", 0.75, 0.05, g0).error == Approx(0.4345103941).epsilon(1e-9));
  CHECK(de("linear", 0.5, 1e-2, geom(0.0)).error == Approx(0.5373559523).epsilon(1e-9));
}

TEST_CASE("rmt DE: exact derivative (R6) agrees with central differences", "[rmt][de]") {
  const Geometry aligned = geom(1.0, Eigen::Vector3d(1, 0, 0), Eigen::Vector3d(1, 0, 0));
  const Geometry asym = geom(2.0, Eigen::Vector3d(1, 0.5, 0), Eigen::Vector3d(1, -0.5, 0));
  for (const char* act : {"tanh", "relu", "linear"})
    for (double c : {0.25, 0.5, 2.0})
      for (double g : {1e-6, 1e-3, 1.0})
        for (const Geometry* geo : {&aligned, &asym}) {
          AttentionParams p = make_params(c, g, H(act), false, *geo);
          // The same fixed rule at gamma and gamma(1 +- eta), so only the dependence on gamma
          // through the equations is differentiated.
          MPRule rule = mp_split_rule(c, g, p.a1, p.kappa_d, 48);
          AttentionOptions opt;
          AttentionResult r0 = solve_attention(p, rule, opt);
          // Fourth-order central difference with eta = 1e-3: truncation ~ eta^4 = 1e-12; the
          // rounding noise ~ |dq| gamma / eta (dq ~ 1e-10 relative for linear f at c < 1,
          // gamma = 1e-6, where q ~ 1/gamma; docs/equations/rmt.md §6.4: second-order differences scatter there).
          const double eta = 1e-3;
          auto at = [&](double f, bool q) {
            AttentionParams pp = p;
            pp.gamma = g * (1 + f);
            AttentionResult r = solve_attention(pp, rule, opt);
            return q ? r.q : r.delta_tilde;
          };
          auto d4 = [&](bool q) {
            return (8 * (at(eta, q) - at(-eta, q)) - (at(2 * eta, q) - at(-2 * eta, q))) / (12 * eta * g);
          };
          INFO(act << " c=" << c << " gamma=" << g);
          REQUIRE(r0.converged);
          CHECK(r0.error == Approx(-g * g * d4(true)).epsilon(2e-7).margin(1e-12));
          CHECK(r0.ddelta_tilde == Approx(d4(false)).epsilon(2e-7));
        }
}

TEST_CASE("rmt DE: quadrature refinement shows 8+ significant digits for gamma >= 1e-6",
          "[rmt][de][mp]") {
  // Production rule (48 nodes per half-piece) against the same rule doubled and against an
  // independent theta-midpoint rule with N = 1e5 (converges exponentially, §6.5).
  const Geometry aligned = geom(1.0, Eigen::Vector3d(1, 0, 0), Eigen::Vector3d(1, 0, 0));
  double worst_double = 0, worst_mid = 0;
  for (const char* act : {"tanh", "relu", "linear", "cos"})
    for (int keep = 0; keep < 2; ++keep)
      for (double c : {0.5, 0.95, 1.0, 2.0})
        for (double g : {1e-6, 1e-3, 1.0}) {
          AttentionParams p = make_params(c, g, H(act), keep, aligned);
          AttentionOptions o;
          const double e48 = solve_attention(p, o).error;
          o.nodes_per_side = 96;
          const double e96 = solve_attention(p, o).error;
          const double emid = solve_attention(p, mp_theta_midpoint(c, 100000), o).error;
          INFO(act << " keep=" << keep << " c=" << c << " gamma=" << g << " E=" << e48);
          CHECK(rel(e48, e96) < 1e-9);
          CHECK(rel(e48, emid) < 1e-8);
          worst_double = std::max(worst_double, rel(e48, e96));
          worst_mid = std::max(worst_mid, rel(e48, emid));
        }
  WARN("worst relative change of error: doubling " << worst_double << ", vs theta-midpoint N=1e5 "
                                                   << worst_mid);
}

TEST_CASE("rmt DE: linear f at mu = 0 equals the exact Stieltjes partial fractions (§6.5, §7.4)",
          "[rmt][de][mp]") {
  const HermiteData lin = H("linear");
  for (int keep = 0; keep < 2; ++keep)
    for (double c : {0.3, 0.5, 1.0, 2.0})
      for (double g : {1e-6, 1e-4, 1e-2, 1.0}) {
        AttentionResult r = solve_attention(make_params(c, g, lin, keep, geom(0.0)));
        LinearExact ex = linear_mu0_exact(c, g, 1.0, keep ? 1.0 : 0.0);
        INFO("keep=" << keep << " c=" << c << " gamma=" << g);
        CHECK(r.delta == 0.0);
        CHECK(r.delta_tilde == Approx(ex.delta_tilde).epsilon(1e-9));
        CHECK(r.q == Approx(ex.delta_tilde).epsilon(1e-9));
        // The partial-fraction route loses digits to near-double roots; 1e-8 relative + 1e-15.
        CHECK(r.error == Approx(ex.error).epsilon(1e-8).margin(1e-15));
      }
}

TEST_CASE("rmt DE: special cases and limits of §7", "[rmt][de]") {
  SECTION("mu = 0: q = delta_tilde, E = -gamma^2 delta_tilde'; ridgeless 1 - c (c<1), 0 (c>1)") {
    for (double c : {0.25, 0.5, 2.0}) {
      for (double g : {1e-4, 0.1}) {
        AttentionResult r = de("tanh", c, g, geom(0.0, Eigen::Vector3d(1, 0, 0), Eigen::Vector3d(0.5, 1, 0)));
        CHECK(r.q == Approx(r.delta_tilde).epsilon(1e-12));
        CHECK(r.error == Approx(-g * g * r.ddelta_tilde).epsilon(1e-10));
      }
      const double e = de("tanh", c, 1e-9, geom(0.0)).error;
      if (c < 1) CHECK(e == Approx(1 - c).margin(1e-3));
      else CHECK(e < 2e-3);
    }
    // c > 1: E -> 0 like sqrt(gamma): E(1e-8)/E(1e-6) ~ 0.1.
    const double r = de("tanh", 2.0, 1e-8, geom(0)).error / de("tanh", 2.0, 1e-6, geom(0)).error;
    CHECK(r == Approx(0.1).epsilon(0.15));
  }
  SECTION("mu = 0: nonlinear attention worse than ridge at small gamma (§7.1)") {
    for (double c : {0.25, 0.5, 2.0})
      CHECK(de("tanh", c, 1e-3, geom(0)).error > ridge_baseline(c, 1e-3, 0).error);
  }
  SECTION("a1 = 0 (cos): q = delta_tilde = 1/(gamma(1+delta)), independent of mu and w") {
    for (double c : {0.5, 2.0})
      for (double g : {1e-4, 0.1, 1.0}) {
        AttentionResult r0 = de("cos", c, g, geom(0));
        AttentionResult r1 = de("cos", c, g, geom(2.0, Eigen::Vector3d(1, 0, 0), Eigen::Vector3d(1, 0, 0)));
        AttentionResult r2 = de("cos", c, g, geom(4.0, Eigen::Vector3d(0, 1, 0), Eigen::Vector3d(1, 0, 0.5)));
        CHECK(r0.q == Approx(1.0 / (g * (1 + r0.delta))).epsilon(1e-12));
        CHECK(r0.q == Approx(r0.delta_tilde).epsilon(1e-12));
        CHECK(r1.error == Approx(r0.error).epsilon(1e-12));
        CHECK(r2.error == Approx(r0.error).epsilon(1e-12));
      }
  }
  SECTION("orthogonal weights give the w = 0 error exactly (§7.3)") {
    for (const char* act : {"tanh", "relu"})
      for (double c : {0.25, 2.0})
        for (double g : {1e-5, 0.01, 1.0}) {
          const double e0 = de(act, c, g, geom(1.0)).error;
          CHECK(de(act, c, g, geom(1.0, Eigen::Vector3d(0, 1, 0), Eigen::Vector3d(0, 1, 0))).error ==
                Approx(e0).epsilon(1e-11));
          CHECK(de(act, c, g, geom(1.0, Eigen::Vector3d(0, 2, 0), Eigen::Vector3d(0, 0.3, 1))).error ==
                Approx(e0).epsilon(1e-11));
        }
  }
  SECTION("aligned weights lower the error monotonically in |w|; ridgeless c<1 stays above "
          "ridge and approaches it (§7.5)") {
    for (double c : {0.25, 0.5, 2.0})
      for (double g : {1e-6, 1e-2, 1.0}) {
        double prev = 2.0;
        for (double w : {0.0, 0.5, 1.0, 1.5, 2.0, 3.0}) {
          const double e = de("tanh", c, g, geom(1.0, Eigen::Vector3d(w, 0, 0), Eigen::Vector3d(w, 0, 0))).error;
          INFO("c=" << c << " gamma=" << g << " w=" << w);
          CHECK(e < prev);
          prev = e;
        }
      }
    const double lim = 0.5 / 2.0;  // (1-c)/(1+|mu|^2) at c = 1/2, |mu|^2 = 1
    double gap_prev = 1.0;
    for (double w : {0.0, 1.0, 2.0, 4.0, 8.0}) {
      const double e = de("tanh", 0.5, 1e-8, geom(1.0, Eigen::Vector3d(w, 0, 0), Eigen::Vector3d(w, 0, 0))).error;
      CHECK(e > lim);
      CHECK(e - lim < gap_prev);
      gap_prev = e - lim;
    }
    CHECK(gap_prev < 0.1 * (de("tanh", 0.5, 1e-8, geom(1.0)).error - lim));
  }
  SECTION("linear f: delta = 0, delta_tilde = <1/(gamma + s d^2)> (§7.4)") {
    AttentionParams p = make_params(0.5, 0.01, H("linear"), false, geom(1.0));
    MPRule rule = mp_split_rule(0.5, 0.01, p.a1, p.kappa_d, 48);
    double dt = 0;
    for (int j = 0; j < rule.size(); ++j) {
      const double d = rule.s[j] / 0.5 - 1.0;
      dt += rule.w[j] / (0.01 + rule.s[j] * d * d);
    }
    AttentionResult r = solve_attention(p);
    CHECK(r.delta == 0.0);
    CHECK(r.delta_tilde == Approx(dt).epsilon(1e-12));
  }
}

TEST_CASE("rmt DE: generic properties 0 <= E <= 1, monotone in gamma, 0 < q <= 1/gamma (§7.6)",
          "[rmt][de]") {
  const Geometry geos[] = {geom(0.0), geom(1.0, Eigen::Vector3d(1, 0, 0), Eigen::Vector3d(1, 0, 0)),
                           geom(2.0, Eigen::Vector3d(1, 0.5, 0), Eigen::Vector3d(-1, 0, 0.5))};
  for (const char* act : {"tanh", "relu", "erf", "sigmoid", "exp", "linear", "texp:1"})
    for (double c : {0.25, 1.0, 3.0})
      for (const Geometry& g : geos) {
        double prev = -1.0;
        for (int k = 0; k <= 24; ++k) {
          const double gm = std::pow(10.0, -6.0 + 0.5 * k);
          AttentionResult r = de(act, c, gm, g);
          INFO(act << " c=" << c << " gamma=" << gm);
          REQUIRE(r.converged);
          CHECK(r.iterations <= 30);
          CHECK(r.error >= -1e-12);
          CHECK(r.error <= 1.0 + 1e-12);
          CHECK(r.error >= prev - 1e-9);
          CHECK(r.q > 0.0);
          CHECK(r.q <= (1.0 + 1e-12) / gm);
          prev = r.error;
        }
        CHECK(prev > 0.98);  // gamma = 1e6
      }
}

TEST_CASE("rmt DE: kept diagonal and exp input checks", "[rmt][de]") {
  CHECK_THROWS_AS(make_params(0.5, 0.1, H("exp"), true, geom(1)), std::invalid_argument);
  CHECK_THROWS_AS(make_params(0.5, 0.0, H("tanh"), false, geom(1)), std::invalid_argument);
  CHECK_THROWS_AS(make_params(-0.5, 0.1, H("tanh"), false, geom(1)), std::invalid_argument);
  // Bounded f: kappa_d = 0, so keeping the diagonal changes nothing.
  CHECK(de("tanh", 0.5, 0.01, geom(1), true).error == de("tanh", 0.5, 0.01, geom(1), false).error);
  // ReLU: kept diagonal (kappa_d = 1) differs.
  CHECK(std::abs(de("relu", 0.5, 0.01, geom(1), true).error - de("relu", 0.5, 0.01, geom(1), false).error) > 1e-3);
}

// The production solve is the solver's Newton in BulkSystem's chart; the plain Anderson iteration
// of the same system (no chart) is an independent path to the same fixed point.
TEST_CASE("rmt DE: the generic fixed-point solver finds the same bulk solution", "[rmt][de]") {
  for (double c : {0.5, 2.0})
    for (double g : {1e-2, 1.0}) {
      AttentionParams p = make_params(c, g, H("tanh"), false, geom(1.0));
      MPRule rule = mp_split_rule(c, g, p.a1, p.kappa_d, 48);
      AttentionResult r = solve_attention(p, rule, AttentionOptions{});
      BulkSystem sys(p, rule);
      SolverOptions opt;
      opt.tol = 1e-12;  // on the relative residual (BulkSystem::residual_norm)
      opt.max_iter = 20000;
      Vec x0(2);
      x0 << 0.0, 1.0 / g;
      SolveResult s = solve(sys, x0, opt);
      INFO("c=" << c << " gamma=" << g << " reason " << s.summary.reason);
      REQUIRE(s.summary.converged);
      CHECK(s.x(0) == Approx(r.delta).epsilon(1e-9));
      CHECK(s.x(1) == Approx(r.delta_tilde).epsilon(1e-9));
      CHECK(r.path == Method::Newton);
      CHECK(r.reason == Termination::Tolerance);
    }
}

// The wall time of this curve is measured by bench/bench_rmt.cpp (BM_Curve13_Production), not
// asserted here: tests run under ctest -j next to other jobs, so a time limit would be flaky.
TEST_CASE("rmt DE: every point of a 13-point gamma curve converges", "[rmt][de]") {
  const HermiteData h = H("tanh");
  const Geometry g = geom(1.0, Eigen::Vector3d(1, 0, 0), Eigen::Vector3d(1, 0, 0));
  for (int k = 0; k < 13; ++k) {
    AttentionResult r = solve_attention(make_params(0.5, std::pow(10.0, -6.0 + 0.5 * k), h, false, g));
    INFO("gamma=1e" << (-6.0 + 0.5 * k));
    REQUIRE(r.converged);
  }
}
