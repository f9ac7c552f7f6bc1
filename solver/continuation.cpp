// Continuation with warm starts along one parameter, and branch comparison by free energy.
#include "solver/continuation.hpp"

#include <cmath>

namespace saddle {

std::vector<SolveResult> continuation(const SystemFactory& make, const std::vector<double>& params,
                                      const Vec& x0, const SolverOptions& opt, Direction dir) {
  const std::size_t n = params.size();
  std::vector<SolveResult> out(n);
  Vec start = x0;
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t i = dir == Direction::Forward ? k : n - 1 - k;
    std::unique_ptr<FixedPointSystem> sys = make(params[i]);
    out[i] = solve(*sys, start, opt);
    if (out[i].summary.converged) start = out[i].x;
  }
  return out;
}

int lowest_free_energy(const std::vector<double>& f, const std::vector<bool>& ok) {
  int best = -1;
  double best_f = std::numeric_limits<double>::infinity();
  for (std::size_t b = 0; b < f.size(); ++b) {
    if (!ok[b]) continue;
    if (best < 0) {
      best = static_cast<int>(b);
      best_f = std::isnan(f[b]) ? std::numeric_limits<double>::infinity() : f[b];
    } else if (!std::isnan(f[b]) && f[b] < best_f) {
      best = static_cast<int>(b);
      best_f = f[b];
    }
  }
  return best;
}

int preferred_branch(const std::vector<Branch>& branches, std::size_t i,
                     const FixedPointSystem& sys_at_i) {
  std::vector<double> f(branches.size(), std::numeric_limits<double>::quiet_NaN());
  std::vector<bool> ok(branches.size(), false);
  for (std::size_t b = 0; b < branches.size(); ++b) {
    if (i >= branches[b].points.size() || !branches[b].points[i].summary.converged) continue;
    ok[b] = true;
    f[b] = sys_at_i.free_energy(branches[b].points[i].x);
  }
  return lowest_free_energy(f, ok);
}

bool branches_differ(const Branch& a, const Branch& b, std::size_t i, double tol) {
  if (i >= a.points.size() || i >= b.points.size()) return false;
  const SolveResult &ra = a.points[i], &rb = b.points[i];
  if (!ra.summary.converged || !rb.summary.converged) return false;
  return (ra.x - rb.x).cwiseAbs().maxCoeff() > tol;
}

}  // namespace saddle
