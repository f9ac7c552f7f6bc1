// Continuation along one parameter with warm starts, in either direction, and branch tracking:
// several branches (e.g. informed / uninformed starts) traced over the same grid, with the
// preferred one at each point chosen by free energy.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "solver/fixed_point.hpp"

namespace saddle {

using SystemFactory = std::function<std::unique_ptr<FixedPointSystem>(double)>;

enum class Direction { Forward, Backward };

// Solve at every value of `params`, warm-starting each point from the last converged solution
// (x0 for the first point). Backward walks the grid from its end. The results are returned in
// the order of `params` whatever the direction.
std::vector<SolveResult> continuation(const SystemFactory& make, const std::vector<double>& params,
                                      const Vec& x0, const SolverOptions& opt,
                                      Direction dir = Direction::Forward);

struct Branch {
  std::string label;
  std::vector<SolveResult> points;
};

// Index of the lowest free energy among the candidates with ok[b] (ties and NaN free energies:
// the first acceptable one, which a later candidate with a finite lower value replaces); -1 if
// none is acceptable. The one rule of branch preference, used by preferred_branch and the curve
// driver.
int lowest_free_energy(const std::vector<double>& f, const std::vector<bool>& ok);

// For grid point i: index of the converged branch with the lowest free energy (ties and
// unknown free energies: the first converged); -1 if none converged.
int preferred_branch(const std::vector<Branch>& branches, std::size_t i,
                     const FixedPointSystem& sys_at_i);

// True when two converged branches differ at point i by more than `tol` in the infinity norm.
bool branches_differ(const Branch& a, const Branch& b, std::size_t i, double tol);

}  // namespace saddle
