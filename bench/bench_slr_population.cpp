// Benchmark of the SLR population module (docs/equations/slr_population.md §7a): cost of one (A, B) evaluation and of
// one optimised point as a function of L. The Laplace reduction makes the cost independent of L;
// the report is the ratio of each time to the L = 10 baseline measured in the same run, plus the
// ratio of tensor Gauss-Hermite (n^L points, the spec's §3.8 baseline) to Laplace at L = 3.
#include <benchmark/benchmark.h>

#include <cmath>

#include "equations/slr_population.hpp"
#include "integrators/quadrature.hpp"
#include "mc/slr_sample.hpp"

using namespace saddle;
using namespace saddle::slr;

static PopulationSetting make(Task t, int L, double nu, Activation a) {
  PopulationSetting s;
  s.task = t;
  s.lengths = {L};
  s.nu = nu;
  s.activation = a;
  return s;
}

// One (A, B) evaluation, spiked softmax, nu = 4, m_k = 2 (range(0) = L).
static void BM_AB_spiked_softmax(benchmark::State& st) {
  auto s = make(Task::Spiked, static_cast<int>(st.range(0)), 4.0, Activation::Softmax);
  for (auto _ : st) benchmark::DoNotOptimize(population_AB(s, 2.0, 4.0));
}
BENCHMARK(BM_AB_spiked_softmax)->Arg(10)->Arg(1000)->Arg(100000)->Unit(benchmark::kMillisecond);

// One (A, B) evaluation, max-SLR softmax, nu = 2 (2-D Laplace integral (S30)).
static void BM_AB_max_softmax(benchmark::State& st) {
  auto s = make(Task::Max, static_cast<int>(st.range(0)), 2.0, Activation::Softmax);
  for (auto _ : st) benchmark::DoNotOptimize(population_AB(s, 1.5, 2.25));
}
BENCHMARK(BM_AB_max_softmax)->Arg(10)->Arg(1000)->Arg(100000)->Unit(benchmark::kMillisecond);

// A whole optimised point (scan + Brent over m_k), spiked softplus, nu = 2.
static void BM_opt_spiked_softplus(benchmark::State& st) {
  auto s = make(Task::Spiked, static_cast<int>(st.range(0)), 2.0, Activation::Softplus);
  for (auto _ : st) benchmark::DoNotOptimize(optimise_population(s, {}));
}
BENCHMARK(BM_opt_spiked_softplus)->Arg(10)->Arg(100000)->Unit(benchmark::kMillisecond);

// A whole optimised point, max-SLR softmax, nu = 2.
static void BM_opt_max_softmax(benchmark::State& st) {
  auto s = make(Task::Max, static_cast<int>(st.range(0)), 2.0, Activation::Softmax);
  for (auto _ : st) benchmark::DoNotOptimize(optimise_population(s, {}));
}
BENCHMARK(BM_opt_max_softmax)->Arg(10)->Arg(100000)->Unit(benchmark::kMillisecond);

// Baseline: tensor Gauss-Hermite at L = 3 (n = 60 per axis) vs Laplace, spiked softmax.
static void BM_AB_tensorGH_L3(benchmark::State& st) {
  const int L = 3, n = 60;
  const double nu = 4.0, m = 2.0;
  GaussianTensorRule rule(Eigen::VectorXd::Zero(L), Eigen::MatrixXd::Identity(L, L), n);
  std::vector<double> chi(L), s(L);
  for (auto _ : st) {
    double A = 0, B = 0;
    for (int j = 0; j < rule.size(); ++j) {
      const double* x = rule.point(j);
      for (int l = 0; l < L; ++l) chi[l] = m * (x[l] + (l == 0 ? std::sqrt(nu) : 0.0));
      attention_weights(Activation::Softmax, 0.0, chi.data(), L, s.data());
      A += rule.weight(j) * (s[0] * s[0] + s[1] * s[1] + s[2] * s[2]);
      B += rule.weight(j) * s[0];
    }
    benchmark::DoNotOptimize(A + B);
  }
}
BENCHMARK(BM_AB_tensorGH_L3)->Unit(benchmark::kMillisecond);
static void BM_AB_laplace_L3(benchmark::State& st) {
  auto s = make(Task::Spiked, 3, 4.0, Activation::Softmax);
  for (auto _ : st) benchmark::DoNotOptimize(population_AB(s, 2.0, 4.0));
}
BENCHMARK(BM_AB_laplace_L3)->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
