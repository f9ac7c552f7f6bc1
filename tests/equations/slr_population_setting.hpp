// Shared by the tests of the SLR population files: a PopulationSetting from its fields.
#pragma once
#include <limits>
#include <utility>
#include <vector>

#include "equations/slr_population.hpp"

namespace saddle {
namespace slr {
namespace testing {

const double kInfty = std::numeric_limits<double>::infinity();

inline PopulationSetting setting(Task t, std::vector<int> Ls, double nu, Activation a, double b = 0.0) {
  PopulationSetting s;
  s.task = t;
  s.lengths = std::move(Ls);
  s.nu = nu;
  s.activation = a;
  s.erf_b = b;
  return s;
}

}  // namespace testing
}  // namespace slr
}  // namespace saddle
