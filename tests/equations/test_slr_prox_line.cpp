// Tests of the line rule of the pre-integrated channel (equations/slr_prox_line.hpp,
// docs/equations/slr_replica.md §4.9) on a closed-form line problem: two branches with values
// v_-(x) = (x - b + 1)^2/2 and v_+(x) = (x - b - 1)^2/2, whose global minimiser jumps from - to +
// at x = b (D = v_+ - v_- = 2(b - x)).
// Every assertion is against a closed form: the jump point, its density phi(b)/|dD/dx|, and the
// Gaussian expectations of functions of the global branch that jump at b.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

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
    // A piecewise-constant function of the branch: E[s] = 1 - 2 Phi(b), exactly (Legendre in
    // u = Phi(x) integrates constants on each piece exactly).
    CHECK(integrate(rule, [](double, int s) { return double(s); }) ==
          Approx(1.0 - 2.0 * norm_cdf(b)).margin(1e-13));
    // A smooth function times the jump: E[(1 + x) 1{x > b}] = 1 - Phi(b) + phi(b). In u the
    // factor x = Phi^-1(u) has integrable log singularities at the infinite ends of the outer
    // pieces, so the Legendre rule converges slowly there (at b = 0.7, measured: error 2.3e-3,
    // 1.1e-3, 3.8e-4, 1.1e-4 at 8, 16, 32, 64 nodes).
    CHECK(integrate(rule, [](double x, int s) { return s > 0 ? 1.0 + x : 0.0; }) ==
          Approx(1.0 - norm_cdf(b) + norm_pdf(b)).margin(2e-3));
    {
      LineOptions fine = opt;
      fine.nodes = 64;
      LineRule<TwoWells::Point> r64;
      build_line_rule(prob, fine, r64);
      CHECK(integrate(r64, [](double x, int s) { return s > 0 ? 1.0 + x : 0.0; }) ==
            Approx(1.0 - norm_cdf(b) + norm_pdf(b)).margin(2.5e-4));
    }
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
