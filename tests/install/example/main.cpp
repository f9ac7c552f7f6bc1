// Uses the installed saddle libraries: the population risk of the best linear attention in
// spiked SLR, optimised numerically over (k, v), against its closed form L(L-1)/(L^2 + nu(L-1))
// (docs/equations/slr_population.md §3.6, (S10)). Prints both and exits 1 if they differ.
#include <cmath>
#include <cstdio>

#include "equations/slr_population.hpp"
#include "saddle_version.hpp"

int main() {
  using namespace saddle::slr;
  PopulationSetting set;
  set.task = Task::Spiked;
  set.lengths = {3};
  set.nu = 2.0;
  set.activation = Activation::Linear;
  const PopulationOptimum opt = optimise_population(set, OptimiseOptions{});
  const double L = 3.0, nu = 2.0;
  const double closed = L * (L - 1) / (L * L + nu * (L - 1));
  std::printf("saddle %s: linear attention risk %.10f, closed form %.10f\n", SADDLE_VERSION,
              opt.risk, closed);
  return std::fabs(opt.risk - closed) < 1e-8 ? 0 : 1;
}
