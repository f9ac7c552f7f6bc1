// The curve driver every iterated model goes through: R independent replicates (e.g. QMC random
// shifts) x starts (informed / uninformed, ...) x continuation along a swept parameter with warm
// starts; an accept rule (converged, or a stalled limit cycle below a threshold, with a slow
// damped retry); mean +- s.e. over replicates; refinement to a target s.e.; the preferred start by
// the model's free energy (or training loss) and coexistence of distinct solutions; a hook for the
// model's stability check (e.g. the replicon eigenvalue).
//
// The driver does not know which model it solves: a model is a CurveModel (like a user-defined
// problem that an algorithm consumes), which hands out FixedPointSystem objects per (parameter,
// replicate, refinement level) and answers the few model questions the driver asks. Results come
// back as generic CurvePoint objects (x then the model's values, as Estimates); each model turns
// them into its own struct with named fields.
#pragma once
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "integrators/estimate.hpp"
#include "solver/continuation.hpp"
#include "solver/fixed_point.hpp"

namespace saddle {

// One start of the curve: its initial state, the direction it walks the grid, and whether each
// point is warm-started from the last accepted point (false: from x0 at every point).
struct CurveStart {
  std::string label;
  Vec x0;
  Direction direction = Direction::Forward;
  bool warm = true;
  // > 0: an accepted point of this start that is a repelling fixed point of the map (map radius
  // > 1, e.g. an exactly symmetric solution m = 0 past a bifurcation, reached by warm starts from
  // the symmetric side) is solved once more, by the damped iteration, from x + escape v, v the
  // map's leading unstable direction (solver/map_radius.hpp); the new solution replaces it when it is accepted and less
  // repelling, and the continuation carries on from it. 0: points are kept as found.
  double escape = 0.0;
};

struct CurveOptions {
  SolverOptions solver;
  // A stalled replicate (limit cycle of a piecewise-smooth map) is accepted when its residual is
  // at most this; an accepted replicate is a valid warm start.
  double stall_accept = 1e-2;
  // A replicate that is not accepted is solved again from the same start with a damped iteration
  // of mix retry_mix (at most retry_iterations() iterations, stall window >= 100); the better of
  // the two is kept.
  bool retry = false;
  double retry_mix = 0.2;
  int retry_max_iter = 1500;
  // Refinement: an accepted point whose value CurveModel::refine_on() has s.e. > target_se
  // (0 = off) is solved again at the next refinement level (every replicate warm-started from its
  // own solution), up to max_refine levels. Points the stability hook calls Unstable are refined
  // only with refine_unstable.
  double target_se = 0.0;
  int max_refine = 2;
  bool refine_unstable = false;
  // Report the spectral radius of dF/dx at every accepted replicate (CurvePoint::map_radius;
  // finite differences where the system has no map_jacobian). Costs 2 dim map evaluations per
  // point without a Jacobian.
  bool map_radius = false;
};

// Iterations of the damped retry: retry_max_iter, and at most kRetryPerMaxIter x the solver's
// max_iter, so that --max-iter bounds the retry too (the defaults, 300 and 1500, are unchanged).
constexpr int kRetryPerMaxIter = 5;
inline int retry_iterations(int retry_max_iter, int max_iter) {
  const long long cap = static_cast<long long>(kRetryPerMaxIter) * max_iter;
  return static_cast<int>(cap < retry_max_iter ? cap : retry_max_iter);
}
inline int retry_iterations(const CurveOptions& opt) {
  return retry_iterations(opt.retry_max_iter, opt.solver.max_iter);
}

enum class Stability { Unknown, Stable, Marginal, Unstable };
std::string to_string(Stability s);  // "unknown", "stable", "marginal", "unstable"

// Bookkeeping of one curve point over its replicates.
struct CurveStatus {
  int n_converged = 0;     // replicates that met the tolerance
  int n_stalled = 0;       // replicates that ended in a limit cycle
  int n_failed = 0;        // replicates neither converged nor stalled within stall_accept
  int iterations = 0;      // max over replicates
  double residual = 0;     // max over replicates of |F(x) - x|_inf
  bool converged = false;  // every replicate accepted
  int level = 0;           // refinement level behind the point
  bool preferred = false;  // lowest free energy among the accepted starts at this parameter
  bool coexist = false;    // another accepted start reached a distinct solution here
  Stability stability = Stability::Unknown;
  // Replicates whose result came from each iteration (indexed by Method: damped, anderson,
  // newton), e.g. Newton steps, or the Anderson fallback where the Newton steps did not converge.
  int n_by_path[3] = {0, 0, 0};
  int n_out_of_domain = 0;  // replicates the model could not evaluate (OutOfDomain)
};

// "newton", or e.g. "newton:6+anderson:2" when replicates ended on different paths; followed by
// "+out_of_domain:N" when N replicates left the model's domain (the point is then not converged).
std::string path_text(const CurveStatus& s);

struct CurvePoint : CurveStatus {
  double param = 0;
  int start = 0;                 // index into the starts
  std::vector<Estimate> x;       // the unknowns, in the order of FixedPointSystem::names()
  std::vector<Estimate> values;  // the model's values (CurveModel::values)
  // Spectral radius of the map's Jacobian at the solution, over the replicates (NaN where not
  // computed: CurveOptions::map_radius off and no escape, or a replicate not accepted). Above 1:
  // the fixed point repels the plain iteration (a saddle of the model; see repelling()).
  Estimate map_radius{std::numeric_limits<double>::quiet_NaN(), 0.0, {}};
  bool repelling() const { return map_radius.mean > 1.0; }
  // Unknowns then values: the j-th entry of x ++ values.
  const Estimate& entry(std::size_t j) const { return j < x.size() ? x[j] : values[j - x.size()]; }
};

class CurveModel {
 public:
  virtual ~CurveModel() = default;
  // Independent replicates (QMC shifts); 1 for a deterministic model.
  virtual int replicates() const { return 1; }
  // Get ready for systems at refinement level `level` (level 0 is the base setting; each level
  // e.g. 4x the QMC points). Called serially before any system() of that level. False: the level
  // cannot be made (refinement stops).
  virtual bool prepare_level(int level) { return level == 0; }
  virtual std::unique_ptr<FixedPointSystem> system(double param, int replicate, int level) const = 0;
  // The values reported beside x for one replicate at its (projected) solution x.
  virtual Vec values(const FixedPointSystem& sys, const Vec& x) const { return sys.observables(x); }
  // Index (into CurvePoint::entry) of the quantity whose s.e. drives refinement; -1: none.
  virtual int refine_on() const { return -1; }
  // Stability of an aggregated point (e.g. replicon eigenvalue +- s.e.).
  virtual Stability stability(const CurvePoint&) const { return Stability::Unknown; }
  // Free energy or training loss of an aggregated point (lower is preferred); NaN: unknown.
  virtual double free_energy(const CurvePoint&) const {
    return std::numeric_limits<double>::quiet_NaN();
  }
  // Whether two accepted points at the same parameter (different starts) are distinct solutions.
  virtual bool distinct(const CurvePoint&, const CurvePoint&) const { return false; }
};

// Every start x every parameter (in the order given; Backward walks from the end), aggregated
// over the model's replicates. Output: start-major, params in the order given; empty when an
// interrupt was requested (solver/interrupt.hpp) during the run. Parallel over
// (start, replicate) as tasks of the one thread team (solver/parallel.hpp: called from a grid
// runner's chain, the solves share the runner's threads); the result does not depend on the
// number of threads. An exception of the model (system(), values(), ...) is rethrown here.
std::vector<CurvePoint> run_curve(CurveModel& model, const std::vector<double>& params,
                                  const std::vector<CurveStart>& starts, const CurveOptions& opt);

// The accept rule: converged, or stalled with residual <= stall_accept.
bool accepted(const SolveSummary& s, const CurveOptions& opt);

// One solve from `start` with the retry of CurveOptions (see there).
SolveResult solve_with_retry(const FixedPointSystem& sys, const Vec& start, const CurveOptions& opt);

}  // namespace saddle
