// Benchmarks of the solver core on the ridge fixture: Anderson against the damped iteration
// (the baseline, measured in the same run), and the cost of a cached vs a fresh Gauss-Hermite
// rule. Report: ratio of the two times, e.g. `bench_core --benchmark_filter=Ridge`.
#include <benchmark/benchmark.h>

#include "equations/ridge.hpp"
#include "integrators/quadrature.hpp"
#include "solver/fixed_point.hpp"

using namespace saddle;

static void run_ridge(benchmark::State& st, Method m) {
  ridge::RidgeSystem sys({1.0, 0.01, 0.25});  // slow point: alpha = 1, small lambda
  SolverOptions opt;
  opt.method = m;
  opt.tol = 1e-12;
  opt.newton_polish = false;
  int iters = 0;
  for (auto _ : st) {
    SolveResult r = solve(sys, ridge::RidgeSystem::cold_start(), opt);
    iters = r.summary.iterations;
    benchmark::DoNotOptimize(r.x);
  }
  st.counters["iterations"] = iters;
}
static void BM_RidgeDamped(benchmark::State& st) { run_ridge(st, Method::Damped); }
static void BM_RidgeAnderson(benchmark::State& st) { run_ridge(st, Method::Anderson); }
BENCHMARK(BM_RidgeDamped);
BENCHMARK(BM_RidgeAnderson);

static void BM_GaussHermiteCached(benchmark::State& st) {
  gauss_hermite(200);
  for (auto _ : st) benchmark::DoNotOptimize(&gauss_hermite(200));
}
BENCHMARK(BM_GaussHermiteCached);

BENCHMARK_MAIN();
