// Tests of solver/curve: the curve driver (replicates, mean and s.e., refinement, preferred start,
// coexistence).
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>

#include "solver/curve.hpp"
#include "solver/fixed_point.hpp"

using namespace saddle;

#include "tests/solver/curie_weiss.hpp"
#include "tests/solver/toy_systems.hpp"
using namespace saddle_test;

namespace {
// F(x) = 0.5 x + b with b = 1 + s_r / 2^level, s_r = (r - 1) / 10: fixed point x_r = 2 b; the
// replicate spread halves with each refinement level.
struct Contraction : FixedPointSystem {
  double b;
  explicit Contraction(double bb) : b(bb) {}
  int dim() const override { return 1; }
  std::vector<std::string> names() const override { return {"x"}; }
  Vec map(const Vec& x) const override { return Vec::Constant(1, 0.5 * x[0] + b); }
  Vec observables(const Vec& x) const override { return Vec::Constant(1, x[0] * x[0]); }
};
struct ContractionModel : CurveModel {
  int replicates() const override { return 3; }
  bool prepare_level(int level) override { return level <= 3; }
  std::unique_ptr<FixedPointSystem> system(double p, int r, int level) const override {
    return std::make_unique<Contraction>(p + 0.1 * (r - 1) / std::pow(2.0, level));
  }
  int refine_on() const override { return 0; }  // the state x
};
struct WellModel : CurveModel {
  std::unique_ptr<FixedPointSystem> system(double p, int, int) const override {
    return std::make_unique<DoubleWell>(p);
  }
  double free_energy(const CurvePoint& c) const override {
    return DoubleWell(c.param).free_energy(Vec::Constant(1, c.x[0].mean));
  }
  bool distinct(const CurvePoint& a, const CurvePoint& b) const override {
    return std::abs(a.x[0].mean - b.x[0].mean) > 1e-6;
  }
};
// F(x) = 0.5 x + p (fixed point x = 2p) whose value x^2 the model can only evaluate for x <= 5,
// and whose map it cannot evaluate at all for p > 10 (OutOfDomain, as the SLR population risk at
// key overlaps beyond its domain).
struct Bounded : FixedPointSystem {
  double p;
  explicit Bounded(double pp) : p(pp) {}
  int dim() const override { return 1; }
  std::vector<std::string> names() const override { return {"x"}; }
  Vec map(const Vec& x) const override {
    if (p > 10) throw OutOfDomain("map outside the domain");
    return Vec::Constant(1, 0.5 * x[0] + p);
  }
  std::vector<std::string> observable_names() const override { return {"x2"}; }
  Vec observables(const Vec& x) const override {
    if (x[0] > 5) throw OutOfDomain("value outside the domain");
    return Vec::Constant(1, x[0] * x[0]);
  }
};
struct BoundedModel : CurveModel {
  std::unique_ptr<FixedPointSystem> system(double p, int, int) const override {
    return std::make_unique<Bounded>(p);
  }
};
// A known 2-cycle per replicate: F_r(x) = c_r + eps (x <= c_r), c_r - eps (x > c_r), with
// c_r = p + sigma (r - (R - 1)/2). The plain iteration (mix 1) is in the cycle
// c_r + eps <-> c_r - eps from its first step: amplitude 2 eps, never a fixed point.
struct TwoCycle : FixedPointSystem {
  double c, eps;
  TwoCycle(double cc, double e) : c(cc), eps(e) {}
  int dim() const override { return 1; }
  std::vector<std::string> names() const override { return {"x"}; }
  Vec map(const Vec& x) const override { return Vec::Constant(1, x[0] <= c ? c + eps : c - eps); }
};
struct TwoCycleModel : CurveModel {
  int R;
  double sigma, eps;
  TwoCycleModel(int r, double s, double e) : R(r), sigma(s), eps(e) {}
  int replicates() const override { return R; }
  std::unique_ptr<FixedPointSystem> system(double p, int r, int) const override {
    return std::make_unique<TwoCycle>(p + sigma * (r - 0.5 * (R - 1)), eps);
  }
};
// A map with one jump: F(x) = (x + c) / 2 + eps (x <= j), (x + c) / 2 - eps (x > j), with its
// Jacobian 1/2 (Newton). With the jump at j = c it straddles c: F(x) - x changes sign there by a
// jump of 2 eps and has no root (no fixed point; Newton ends with residual >= eps). With j > c + 2
// eps the fixed point is x = c + 2 eps.
struct OneJump : FixedPointSystem {
  double c, j, eps;
  OneJump(double cc, double jj, double e) : c(cc), j(jj), eps(e) {}
  int dim() const override { return 1; }
  std::vector<std::string> names() const override { return {"x"}; }
  Vec map(const Vec& x) const override {
    return Vec::Constant(1, 0.5 * (x[0] + c) + (x[0] <= j ? eps : -eps));
  }
  bool map_jacobian(const Vec& x, Vec& fx, Eigen::MatrixXd& J) const override {
    fx = map(x);
    J = Eigen::MatrixXd::Constant(1, 1, 0.5);
    return true;
  }
};
// Replicate r of R: c = p + r; replicate 0's jump straddles its fixed point. Redraw attempt a
// puts it at c + a - first_good + 1 for a >= first_good (away: fixed point c + 2 eps), and at c
// (straddling again) for a < first_good; first_good > kRedrawAttempts: no redraw helps.
struct OneJumpModel : CurveModel {
  int R, first_good;
  bool with_redraw;
  double eps = 1e-3;
  OneJumpModel(int r, int good, bool redraw) : R(r), first_good(good), with_redraw(redraw) {}
  int replicates() const override { return R; }
  std::unique_ptr<FixedPointSystem> system(double p, int r, int) const override {
    const double c = p + r;
    return std::make_unique<OneJump>(c, r == 0 ? c : c + 1.0, eps);
  }
  std::unique_ptr<FixedPointSystem> redraw_system(double p, int r, int, int a) const override {
    if (!with_redraw) return nullptr;
    const double c = p + r;
    return std::make_unique<OneJump>(c, a >= first_good ? c + a - first_good + 1.0 : c, eps);
  }
};
// F_r(x) = c_r + rho_r (x - c_r), c_r = p + 1e-3 r: replicate 0 contracts at once (rho = 0: at its
// fixed point after one pass), the others halve their error per pass (rho = 1/2); with cycle0,
// replicate 0 is the 2-cycle c_0 +- 1/2 instead (no fixed point).
struct Affine : FixedPointSystem {
  double c, rho;
  Affine(double cc, double r) : c(cc), rho(r) {}
  int dim() const override { return 1; }
  std::vector<std::string> names() const override { return {"x"}; }
  Vec map(const Vec& x) const override { return Vec::Constant(1, c + rho * (x[0] - c)); }
};
struct PilotModel : CurveModel {
  bool cycle0;
  explicit PilotModel(bool cyc) : cycle0(cyc) {}
  int replicates() const override { return 4; }
  std::unique_ptr<FixedPointSystem> system(double p, int r, int) const override {
    const double c = p + 1e-3 * r;
    if (r == 0 && cycle0) return std::make_unique<TwoCycle>(c, 0.5);
    return std::make_unique<Affine>(c, r == 0 ? 0.0 : 0.5);
  }
};
}  // namespace

