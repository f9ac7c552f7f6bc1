// Spectral radius of the map's Jacobian at a fixed point (see map_radius.hpp).
#include "solver/map_radius.hpp"

#include <Eigen/Eigenvalues>

#include <algorithm>
#include <cmath>
#include <limits>

namespace saddle {

Eigen::MatrixXd map_jacobian_at(const FixedPointSystem& sys, const Vec& x, bool* finite_differences) {
  const int n = sys.dim();
  Vec fx;
  Eigen::MatrixXd J;
  if (sys.map_jacobian(x, fx, J) && J.rows() == n && J.cols() == n) {
    if (finite_differences) *finite_differences = false;
    return J;
  }
  if (finite_differences) *finite_differences = true;
  J.resize(n, n);
  for (int j = 0; j < n; ++j) {
    const double h = 1e-6 * std::max(1.0, std::fabs(x[j]));
    Vec xp = x, xm = x;
    xp[j] += h;
    xm[j] -= h;
    J.col(j) = (sys.map(xp) - sys.map(xm)) / (xp[j] - xm[j]);
  }
  return J;
}

MapSpectrum map_spectrum(const FixedPointSystem& sys, const Vec& x) {
  MapSpectrum s;
  const int n = sys.dim();
  s.direction = Vec::Zero(n);
  if (n == 0) return s;
  const Eigen::MatrixXd J = map_jacobian_at(sys, x, &s.finite_differences);
  if (!J.allFinite()) {
    s.radius = std::numeric_limits<double>::quiet_NaN();
    return s;
  }
  Eigen::EigenSolver<Eigen::MatrixXd> es(J, true);
  if (es.info() != Eigen::Success) {
    s.radius = std::numeric_limits<double>::quiet_NaN();
    return s;
  }
  int k = 0;
  for (int i = 1; i < n; ++i)
    if (std::abs(es.eigenvalues()[i]) > std::abs(es.eigenvalues()[k])) k = i;
  s.radius = std::abs(es.eigenvalues()[k]);
  Vec v = es.eigenvectors().col(k).real();
  if (v.cwiseAbs().maxCoeff() == 0.0) v = es.eigenvectors().col(k).imag();
  Eigen::Index at = 0;
  const double m = v.cwiseAbs().maxCoeff(&at);
  if (m > 0.0) s.direction = v / (v[at] > 0 ? m : -m);
  return s;
}

}  // namespace saddle
