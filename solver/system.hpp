// The equation-system concept every model implements. The solver sees only this interface: a
// dimension, parameter names, an update map x -> F(x), bounds (projection onto the admissible
// set), optional observables and an optional free energy for branch choice. The residual whose
// infinity norm judges convergence is F(x) - x, formed by the solver from the F(x) it evaluated,
// so a model needs no cache of its last evaluation.
#pragma once
#include <Eigen/Dense>
#include <limits>
#include <string>
#include <vector>

namespace saddle {

using Vec = Eigen::VectorXd;

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
  // Derived quantities at a solution (e.g. test error), reported beside x.
  virtual std::vector<std::string> observable_names() const { return {}; }
  virtual Vec observables(const Vec& x) const { return Vec(); }
  // Free energy (or any potential whose lower value marks the preferred branch); NaN if unknown.
  virtual double free_energy(const Vec& x) const {
    return std::numeric_limits<double>::quiet_NaN();
  }
};

}  // namespace saddle