TEST_CASE("Curve driver: a stalled iteration is never converged; within the map's noise it is",
          "[core][solver]") {
  CurveStart st{"s", Vec::Constant(1, 0.3), Direction::Forward, true};
  CurveOptions opt;
  opt.solver.method = Method::Damped;
  opt.solver.mix = 1.0;
  opt.solver.tol = 1e-10;
  opt.solver.stall_window = 20;
  // A cycle far above the map's noise (eps = 0.5 against replicate spread 0.01): not converged,
  // whatever warm_accept says, with the cycle's amplitude and the reason.
  {
    TwoCycleModel model(4, 0.01, 0.5);
    opt.warm_accept = 10.0;
    const auto pts = run_curve(model, {1.0, 2.0}, {st}, opt);
    REQUIRE(pts.size() == 2);
    for (const auto& p : pts) {
      CHECK_FALSE(p.converged);
      CHECK(p.n_stalled == 4);
      CHECK(p.n_converged == 0);
      CHECK(p.n_noise == 0);
      CHECK(reason_text(p) == "stalled");
      CHECK(p.amplitude == Approx(2.0 * 0.5).epsilon(1e-12));
      CHECK(p.residual >= 0.5 - 1e-12);  // at the cycle's mean c_r: |F - x| = eps
    }
  }
  // A cycle far below it (eps = 1e-4 against spread 0.1; the noise of F_r at the mean state is
  // the s.d. of c_r +- eps, about 0.13, times noise_factor 0.1 = 0.013 > the residual 1e-4):
  // converged within the noise, reason "noise".
  {
    TwoCycleModel model(4, 0.1, 1e-4);
    const auto pts = run_curve(model, {1.0}, {st}, opt);
    CHECK(pts[0].converged);
    CHECK(pts[0].n_noise == 4);
    CHECK(reason_text(pts[0]) == "noise");
    CHECK(pts[0].x[0].mean == Approx(1.0).margin(1e-4));
    // The same without the noise rule, or without replicates to measure the noise: not converged.
    CurveOptions strict = opt;
    strict.noise_factor = 0.0;
    CHECK_FALSE(run_curve(model, {1.0}, {st}, strict)[0].converged);
    TwoCycleModel single(1, 0.1, 1e-4);
    CHECK_FALSE(run_curve(single, {1.0}, {st}, opt)[0].converged);
  }
}

