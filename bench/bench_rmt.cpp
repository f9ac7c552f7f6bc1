// Benchmarks of the RMT deterministic equivalent (docs/equations/rmt.md §6): a 13-point gamma curve with the
// production rule (pole-clustered split Gauss-Legendre, §6.5) against the baseline of the spec,
// the theta-midpoint rule at N = 2000, measured in the same run; and the production bulk solve
// (the solver's Newton in BulkSystem's log chart, then the spike step) against the plain
// Anderson iteration of the same system on the same rule. Each
// production benchmark reports `speedup` = baseline time / its time (counter), e.g.
//   bench_rmt --benchmark_filter=Curve
#include <benchmark/benchmark.h>

#include <chrono>
#include <algorithm>
#include <cmath>
#include <vector>

#include "equations/rmt_attention.hpp"
#include "mc/rmt_sim.hpp"
#include "solver/fixed_point.hpp"

using namespace saddle;
using namespace saddle::rmt;

namespace {

AttentionParams params(double c, double gamma, const char* act = "tanh") {
  static const HermiteData h = hermite_data(parse_activation(act));
  Geometry g;
  g.mu << 1.0, 0.0, 0.0;
  g.wk << 1.0, 0.0, 0.0;
  g.wq << 1.0, 0.0, 0.0;
  return make_params(c, gamma, h, false, g);
}
double gamma_k(int k) { return std::pow(10.0, -6.0 + 0.5 * k); }  // 1e-6 .. 1, 13 points

// 13-point curve; midpoint = true uses the theta-midpoint rule with N = 2000 (spec baseline).
double curve(double c, bool midpoint) {
  double s = 0;
  AttentionOptions opt;
  MPRule mid;
  if (midpoint) mid = mp_theta_midpoint(c, 2000);
  for (int k = 0; k < 13; ++k) {
    AttentionParams p = params(c, gamma_k(k));
    s += (midpoint ? solve_attention(p, mid, opt) : solve_attention(p, opt)).error;
  }
  return s;
}

template <class F>
double seconds(F f, int reps) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(f());
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

}  // namespace

static void BM_Curve13_Production(benchmark::State& st) {
  const double c = st.range(0) / 100.0;
  const double base = seconds([&] { return curve(c, true); }, 3);
  for (auto _ : st) benchmark::DoNotOptimize(curve(c, false));
  const double mine = seconds([&] { return curve(c, false); }, 5);
  st.counters["speedup_vs_midpoint2000"] = base / mine;
  st.counters["curve_ms"] = mine * 1e3;
}
BENCHMARK(BM_Curve13_Production)->Arg(50)->Arg(200)->Unit(benchmark::kMillisecond);

static void BM_Curve13_MidpointN2000(benchmark::State& st) {
  const double c = st.range(0) / 100.0;
  for (auto _ : st) benchmark::DoNotOptimize(curve(c, true));
}
BENCHMARK(BM_Curve13_MidpointN2000)->Arg(50)->Arg(200)->Unit(benchmark::kMillisecond);

// Bulk (R1)-(R2) only, same rule: generic solver (Anderson + GSL Newton polish) vs the full
// dedicated DE point (log-Newton bulk + spike step + derivative).
static void BM_Point_Dedicated_vs_GenericBulk(benchmark::State& st) {
  const double g = std::pow(10.0, -double(st.range(0)));
  AttentionParams p = params(2.0, g);
  MPRule rule = mp_split_rule(2.0, g, p.a1, p.kappa_d, 48);
  BulkSystem sys(p, rule);
  SolverOptions opt;
  opt.tol = 1e-13;  // the production tolerance, on the same relative residual
  opt.max_iter = 100000;
  Vec x0(2);
  x0 << 0.0, 1.0 / g;
  int generic_iters = 0;
  bool generic_ok = false;
  const double generic = seconds([&] {
    SolveResult r = solve(sys, x0, opt);
    generic_iters = r.summary.iterations;
    generic_ok = r.summary.converged;
    return r.x(1);
  }, 3);
  int my_iters = 0;
  for (auto _ : st) {
    AttentionResult r = solve_attention(p, rule, AttentionOptions{});
    my_iters = r.iterations;
    benchmark::DoNotOptimize(r.error);
  }
  const double mine = seconds([&] { return solve_attention(p, rule, AttentionOptions{}).error; }, 5);
  st.counters["speedup_vs_generic_bulk"] = generic / mine;
  st.counters["generic_iterations"] = generic_iters;
  st.counters["generic_converged"] = generic_ok;
  st.counters["newton_iterations"] = my_iters;
}
BENCHMARK(BM_Point_Dedicated_vs_GenericBulk)->Arg(1)->Arg(3)->Arg(6)->Unit(benchmark::kMicrosecond);

