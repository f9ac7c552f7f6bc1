// Speed of the direct SLR simulation (mc/slr_erm*; docs/equations/slr_replica.md §6).
//  * BM_SlrObjective: one evaluation of (S13) and its gradient (float token rows, per-sample
//    kernels). The counter speedup_vs_naive is its speed relative to a plain two-pass
//    double-precision implementation timed in the same run (the baseline).
//  * BM_SlrKernels: the same evaluation on one thread by kernel variant (per-row AVX2 = the
//    previous trainer, per-sample AVX2, per-sample AVX-512), best of the repetitions.
//  * BM_SlrSeedPhases: the phases of one seed timed alone (data draw, test plan, test errors, one
//    evaluation).
//  * BM_SlrTrainSeed: one full ERM seed at the reference size (D = 1000, alpha = 4, L = 3,
//    softmax, informed start): sampling, L-BFGS, 2e4 test samples. Counters: L-BFGS iterations
//    and objective evaluations.
#include <benchmark/benchmark.h>

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include "integrators/special.hpp"
#include "mc/slr_erm.hpp"
#include "mc/slr_erm_kernels.hpp"

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

// One evaluation of (S13) + gradient at D = 1000, alpha = 4, L = 3 on one thread, by kernel
// variant: 0 = per-row kernels (dot2 then axpy2 row by row, AVX2: the previous trainer), 1 =
// per-sample AVX2, 2 = per-sample AVX-512 (when the CPU has it). Counters: ms per evaluation
// (best of the repetitions) and ns per token entry.
double rows_risk(const SimSetting& set, const Dataset& d, const double* th, double* g) {
  const int D = d.D;
  const double isd = 1.0 / std::sqrt(double(D));
  std::fill(g, g + 2 * D, 0.0);
  double cost = 0, chi[8], z[8], s[8], w[8];
  for (int mu = 0; mu < d.N; ++mu) {
    const int L = d.length(mu);
    for (int l = 0; l < L; ++l) {
      dot2(d.row(d.offset[mu] + l), th, th + D, D, &chi[l], &z[l]);
      chi[l] *= isd;
      z[l] *= isd;
    }
    const double f = attention_forward(set.activation, set.erf_b, L, chi, z, s, w);
    const double r = d.y[mu] - f;
    cost += 0.5 * r * r;
    for (int l = 0; l < L; ++l) axpy2(d.row(d.offset[mu] + l), -r * w[l] * isd, -r * s[l] * isd, D, g, g + D);
  }
  return cost;
}
void BM_SlrKernels(benchmark::State& state) {
  const int variant = static_cast<int>(state.range(0));
  const KernelSet best = kernel_set();
  if (variant == 2 && best != KernelSet::Avx512) {
    state.SkipWithError("no AVX-512 on this CPU");
    return;
  }
  kernel_set() = variant == 2 ? KernelSet::Avx512 : KernelSet::Avx2;
  SimSetting set;
  set.task = Task::Spiked;
  set.lengths = {3};
  set.nu = 2.0;
  const int D = 1000;
  const Teacher T = draw_teacher(D, 1, 0);
  const Dataset d = draw_dataset(set, T, 4 * D, 1, 0, 2);
  std::vector<double> th(2 * D), g(2 * D);
  for (int i = 0; i < D; ++i) {
    th[i] = std::sqrt(2.0) * T.kstar[i];
    th[D + i] = T.vstar[i];
  }
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  double best_ms = 1e300;
  for (auto _ : state) {
    auto a = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(variant == 0 ? rows_risk(set, d, th.data(), g.data())
                                          : empirical_risk(set, d, 0.1, 0.1, th.data(), g.data()));
    best_ms = std::min(best_ms, 1e3 * std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count());
  }
  omp_set_num_threads(saved);
  kernel_set() = best;
  state.counters["best_ms"] = best_ms;
  state.counters["ns_per_entry"] = 1e6 * best_ms / double(d.X.size());
}
BENCHMARK(BM_SlrKernels)->Arg(0)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);

void BM_SlrTrainSeed(benchmark::State& state) {
  SimSetting set;
  set.task = Task::Spiked;
  set.lengths = {3};
  set.nu = 2.0;
  ErmOptions opt;
  for (auto _ : state) {
    const SeedResult r = run_erm_seed(set, 1000, 4.0, opt, 1, 0);
    state.counters["lbfgs_iterations"] = r.iterations;
    state.counters["evaluations"] = double(r.evaluations);
    benchmark::DoNotOptimize(r.e_test);
  }
}

// The phases of one seed at the reference size, each timed alone (wall clock, the threads of the
// run): drawing the training set, the test set's sequential pass, the test errors, and one
// evaluation of (S13) with its gradient (ms).
void BM_SlrSeedPhases(benchmark::State& state) {
  SimSetting set;
  set.task = Task::Spiked;
  set.lengths = {3};
  set.nu = 2.0;
  const int D = 1000, N = 4000, n_test = 20000;
  auto ms = [](auto t0) {
    return 1e3 * std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  for (auto _ : state) {
    const Teacher T = draw_teacher(D, 1, 0);
    auto t0 = std::chrono::steady_clock::now();
    const Dataset d = draw_dataset(set, T, N, 1, 0, 2);
    state.counters["draw_ms"] = ms(t0);
    t0 = std::chrono::steady_clock::now();
    const TestPlan plan = plan_test_set(set, D, n_test, 1, 0);
    state.counters["test_plan_ms"] = ms(t0);
    std::vector<double> k(D), v(D), th(2 * D), g(2 * D);
    for (int i = 0; i < D; ++i) {
      th[i] = k[i] = std::sqrt(2.0) * T.kstar[i];
      th[D + i] = v[i] = T.vstar[i];
    }
    t0 = std::chrono::steady_clock::now();
    benchmark::DoNotOptimize(test_errors(set, T, k, v, plan).mse);
    state.counters["test_errors_ms"] = ms(t0);
    t0 = std::chrono::steady_clock::now();
    const int evals = 20;
    for (int e = 0; e < evals; ++e) benchmark::DoNotOptimize(empirical_risk(set, d, 0.1, 0.1, th.data(), g.data()));
    state.counters["evaluation_ms"] = ms(t0) / evals;
  }
}
BENCHMARK(BM_SlrSeedPhases)->Unit(benchmark::kSecond)->Iterations(1);
BENCHMARK(BM_SlrTrainSeed)->Unit(benchmark::kSecond)->Iterations(1);

}  // namespace

BENCHMARK_MAIN();
