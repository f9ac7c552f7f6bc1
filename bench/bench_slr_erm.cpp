// Speed of the direct SLR simulation (mc/slr_erm; docs/equations/slr_replica.md §6).
//  * BM_SlrObjective: one evaluation of (S13) and its gradient (float token rows, fused
//    dot/axpy kernels). The counter speedup_vs_naive is its speed relative to a plain two-pass
//    double-precision implementation timed in the same run (the baseline).
//  * BM_SlrTrainSeed: one full ERM seed at the reference size (D = 1000, alpha = 4, L = 3,
//    softmax, informed start): sampling, L-BFGS, 2e4 test samples. Counter: seconds per seed.
#include <benchmark/benchmark.h>

#include <chrono>
#include <cmath>
#include <vector>

#include "integrators/special.hpp"
#include "mc/slr_erm.hpp"

using namespace saddle::slr;
using namespace saddle::slr::mc;

namespace {

// Baseline: the gradient of §6 written plainly (double copy of X, separate passes per sample).
double naive_risk(const Dataset& d, const std::vector<double>& Xd, double lambda,
                  const double* th, double* g) {
  const int D = d.D;
  const double isd = 1.0 / std::sqrt(double(D));
  std::fill(g, g + 2 * D, 0.0);
  double cost = 0;
  std::vector<double> chi(8), z(8), s(8);
  for (int mu = 0; mu < d.N; ++mu) {
    const int L = d.length(mu);
    for (int l = 0; l < L; ++l) {
      const double* x = Xd.data() + static_cast<std::size_t>(d.offset[mu] + l) * D;
      double a = 0;
      for (int i = 0; i < D; ++i) a += x[i] * th[i];
      double b = 0;
      for (int i = 0; i < D; ++i) b += x[i] * th[D + i];
      chi[l] = a * isd;
      z[l] = b * isd;
    }
    saddle::softmax(chi.data(), s.data(), L);
    double f = 0;
    for (int l = 0; l < L; ++l) f += s[l] * z[l];
    const double r = d.y[mu] - f;
    cost += 0.5 * r * r;
    for (int l = 0; l < L; ++l) {
      const double* x = Xd.data() + static_cast<std::size_t>(d.offset[mu] + l) * D;
      const double ck = -r * s[l] * (z[l] - f) * isd, cv = -r * s[l] * isd;
      for (int i = 0; i < D; ++i) g[i] += ck * x[i];
      for (int i = 0; i < D; ++i) g[D + i] += cv * x[i];
    }
  }
  for (int i = 0; i < 2 * D; ++i) {
    cost += 0.5 * lambda * th[i] * th[i];
    g[i] += lambda * th[i];
  }
  return cost;
}

void BM_SlrObjective(benchmark::State& state) {
  const int D = static_cast<int>(state.range(0));
  SimSetting set;
  set.task = Task::Spiked;
  set.lengths = {3};
  set.nu = 2.0;
  const Teacher T = draw_teacher(D, 1, 0);
  const Dataset d = draw_dataset(set, T, 4 * D, 1, 0, 2);
  std::vector<double> th(2 * D), g(2 * D);
  for (int i = 0; i < D; ++i) {
    th[i] = std::sqrt(2.0) * T.kstar[i];
    th[D + i] = T.vstar[i];
  }
  std::vector<double> Xd(d.X.begin(), d.X.end());
  // Baseline timing, same run.
  const int reps = 5;
  auto t0 = std::chrono::steady_clock::now();
  double sink = 0;
  for (int r = 0; r < reps; ++r) sink += naive_risk(d, Xd, 0.1, th.data(), g.data());
  const double naive = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / reps;
  benchmark::DoNotOptimize(sink);
  double fused_total = 0;
  long n = 0;
  for (auto _ : state) {
    auto a = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(empirical_risk(set, d, 0.1, 0.1, th.data(), g.data()));
    fused_total += std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count();
    ++n;
  }
  state.counters["speedup_vs_naive"] = naive / (fused_total / n);
  state.counters["naive_ms"] = 1e3 * naive;
}
BENCHMARK(BM_SlrObjective)->Arg(400)->Arg(1000)->Unit(benchmark::kMillisecond);

void BM_SlrTrainSeed(benchmark::State& state) {
  SimSetting set;
  set.task = Task::Spiked;
  set.lengths = {3};
  set.nu = 2.0;
  ErmOptions opt;
  for (auto _ : state) {
    const SeedResult r = run_erm_seed(set, 1000, 4.0, opt, 1, 0);
    state.counters["lbfgs_iterations"] = r.iterations;
    benchmark::DoNotOptimize(r.e_test);
  }
}
BENCHMARK(BM_SlrTrainSeed)->Unit(benchmark::kSecond)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
