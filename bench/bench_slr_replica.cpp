// Benchmarks of the SLR replica hot loop (docs/equations/slr_replica.md §4.4-§4.5): the global proximal step per
// draw (softmax and linear, L = 2, 3) and one full channel evaluation (4096 QMC points).
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "equations/slr_replica.hpp"

using namespace saddle;
using namespace saddle::slr;
using namespace saddle::slr::replica;

template <int L>
static void BM_prox(benchmark::State& state) {
  const ProxAct act = state.range(0) == 0 ? ProxAct::Softmax : ProxAct::Linear;
  std::mt19937_64 g(1);
  std::normal_distribution<double> N;
  std::vector<ProxInput<L>> ins(1024);
  for (auto& in : ins) {
    for (int l = 0; l < L; ++l) {
      in.omega_chi(l) = 1.2 * N(g) + (l == 0 ? 1.2 : 0.0);
      in.omega_z(l) = N(g);
    }
    in.y = in.omega_z(0) + 0.5 * N(g);
    in.V_k = 3.0;
    in.V_v = 0.5;
  }
  ProxOptions opt;
  std::size_t i = 0;
  for (auto _ : state) {
    auto r = solve_prox<L>(act, ins[i++ % ins.size()], opt);
    benchmark::DoNotOptimize(r.objective);
  }
}
BENCHMARK_TEMPLATE(BM_prox, 2)->Arg(0)->Arg(1);
BENCHMARK_TEMPLATE(BM_prox, 3)->Arg(0)->Arg(1);

// One channel pass (4096 points); third argument 1: with the replicon (AT) Gram matrix, as in
// the once-per-point observables; 2: with the map's Jacobian, as in a Newton pass (baseline: the
// plain pass of an Anderson iteration, in the same run).
static void BM_channel(benchmark::State& state) {
  ReplicaSetting set;
  set.L = static_cast<int>(state.range(0));
  set.activation = state.range(1) == 0 ? Activation::Softmax : Activation::Linear;
  set.n_points = 4096;
  set.replicates = 2;
  const bool want_at = state.range(2) == 1, want_jac = state.range(2) == 2;
  const auto pts = make_replica_points(set);
  const Vec x = replica_informed_start(set);
  for (auto _ : state) {
    auto c = replica_channel(set, 2.0, x.data(), *pts, 0, want_at, want_jac);
    benchmark::DoNotOptimize(c.qhat_k);
  }
}
BENCHMARK(BM_channel)->Args({2, 0, 0})->Args({2, 1, 0})->Args({3, 0, 0})->Args({3, 1, 0})
    ->Args({2, 0, 1})->Args({3, 1, 1})->Args({2, 0, 2})->Args({3, 0, 2})
    ->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