TEST_CASE("Curve driver: a replicate whose map has no fixed point is redrawn; failed redraws change nothing",
          "[core][solver]") {
  CurveStart st{"s", Vec::Zero(1), Direction::Forward, true};
  CurveOptions opt;
  opt.solver.method = Method::Newton;
  opt.solver.tol = 1e-10;
  opt.solver.stall_window = 20;
  opt.noise_factor = 0.0;  // converged means below tol here
  const int R = 3;
  const double p = 1.0, eps = 1e-3;
  // No redraw: replicate 0 has no fixed point and the point is not converged.
  OneJumpModel plain(R, 1, false);
  const auto none = run_curve(plain, {p}, {st}, opt);
  REQUIRE(none.size() == 1);
  CHECK_FALSE(none[0].converged);
  CHECK(none[0].n_converged == R - 1);
  CHECK(none[0].n_redrawn == 0);
  CHECK(none[0].residual >= eps);
  // A redraw that moves the jump away: every replicate meets tol, replicate 0 at c + 2 eps; the
  // second attempt is tried when the first straddles too.
  for (int good : {1, 2}) {
    OneJumpModel model(R, good, true);
    const auto pts = run_curve(model, {p}, {st}, opt);
    REQUIRE(pts.size() == 1);
    CHECK(pts[0].converged);
    CHECK(pts[0].n_converged == R);
    CHECK(pts[0].n_redrawn == 1);
    CHECK(path_text(pts[0]) == "newton+redraw:1");
    CHECK(pts[0].residual <= 1e-10);
    // x_r = p + r + 2 eps for every r: mean p + (R - 1)/2 + 2 eps
    CHECK(pts[0].x[0].mean == Approx(p + 0.5 * (R - 1) + 2.0 * eps).epsilon(1e-12));
  }
  // Redraws that all straddle: the result is that of the solve without redraws (same state, same
  // verdict), only the count of map passes grows.
  OneJumpModel failing(R, kRedrawAttempts + 1, true);
  const auto bad = run_curve(failing, {p}, {st}, opt);
  REQUIRE(bad.size() == 1);
  CHECK_FALSE(bad[0].converged);
  CHECK(bad[0].n_redrawn == 0);
  CHECK(bad[0].x[0].mean == none[0].x[0].mean);
  CHECK(bad[0].residual == none[0].residual);
  CHECK(bad[0].reason == none[0].reason);
  CHECK(bad[0].iterations > none[0].iterations);
}

TEST_CASE("Curve driver: a point outside the model's domain is not converged, the curve goes on",
          "[core][solver]") {
  BoundedModel model;
  CurveStart st{"s", Vec::Zero(1), Direction::Forward, true};
  CurveOptions opt;
  opt.solver.tol = 1e-12;
  const std::vector<double> ps{1.0, 3.0, 20.0, 2.0};
  const auto pts = run_curve(model, ps, {st}, opt);
  REQUIRE(pts.size() == 4);
  CHECK(pts[0].converged);
  CHECK(pts[0].values[0].mean == Approx(4.0).epsilon(1e-9));  // x = 2
  CHECK_FALSE(pts[1].converged);                                // x = 6: its value is out of domain
  CHECK(std::isnan(pts[1].values[0].mean));
  CHECK(pts[1].x[0].mean == Approx(6.0).epsilon(1e-9));
  CHECK_FALSE(pts[2].converged);  // the map itself is out of domain
  CHECK(pts[3].converged);        // and the curve goes on
  CHECK(pts[3].values[0].mean == Approx(16.0).epsilon(1e-9));
}

