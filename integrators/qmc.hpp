// Randomly shifted quasi-Monte Carlo for Gaussian expectations: a Sobol point set (GSL, d <= 40)
// mapped to N(0, I_d) by the inverse normal cdf, replicated with R independent uniform shifts
// (Cranley-Patterson rotations). The R replicate means give an estimate and a standard error.
#pragma once
#include <cstdint>
#include <functional>
#include <vector>

#include "integrators/estimate.hpp"

namespace saddle {

class SobolGaussian {
 public:
  // n points of N(0, I_d) per replicate, R replicates; the shifts come from `seed`.
  // Points are clipped to u in [1e-12, 1 - 1e-12] before the normal quantile.
  SobolGaussian(int d, int n, int replicates, std::uint64_t seed);
  int dim() const { return d_; }
  int points() const { return n_; }
  int replicates() const { return R_; }
  // Normal variates of point i in replicate r (pointer to d doubles), precomputed.
  const double* point(int r, int i) const {
    return z_.data() + (static_cast<std::size_t>(r) * n_ + i) * d_;
  }
  // Plain estimate over all replicates: mean and s.e. of the R replicate averages of f.
  Estimate expect(const std::function<double(const double*)>& f) const;

 private:
  int d_, n_, R_;
  std::vector<double> z_;
};

}  // namespace saddle
