// Tests of the line rule of the pre-integrated channel (equations/slr_prox_line.hpp,
// docs/equations/slr_replica.md §4.9) on a closed-form line problem: two branches with values
// v_-(x) = (x - b + 1)^2/2 and v_+(x) = (x - b - 1)^2/2, whose global minimiser jumps from - to +
// at x = b (D = v_+ - v_- = 2(b - x)).
// Every assertion is against a closed form: the jump point, its density phi(b)/|dD/dx|, and the
// Gaussian expectations of functions of the global branch that jump at b.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>

#include "equations/slr_prox_line.hpp"
#include "integrators/special.hpp"

using namespace saddle;
using namespace saddle::slr::replica;

namespace {

struct TwoWells {
  struct Point {
    double x = 0;
    int s = -1;  // branch
  };
  double b = 0.7;  // the tie
  int globals = 0;
  static double x(const Point& p) { return p.x; }
  double v(int s, double x) const { return 0.5 * (x - b - s) * (x - b - s); }
  double dv(int s, double x) const { return x - b - s; }
  Point global(double x) {
    ++globals;
    return {x, v(+1, x) < v(-1, x) ? +1 : -1};
  }
  bool follow(Point& p, double x_to) const {
    p.x = x_to;
    return true;  // both branches exist on the whole line
  }
  double value(const Point& p) const { return v(p.s, p.x); }
  double slope(const Point& a, const Point& c) const { return dv(c.s, c.x) - dv(a.s, a.x); }
  bool same(const Point& a, const Point& c) const { return a.s == c.s; }
  bool quick_same(const Point& a, const Point& c) const { return a.s == c.s; }
  double guess_tie(const Point&, const Point&) const {
    return std::numeric_limits<double>::quiet_NaN();
  }
};

template <class F>
double integrate(const LineRule<TwoWells::Point>& rule, F f) {
  double s = 0;
  for (const auto& nd : rule.nodes) s += nd.w * f(nd.x, nd.pt.s);
  return s;
}

}  // namespace

TEST_CASE("line rule: the jump of a double well and its closed-form expectations (§4.9)",
          "[slr][replica][preint]") {
  for (double b : {0.7, -1.3, 0.05}) {
    TwoWells prob;
    prob.b = b;
    LineOptions opt;
    opt.nodes = 16;
    LineRule<TwoWells::Point> rule;
    build_line_rule(prob, opt, rule);
    INFO("b = " << b);
    REQUIRE(rule.jumps.size() == 1);
    REQUIRE_FALSE(rule.unresolved);
    CHECK(rule.jumps[0].x == Approx(b).margin(1e-10));
    // D = v_+ - v_- = 2(b - x): dD/dx = -2, density phi(b)/2.
    CHECK(rule.jumps[0].dDdx == Approx(-2.0).epsilon(1e-10));
    CHECK(rule.jumps[0].density == Approx(norm_pdf(b) / 2).epsilon(1e-10));
    CHECK(rule.jumps[0].before.s == -1);
    CHECK(rule.jumps[0].after.s == +1);
    // Weights: a probability rule.
    CHECK(integrate(rule, [](double, int) { return 1.0; }) == Approx(1.0).epsilon(1e-13));
    // A piecewise-constant function of the branch: E[s] = 1 - 2 Phi(b), exactly (each piece's
    // Gauss rule of the truncated normal integrates constants exactly).
    CHECK(integrate(rule, [](double, int s) { return double(s); }) ==
          Approx(1.0 - 2.0 * norm_cdf(b)).margin(1e-13));
    // A polynomial times the jump: E[(1 + x) 1{x > b}] = 1 - Phi(b) + phi(b) and
    // E[x^3 1{x > b}] = (b^2 + 2) phi(b), exact with the truncated-normal Gauss rule of each piece
    // (degree <= 2m - 1; the former Gauss-Legendre rule in u = Phi(x) converged slowly on the
    // unbounded pieces: error 1.1e-3 at 16 nodes, 1.1e-4 at 64).
    CHECK(integrate(rule, [](double x, int s) { return s > 0 ? 1.0 + x : 0.0; }) ==
          Approx(1.0 - norm_cdf(b) + norm_pdf(b)).margin(1e-12));
    CHECK(integrate(rule, [](double x, int s) { return s > 0 ? x * x * x : 0.0; }) ==
          Approx((b * b + 2.0) * norm_pdf(b)).margin(1e-12));
    // The jump term of a quantity G of the branch: E[delta(D) (Delta G)^2] = density (Delta G)^2;
    // with G = s: 4 phi(b)/2.
    const auto& j = rule.jumps[0];
    CHECK(j.density * std::pow(double(j.after.s - j.before.s), 2) ==
          Approx(2.0 * norm_pdf(b)).epsilon(1e-10));
  }
}

