// The equation-system concept every model implements. The solver sees only this interface: a
// dimension, parameter names, an update map x -> F(x), bounds (projection onto the admissible
// set), optional observables and an optional free energy for branch choice. The residual whose
// infinity norm judges convergence is F(x) - x, formed by the solver from the F(x) it evaluated,
// so a model needs no cache of its last evaluation.
#pragma once
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace saddle {

using Vec = Eigen::VectorXd;

// Thrown by a system's map or observables at a state where the model cannot evaluate them: outside
// the model's domain (e.g. overlaps that grow without bound near an interpolation threshold). The
// curve driver marks that replicate not converged (Termination::OutOfDomain) and goes on with the
// curve; any other exception stops it. Plain bad input is std::invalid_argument, thrown before any
// iteration.
struct OutOfDomain : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

class FixedPointSystem {
 public:
  virtual ~FixedPointSystem() = default;
  virtual int dim() const = 0;
  // Names of the unknowns, in the order of x (e.g. "m", "q", "V").
  virtual std::vector<std::string> names() const = 0;
  // The update map F. A fixed point x = F(x) is a solution.
  virtual Vec map(const Vec& x) const = 0;
  // F(x) and its Jacobian dF/dx, from one evaluation, for Newton steps (Method::Newton). False
  // (the default): no Jacobian available, the solver uses its fallback iteration.
  virtual bool map_jacobian(const Vec& x, Vec& fx, Eigen::MatrixXd& J) const { return false; }
  // Bring x into the admissible set (e.g. V > 0, q >= m^2). Default: nothing to enforce.
  virtual void project(Vec& x) const {}
  // The size of the residual that judges convergence in every method, from x and F(x).
  // Default |F(x) - x|_inf (infinite when F(x) - x is not finite); a model may scale it (e.g.
  // relative to x).
  virtual double residual_norm(const Vec& x, const Vec& fx) const {
    double r = 0.0;
    for (Eigen::Index i = 0; i < x.size(); ++i) {
      const double g = fx[i] - x[i];
      if (!std::isfinite(g)) return std::numeric_limits<double>::infinity();
      r = std::max(r, std::fabs(g));
    }
    return r;
  }
  // Optional, for Newton steps (Method::Newton) in the model's own chart: coordinates
  // z = to_chart(x) in which steps are taken (e.g. logarithms that keep x admissible: any finite
  // z maps to an admissible x = from_chart(z)), a residual R(x) whose zeros are the fixed points
  // (e.g. F(x) - x relative to x) with its Jacobian dR/dz, and `norm` = residual_norm(x, F(x)),
  // all from one evaluation. Newton then steps in z (dz = -(dR/dz)^-1 R, LU with partial
  // pivoting), backtracks on `norm` and skips trial points that are not finite. False (the
  // default): Newton on F(x) - x in x with map_jacobian.
  virtual bool chart_residual(const Vec& x, Vec& R, Eigen::MatrixXd& dR_dz, double& norm) const {
    return false;
  }
  // z = to_chart(x) and x = from_chart(z), into the output (whose storage is reused).
  virtual void to_chart(const Vec& x, Vec& z) const { z = x; }
  virtual void from_chart(const Vec& z, Vec& x) const { x = z; }
  // Derived quantities at a solution (e.g. test error), reported beside x.
  virtual std::vector<std::string> observable_names() const { return {}; }
  virtual Vec observables(const Vec& x) const { return Vec(); }
  // Free energy (or any potential whose lower value marks the preferred branch); NaN if unknown.
  virtual double free_energy(const Vec& x) const {
    return std::numeric_limits<double>::quiet_NaN();
  }
};

// A model's named values V (a struct with visit_observables(f) calling f(name, value&) over its
// observables, in order): their names, and their values as the Vec of observables().
template <class V>
std::vector<std::string> observable_names_of() {
  std::vector<std::string> n;
  V().visit_observables([&](const char* name, const double&) { n.push_back(name); });
  return n;
}
template <class V>
Vec observables_of(V v) {
  std::vector<double> o;
  v.visit_observables([&](const char*, double d) { o.push_back(d); });
  return Eigen::Map<const Vec>(o.data(), static_cast<Eigen::Index>(o.size()));
}

}  // namespace saddle
