// Mean and standard error over replicates.
#include "integrators/estimate.hpp"

#include <cmath>

namespace saddle {

Estimate summarize(const std::vector<double>& values) {
  Estimate e;
  e.replicates = values;
  const std::size_t R = values.size();
  if (R == 0) return e;
  double s = 0.0;
  for (double v : values) s += v;
  e.mean = s / R;
  if (R > 1) {
    double ss = 0.0;
    for (double v : values) ss += (v - e.mean) * (v - e.mean);
    e.se = std::sqrt(ss / (R - 1) / R);
  }
  return e;
}

}  // namespace saddle