// One Monte Carlo draw of the true model (n = 512, c = 0.5), for sizing simulations.
static void BM_McDrawTrue(benchmark::State& st) {
  mc::SimSetting s;
  s.n = 512;
  s.c = 0.5;
  s.act = parse_activation("tanh");
  s.h = hermite_data(s.act);
  s.gammas = {1e-3, 0.1, 1.0};
  s.models = {mc::Model::True};
  int d = 0;
  for (auto _ : st) benchmark::DoNotOptimize(mc::simulate_draw(s, d++).error);
}
BENCHMARK(BM_McDrawTrue)->Unit(benchmark::kMillisecond);

// E(gamma) of one draw's feature matrix: the production spectral_errors (one polled tridiagonal
// reduction of the smaller Gram matrix, a tridiagonal solve per gamma; docs/equations/rmt.md §8.1)
// against the previous algorithm, the full eigendecomposition with eigenvectors, timed in the
// same run on the same matrix. Arg: n; p = 2n (Gram n x n). Counters: the speedup and the largest
// relative difference of E over the gamma grid.
static void BM_SpectralErrors_vs_Eigendecomposition(benchmark::State& st) {
  const int n = static_cast<int>(st.range(0)), p = 2 * n;
  const Eigen::MatrixXd Phi = Eigen::MatrixXd::Random(p, n);
  const Eigen::VectorXd y = Eigen::VectorXd::Random(n).cwiseSign();
  const std::vector<double> gs = {1e-3, 0.1, 1.0};
  std::vector<double> e_eig(gs.size());
  const double base = seconds([&] {
    Eigen::MatrixXd A = Eigen::MatrixXd::Zero(n, n);
    A.selfadjointView<Eigen::Lower>().rankUpdate(Phi.transpose(), 1.0 / n);
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(A);
    const Eigen::VectorXd lam = es.eigenvalues().cwiseMax(0.0);
    const Eigen::VectorXd cy = es.eigenvectors().transpose() * y;
    for (std::size_t k = 0; k < gs.size(); ++k) {
      double e = 0;
      for (int i = 0; i < n; ++i) e += std::pow(gs[k] / (lam(i) + gs[k]) * cy(i), 2);
      e_eig[k] = e / n;
    }
    return e_eig[0];
  }, 1);
  std::vector<double> e, t;
  for (auto _ : st) {
    mc::spectral_errors(Phi, y, gs, e, t);
    benchmark::DoNotOptimize(e[0]);
  }
  const double mine = seconds([&] {
    mc::spectral_errors(Phi, y, gs, e, t);
    return e[0];
  }, 1);
  double diff = 0;
  for (std::size_t k = 0; k < gs.size(); ++k) diff = std::max(diff, std::abs(e[k] - e_eig[k]) / e_eig[k]);
  st.counters["speedup_vs_eigendecomposition"] = base / mine;
  st.counters["max_rel_diff"] = diff;
}
BENCHMARK(BM_SpectralErrors_vs_Eigendecomposition)->Arg(500)->Arg(1500)->Iterations(1)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
