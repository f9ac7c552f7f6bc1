// Randomly shifted Sobol QMC (GSL gsl_qrng_sobol) with inverse-cdf normal mapping.
#include "integrators/qmc.hpp"

#include <gsl/gsl_qrng.h>

#include <cmath>
#include <random>
#include <stdexcept>

#include "integrators/special.hpp"

namespace saddle {

SobolGaussian::SobolGaussian(int d, int n, int replicates, std::uint64_t seed)
    : d_(d), n_(n), R_(replicates) {
  if (d < 1 || d > 40) throw std::invalid_argument("Sobol dimension must be in 1..40");
  if (n < 1 || replicates < 1) throw std::invalid_argument("QMC needs n >= 1 and R >= 1");
  std::vector<double> base(static_cast<std::size_t>(n) * d);
  gsl_qrng* q = gsl_qrng_alloc(gsl_qrng_sobol, d);
  // Skip the first point (the origin), which maps to -inf before shifting is irrelevant but
  // carries no information in an unshifted set.
  std::vector<double> u(d);
  gsl_qrng_get(q, u.data());
  for (int i = 0; i < n; ++i) gsl_qrng_get(q, base.data() + static_cast<std::size_t>(i) * d);
  gsl_qrng_free(q);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unif(0.0, 1.0);
  z_.resize(static_cast<std::size_t>(R_) * n * d);
  for (int r = 0; r < R_; ++r) {
    std::vector<double> shift(d);
    for (int k = 0; k < d; ++k) shift[k] = unif(rng);
    for (int i = 0; i < n; ++i)
      for (int k = 0; k < d; ++k) {
        double v = base[static_cast<std::size_t>(i) * d + k] + shift[k];
        v -= std::floor(v);
        v = std::min(std::max(v, 1e-12), 1.0 - 1e-12);
        z_[(static_cast<std::size_t>(r) * n + i) * d + k] = norm_quantile(v);
      }
  }
}

Estimate SobolGaussian::expect(const std::function<double(const double*)>& f) const {
  std::vector<double> means(R_);
  for (int r = 0; r < R_; ++r) {
    double s = 0.0;
    for (int i = 0; i < n_; ++i) s += f(point(r, i));
    means[r] = s / n_;
  }
  return summarize(means);
}

}  // namespace saddle