TEST_CASE("Curve driver: replicates, mean and s.e., refinement to a target", "[core][solver]") {
  ContractionModel model;
  CurveStart st{"s", Vec::Zero(1), Direction::Forward, true};
  CurveOptions opt;
  opt.solver.tol = 1e-13;
  auto pts = run_curve(model, {1.0, 2.0}, {st}, opt);
  REQUIRE(pts.size() == 2);
  for (const auto& p : pts) {
    CHECK(p.converged);
    CHECK(p.n_converged == 3);
    // x_r = 2 (p + 0.1 (r - 1)), r = 0, 1, 2: mean 2p, sd 0.2, s.e. 0.2 / sqrt 3.
    CHECK(p.x[0].mean == Approx(2.0 * p.param).epsilon(1e-12));
    CHECK(p.x[0].se == Approx(0.2 / std::sqrt(3.0)).epsilon(1e-9));
    CHECK(p.values[0].mean == Approx(4.0 * p.param * p.param + 0.04 * 2.0 / 3.0).epsilon(1e-9));
    CHECK(p.level == 0);
  }
  // Target s.e. 0.04: level 2 (s.e. 0.2/sqrt 3/4 = 0.029) is the first below it.
  opt.target_se = 0.04;
  opt.max_refine = 3;
  pts = run_curve(model, {1.0}, {st}, opt);
  CHECK(pts[0].level == 2);
  CHECK(pts[0].x[0].se == Approx(0.05 / std::sqrt(3.0)).epsilon(1e-9));
}

TEST_CASE("Curve driver: the lowest free energy among the acceptable starts", "[core][solver]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  CHECK(lowest_free_energy({1.0, -2.0, 0.5}, {true, true, true}) == 1);
  CHECK(lowest_free_energy({1.0, -2.0, 0.5}, {true, false, true}) == 2);
  CHECK(lowest_free_energy({nan, 3.0}, {true, true}) == 1);  // a finite value replaces an unknown one
  CHECK(lowest_free_energy({nan, nan}, {true, true}) == 0);  // unknown: the first acceptable
  CHECK(lowest_free_energy({2.0, 2.0}, {true, true}) == 0);  // ties: the first
  CHECK(lowest_free_energy({1.0}, {false}) == -1);
  CHECK(lowest_free_energy({}, {}) == -1);
}

TEST_CASE("Curve driver: the pilot start of a warm chain", "[core][solver]") {
  // PilotModel, plain iteration (mix 1), tol 1e-12, chain start x0 = 0, first point p = 10. Without
  // the pilot every replicate starts 10 away from its fixed point: at least log2(10 / 1e-12) > 43
  // passes. With it, replicates 1-3 start from replicate 0's solution c_0, at most 3e-3 away: at
  // most log2(3e-3 / 1e-12) + 2 < 34 passes; the fixed points are the same, c_r. Where replicate 0
  // has no fixed point, the others start from x0 as without the pilot.
  CurveOptions opt;
  opt.solver.method = Method::Damped;
  opt.solver.mix = 1.0;
  opt.solver.tol = 1e-12;
  for (const Direction dir : {Direction::Forward, Direction::Backward}) {
    const std::vector<double> ps = dir == Direction::Forward ? std::vector<double>{10.0, 10.5}
                                                             : std::vector<double>{9.5, 10.0};
    const std::size_t first = dir == Direction::Forward ? 0 : 1;
    CurveStart st{"s", Vec::Zero(1), dir, true};
    PilotModel model(false);
    opt.pilot = true;
    const auto on = run_curve(model, ps, {st}, opt);
    opt.pilot = false;
    const auto off = run_curve(model, ps, {st}, opt);
    REQUIRE(on.size() == 2);
    REQUIRE(off.size() == 2);
    for (const auto* pts : {&on, &off})
      for (const auto& p : *pts) {
        CHECK(p.converged);
        CHECK(p.x[0].mean == Approx(p.param + 1.5e-3).epsilon(1e-12));
      }
    CHECK(on[first].iterations < 34);
    CHECK(off[first].iterations > 43);
    CHECK(on[1 - first].iterations == off[1 - first].iterations);  // warm starts alike

    PilotModel cyc(true);
    opt.pilot = true;
    const auto c_on = run_curve(cyc, ps, {st}, opt);
    opt.pilot = false;
    const auto c_off = run_curve(cyc, ps, {st}, opt);
    CHECK_FALSE(c_on[first].converged);
    CHECK(c_on[first].n_converged == 3);
    CHECK(c_on[first].iterations == c_off[first].iterations);
    CHECK(c_on[first].x[0].mean == c_off[first].x[0].mean);
  }
}

