// The one {mean, s.e.} type of the project: a value estimated from independent replicates (QMC
// random shifts, seeds) with the standard error of their mean.
#pragma once
#include <vector>

namespace saddle {

struct Estimate {
  double mean = 0.0;
  double se = 0.0;  // standard error of the mean over replicates
  std::vector<double> replicates;
};

// Mean and standard error of a set of replicate values (se = sd / sqrt(R); 0 if R < 2).
Estimate summarize(const std::vector<double>& values);

}  // namespace saddle