TEST_CASE("line rule: without a jump it is Gauss-Hermite", "[slr][replica][preint]") {
  TwoWells prob;
  prob.b = 40.0;  // the tie far outside every node: one branch on the whole rule
  LineOptions opt;
  opt.nodes = 16;
  LineRule<TwoWells::Point> rule;
  build_line_rule(prob, opt, rule);
  REQUIRE(rule.jumps.empty());
  CHECK(rule.nodes.size() == 16u);
  // Gauss-Hermite with 16 nodes integrates polynomials of degree <= 31 exactly.
  CHECK(integrate(rule, [](double x, int) { return x * x; }) == Approx(1.0).epsilon(1e-12));
  CHECK(integrate(rule, [](double x, int) { return std::pow(x, 6); }) ==
        Approx(15.0).epsilon(1e-12));
}

namespace {
// A random softmax L = 2 proximal problem (fields at the scale of the replica fixed points).
ProxInput<2> random_softmax2(std::mt19937_64& g) {
  std::normal_distribution<double> N;
  ProxInput<2> in;
  in.omega_chi << 1.2 * N(g) + 1.0, 1.2 * N(g);
  in.omega_z << N(g), N(g);
  in.y = 1.5 * N(g);
  in.V_k = std::exp(1.2 * N(g));
  in.V_v = std::exp(N(g));
  return in;
}
}  // namespace

TEST_CASE("softmax L = 2 in its Helmert coordinate: the generic minimiser and J sums",
          "[slr][replica][preint]") {
  // Softmax2 (1-D Newton, closed-form J sums) against the L x L algebra of phi_derivs and
  // jacobian_blocks at the same minimiser, and the minimiser against a brute-force grid.
  std::mt19937_64 g(7);
  ProxOptions opt;
  for (int k = 0; k < 500; ++k) {
    const ProxInput<2> in = random_softmax2(g);
    const ProxResult<2> pr = solve_prox<2>(ProxAct::Softmax, in, opt);
    PhiDerivs<2> d;
    phi_derivs<2>(ProxAct::Softmax, in, pr.chi, d);
    CHECK(d.grad.cwiseAbs().maxCoeff() < 1e-8);  // stationary in chi
    // no grid point of t in t0 +- 3 R is lower (R the search radius of §4.4)
    const double t0 = (in.omega_chi(0) - in.omega_chi(1)) / std::sqrt(2.0);
    const double R = std::sqrt(2.0 * in.V_k * reduced_phi<2>(ProxAct::Softmax, in, in.omega_chi)) + 1e-9;
    const Softmax2 f(in);
    double lowest = std::numeric_limits<double>::infinity();
    for (int i = 0; i <= 4000; ++i) lowest = std::min(lowest, f.value(t0 - 3 * R + 6 * R * i / 4000.0));
    CHECK(pr.objective <= lowest + 1e-9 * (1 + std::abs(lowest)));
    double cc, zz, zz11;
    softmax2_j<2>(in, pr.chi, cc, zz, zz11);
    const JacobianBlocks<2> jb = jacobian_blocks<2>(ProxAct::Softmax, in, pr.chi);
    const double sc = 1.0 + std::abs(jb.zz.trace()) + std::abs(jb.cc.trace());
    CHECK(std::abs(cc - jb.cc.trace()) < 1e-12 * sc);
    CHECK(std::abs(zz - jb.zz.trace()) < 1e-12 * sc);
    CHECK(std::abs(zz11 - jb.zz(0, 0)) < 1e-12 * sc);
  }
}