TEST_CASE("Curve driver: the secant predictor starts a linear branch on its fixed point",
          "[core][solver]") {
  // ContractionModel: fixed point x_r(p) = 2 (p + 0.1 (r - 1)), linear in p. The plain iteration
  // (mix 1) halves the error per step. From the third point of a chain on, the secant start is the
  // fixed point up to the two previous points' errors (<= 2 tol each): at most 3 iterations. The
  // warm start misses by 2 |dp| >= 1: at least log2(1 / 2e-12) > 38 iterations.
  ContractionModel model;
  CurveOptions opt;
  opt.solver.method = Method::Damped;
  opt.solver.mix = 1.0;
  opt.solver.tol = 1e-12;
  const std::vector<double> ps = {1.0, 1.5, 2.5, 3.0, 4.5};  // uneven steps
  for (const Direction dir : {Direction::Forward, Direction::Backward}) {
    CurveStart st{"s", Vec::Zero(1), dir, true};
    opt.secant_predictor = true;
    const auto sec = run_curve(model, ps, {st}, opt);
    opt.secant_predictor = false;
    const auto warm = run_curve(model, ps, {st}, opt);
    REQUIRE(sec.size() == ps.size());
    REQUIRE(warm.size() == ps.size());
    for (std::size_t k = 0; k < ps.size(); ++k) {
      const std::size_t i = dir == Direction::Forward ? k : ps.size() - 1 - k;
      CHECK(sec[i].converged);
      CHECK(sec[i].x[0].mean == Approx(2.0 * ps[i]).epsilon(1e-11));
      CHECK(warm[i].x[0].mean == Approx(2.0 * ps[i]).epsilon(1e-11));
      if (k >= 2) {
        CHECK(sec[i].iterations <= 3);
        CHECK(warm[i].iterations >= 38);
      }
    }
  }
}

TEST_CASE("Curve driver: preferred start by free energy, coexistence", "[core][solver]") {
  WellModel model;
  CurveOptions opt;
  opt.solver.tol = 1e-12;
  std::vector<CurveStart> starts{{"up", Vec::Constant(1, 0.5), Direction::Forward, true},
                                 {"down", Vec::Constant(1, -2.0), Direction::Backward, true}};
  const std::vector<double> ps{0.5, 1.0, 2.0};
  auto pts = run_curve(model, ps, starts, opt);
  REQUIRE(pts.size() == 6);
  for (std::size_t i = 0; i < ps.size(); ++i) {
    const CurvePoint &up = pts[i], &down = pts[ps.size() + i];
    CHECK(up.x[0].mean == Approx(std::sqrt(ps[i])).epsilon(1e-10));
    CHECK(down.x[0].mean == Approx(-std::sqrt(ps[i])).epsilon(1e-10));
    // The tilt +0.1 x favours the negative well; both wells coexist.
    CHECK_FALSE(up.preferred);
    CHECK(down.preferred);
    CHECK(up.coexist);
    CHECK(down.coexist);
  }
}