TEST_CASE("softmax L = 2 exact line rule: the jumps of a fine scan, the global minimiser at every node",
          "[slr][replica][preint]") {
  // Along a line the key fields move by x c h. A scan of the global minimiser (fine brute-force
  // grid in t) over x in [-4, 4] finds the jumps; the hull rule must find the same ones (within
  // the scan's step) and put the global minimiser at every node.
  std::mt19937_64 g(11);
  LineOptions opt;
  opt.nodes = 6;
  int lines_with_jumps = 0;
  for (int k = 0; k < 120; ++k) {
    const ProxInput<2> in0 = random_softmax2(g);
    const double c = 0.5 + std::abs(std::normal_distribution<double>()(g));
    LineRule<ProxPoint<2>> rule;
    build_line_rule_softmax2(in0, c, opt, rule);
    auto at = [&](double x) {
      ProxInput<2> in = in0;
      in.omega_chi(0) += x * c / std::sqrt(2.0);
      in.omega_chi(1) -= x * c / std::sqrt(2.0);
      return in;
    };
    // brute force: t minimising Softmax2 on a fine grid around the fields' own t0
    auto global_t = [&](double x, double& F) {
      const Softmax2 f(at(x));
      const double R = 6.0 + 2.0 * std::sqrt(in0.V_k);
      double best = 0, bestF = std::numeric_limits<double>::infinity();
      for (int i = 0; i <= 3000; ++i) {
        const double t = f.t0 - R + 2 * R * i / 3000.0;
        const double v = f.value(t);
        if (v < bestF) bestF = v, best = t;
      }
      F = bestF;
      return best;
    };
    // a step of the scan where t moves by more than 0.05 is bisected: a jump keeps its size as
    // the step shrinks (a steep continuous stretch does not)
    std::vector<double> scan_jumps;
    const int nx = 400;
    double Fp, tp = global_t(-4.0, Fp);
    for (int i = 1; i <= nx; ++i) {
      const double x = -4.0 + 8.0 * i / nx;
      double F;
      const double t = global_t(x, F);
      if (t - tp > 0.05) {
        double lo = x - 8.0 / nx, hi = x, tlo = tp, thi = t;
        for (int b = 0; b < 20; ++b) {
          const double m = 0.5 * (lo + hi);
          const double tm = global_t(m, F);
          if (tm - tlo > thi - tm) hi = m, thi = tm; else lo = m, tlo = tm;
        }
        if (thi - tlo > 0.02) scan_jumps.push_back(0.5 * (lo + hi));
      }
      tp = t;
    }
    std::vector<double> rule_jumps;
    for (const auto& j : rule.jumps)
      if (j.x > -4.0 + 0.02 && j.x < 4.0 - 0.02 && (j.after.pr.chi(0) - j.before.pr.chi(0)) * std::sqrt(2.0) > 0.02)
        rule_jumps.push_back(j.x);
    lines_with_jumps += !scan_jumps.empty();
    INFO("line " << k);
    REQUIRE(rule_jumps.size() == scan_jumps.size());
    for (std::size_t i = 0; i < scan_jumps.size(); ++i) CHECK(std::abs(rule_jumps[i] - scan_jumps[i]) < 1e-3);
    for (const auto& nd : rule.nodes) {
      double F;
      global_t(nd.x, F);
      CHECK(nd.pt.pr.objective <= F + 1e-8 * (1 + std::abs(F)));
    }
  }
  CHECK(lines_with_jumps > 12);  // the sample exercises jumps
}