// Branches through a pitchfork (tests/solver/curie_weiss.hpp): closed forms m = 0 for beta J < 1
// at h = 0 and the non-zero root of m = tanh(beta J m) above.
TEST_CASE("Curve driver: map radius flags the repelling branch, two starts pick it by free energy",
          "[core][solver]") {
  using namespace saddle_test::curie_weiss;
  const std::vector<double> betas{0.5, 0.8, 1.5, 2.0, 3.0};
  CurveOptions opt;
  opt.map_radius = true;
  for (bool jac : {true, false}) {
    Model model(1.0, 0.0, jac);
    // One start from the exactly symmetric state: every point is m = 0, reported converged,
    // and map_radius = |F'(0)| = beta J says which of them the iteration repels.
    const auto one = run_curve(model, betas, {Model::low()}, opt);
    REQUIRE(one.size() == betas.size());
    for (std::size_t i = 0; i < betas.size(); ++i) {
      CHECK(one[i].converged);
      CHECK(one[i].x[0].mean == Approx(0.0).margin(1e-12));
      CHECK(one[i].map_radius.mean == Approx(betas[i]).epsilon(1e-7));
      CHECK(one[i].repelling() == (betas[i] > 1.0));
    }
    // Two starts (the second backward from m = 1): above beta J = 1 the high start holds the
    // non-zero root, attracting (radius < 1), with the lower free energy: preferred.
    const auto two = run_curve(model, betas, Model::starts({}), opt);
    REQUIRE(two.size() == 2 * betas.size());
    const std::size_t n = betas.size();
    for (std::size_t i = 0; i < n; ++i) {
      const CurvePoint &lo = two[i], &hi = two[n + i];
      const double root = positive_root(betas[i], 1.0);
      CHECK(hi.converged);
      CHECK(hi.x[0].mean == Approx(root).margin(1e-8));
      if (betas[i] > 1.0) {
        CHECK(root > 0.8);
        CHECK(lo.repelling());
        CHECK_FALSE(hi.repelling());
        CHECK(hi.map_radius.mean == Approx(betas[i] * (1 - root * root)).epsilon(1e-6));
        CHECK(hi.preferred);
        CHECK_FALSE(lo.preferred);
        CHECK(hi.coexist);
        CHECK(lo.coexist);
      } else {
        CHECK_FALSE(hi.repelling());
        CHECK_FALSE(hi.coexist);
      }
    }
  }
}

TEST_CASE("Curve driver: a start with escape leaves a repelling symmetric warm start",
          "[core][solver]") {
  using namespace saddle_test::curie_weiss;
  // The run: one start m = 0.9 at beta = 0.5 (h = 0) walks to m ~ 1e-11 and would stay
  // there; with escape it leaves m = 0 once beta J > 1 and follows the attracting root.
  const std::vector<double> betas{0.5, 0.9, 1.25, 1.5, 2.0};
  Model model(1.0, 0.0, false);
  CurveOptions opt;
  const auto stay = run_curve(model, betas, {Model::low(0.9)}, opt);
  CHECK(stay[4].x[0].mean == Approx(0.0).margin(1e-8));
  CHECK(std::isnan(stay[4].map_radius.mean));  // not asked for
  const auto away = run_curve(model, betas, {Model::low(0.9, 1e-3)}, opt);
  for (std::size_t i = 0; i < betas.size(); ++i) {
    CHECK(away[i].converged);
    CHECK(away[i].x[0].mean == Approx(positive_root(betas[i], 1.0)).margin(1e-7));
    CHECK(away[i].map_radius.mean < 1.0);
  }
}

TEST_CASE("options check themselves: defaults valid, each field out of its domain named", "[solver]") {
  std::string error;
  CHECK(SolverOptions().is_valid(&error));
  CHECK(CurveOptions().is_valid(nullptr));
  auto bad = [](CurveOptions o, const std::string& field) {
    std::string e;
    CHECK_FALSE(o.is_valid(&e));
    CHECK(e.rfind(field + ": ", 0) == 0);
  };
  CurveOptions o;
  o.solver.mix = 0.0;
  bad(o, "mix");
  o = CurveOptions();
  o.solver.tol = std::numeric_limits<double>::quiet_NaN();
  bad(o, "tol");
  o = CurveOptions();
  o.solver.max_iter = 0;
  bad(o, "max_iter");
  o = CurveOptions();
  o.solver.anderson_depth = 101;
  bad(o, "anderson_depth");
  o = CurveOptions();
  o.solver.stall_window = -1;
  bad(o, "stall_window");
  o = CurveOptions();
  o.noise_factor = 1.5;
  bad(o, "noise_factor");
  o = CurveOptions();
  o.target_se = -1e-3;
  bad(o, "target_se");
  o = CurveOptions();
  o.max_refine = 5;
  bad(o, "max_refine");
  o = CurveOptions();
  o.retry_mix = 0.0;
  bad(o, "retry_mix");
}
