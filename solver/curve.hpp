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
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "integrators/estimate.hpp"
#include "solver/fixed_point.hpp"

namespace saddle {

// The way a start walks the swept grid: from its first value up, or from its last down.
enum class Direction { Forward, Backward };

// Index of the lowest free energy among the candidates with ok[b] (ties and NaN free energies:
// the first acceptable one, which a later candidate with a finite lower value replaces); -1 if
// none is acceptable. The curve driver's rule of the preferred start.
int lowest_free_energy(const std::vector<double>& f, const std::vector<bool>& ok);

// One start of the curve: its initial state, the direction it walks the grid, and whether each
// point is warm-started from the last accepted point (false: from x0 at every point).
struct CurveStart {
  std::string label;
  Vec x0;
  Direction direction = Direction::Forward;
  bool warm = true;
  // > 0: a usable point of this start that is a repelling fixed point of the map (map radius
  // > 1, e.g. an exactly symmetric solution m = 0 past a bifurcation, reached by warm starts from
  // the symmetric side) is solved once more, by the damped iteration, from x + escape v, v the
  // map's leading unstable direction (solver/map_radius.hpp); the new solution replaces it when it is usable and less
  // repelling, and the continuation carries on from it. 0: points are kept as found.
  double escape = 0.0;
};

// When a point is converged (docs/adding_a_model.md "Convergence"): every replicate met the
// tolerance (|F(x) - x|_inf <= solver.tol), or, for a replicate that did not, every component of
// its residual F_r(x_r) - x_r is at most noise_factor times the map's own QMC noise in that
// component, measured at the point as the standard deviation over the R replicates of F_r(xbar)
// (xbar = the mean of the replicates' states; a component without noise must meet tol). Such a
// replicate adds at most noise_factor of its own sampling deviation to the point; the point's
// reason is then "noise". A stalled iteration (limit cycle) is never converged by itself.
struct CurveOptions {
  SolverOptions solver;
  // Not a convergence rule: a stalled replicate (limit cycle of a piecewise-smooth map) whose
  // residual is at most this is still used as the warm start of the next point and is not
  // retried; it counts as converged only by the rule above.
  double warm_accept = 1e-2;
  // The noise rule above (0: off, converged means the tolerance only). Needs >= 2 replicates.
  double noise_factor = 0.1;
  // A replicate that is neither converged nor a usable stall (warm_accept) is solved again from
  // the same start with a damped iteration of mix retry_mix (at most retry_iterations()
  // iterations, stall window >= 100); the better of the two is kept.
  bool retry = false;
  double retry_mix = 0.2;
  int retry_max_iter = 1500;
  // Refinement: a converged point whose value CurveModel::refine_on() has s.e. > target_se
  // (0 = off) is solved again at the next refinement level (every replicate warm-started from its
  // own solution), up to max_refine levels. Points the stability hook calls Unstable are refined
  // only with refine_unstable.
  double target_se = 0.0;
  int max_refine = 2;
  bool refine_unstable = false;
  // The start of the next point of a warm continuation: the secant predictor extrapolates the
  // last two converged points of the chain linearly in the parameter,
  //   x_start = x_k + (p_next - p_k) / (p_k - p_{k-1}) (x_k - x_{k-1})  (then projected),
  // when both met the tolerance (a stalled or failed point is not extrapolated); otherwise, and
  // with secant_predictor = false (the default), the start is the last usable point itself.
  // Opt-in: fewer Newton passes where the branch is smooth (softmax L = 3 README curve 11% less
  // CPU), but a different start changes the limit cycles of the RS-unstable points that follow,
  // and on the linear L = 2 curve that led a fallback into states where one pre-integrated pass
  // costs over 1 s (42 s against 17 s for the curve; docs/slr_replica.md).
  bool secant_predictor = false;
  // Pilot start: the first point of each warm chain is solved for replicate 0 alone first, and
  // the other replicates start from its solution where it met the tolerance (their fixed points
  // differ from it by the QMC noise only), instead of each from the chain's x0. A cold start far
  // from the fixed point costs each replicate tens to hundreds of passes of stalls, retries and
  // fallbacks (linear attention at alpha = 8, informed start: 326 passes); from the pilot's
  // solution Newton needs a few. Replicate 0's result is the pilot itself (unchanged).
  bool pilot = true;
  // Report the spectral radius of dF/dx at every usable replicate (CurvePoint::map_radius;
  // finite differences where the system has no map_jacobian). Costs 2 dim map evaluations per
  // point without a Jacobian.
  bool map_radius = false;

  // True when every field (and solver's) is in its domain; else false with *error naming the
  // first that is not, as "noise_factor: must be in [0, 1]" (SolverOptions::is_valid).
  bool is_valid(std::string* error) const;
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
  int n_noise = 0;         // replicates converged within the map's noise (CurveOptions)
  int n_stalled = 0;       // replicates that ended in a limit cycle
  int n_failed = 0;        // replicates not converged (R - n_converged - n_noise)
  int iterations = 0;      // max over replicates
  double residual = 0;     // max over replicates of |F(x) - x|_inf
  double amplitude = 0;    // largest limit-cycle amplitude over the stalled replicates (0: none)
  bool converged = false;  // every replicate converged (tolerance or noise)
  // Why the point ended: Tolerance when every replicate met it; otherwise the termination of a
  // replicate that is not converged (the most severe one: out of domain, non-finite, interrupted,
  // stalled, max_iter, newton_failed), or Tolerance with n_noise > 0 (reason_text: "noise").
  Termination reason = Termination::Tolerance;
  int level = 0;           // refinement level behind the point
  bool preferred = false;  // lowest free energy among the converged starts at this parameter
  bool coexist = false;    // another converged start reached a distinct solution here
  Stability stability = Stability::Unknown;
  // Replicates whose result came from each iteration (indexed by Method: damped, anderson,
  // newton), e.g. Newton steps, or the Anderson fallback where the Newton steps did not converge.
  int n_by_path[3] = {0, 0, 0};
  int n_out_of_domain = 0;  // replicates the model could not evaluate (OutOfDomain)
  int n_fallback = 0;       // replicates solved by the model's fallback system
  int n_redrawn = 0;        // replicates solved by a redrawn system (CurveModel::redraw_system)
};

// The point's reason as a word: "tolerance", "noise" (converged, some replicate within the map's
// noise) or the reason a replicate did not converge ("stalled", "max_iter", ...).
std::string reason_text(const CurveStatus& s);

// "newton", or e.g. "newton:6+anderson:2" when replicates ended on different paths; then
// "+redraw:N" when N replicates came from a redrawn system, "+fallback:N" when N replicates came
// from the model's fallback system; followed by
// "+out_of_domain:N" when N replicates left the model's domain (the point is then not converged).
std::string path_text(const CurveStatus& s);

struct CurvePoint : CurveStatus {
  double param = 0;
  int start = 0;                 // index into the starts
  std::vector<Estimate> x;       // the unknowns, in the order of FixedPointSystem::names()
  std::vector<Estimate> values;  // the model's values (CurveModel::values)
  // Spectral radius of the map's Jacobian at the solution, over the replicates (NaN where not
  // computed: CurveOptions::map_radius off and no escape, or a replicate not usable). Above 1:
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
  // Optional: another system for the same replicate, e.g. a smoother integration of the same
  // expectations, that solve_with_retry solves from the replicate's best iterate when the first
  // did not converge; it replaces the first only when it converged (counted in
  // CurveStatus::n_fallback). nullptr (the default): none.
  virtual std::unique_ptr<FixedPointSystem> fallback_system(double, int, int) const { return nullptr; }
  // Optional: the replicate's system with a fresh draw of its randomness (attempt = 1, 2, ...:
  // e.g. a new random shift of its QMC points), that solve_with_retry solves from the
  // replicate's best iterate when the first did not converge and stalled near a fixed point,
  // before the fallback: a sampled map whose jump straddles the fixed point has none, while a
  // new draw puts its jumps elsewhere. It replaces the first only when it converged (counted in
  // CurveStatus::n_redrawn). nullptr (the default): none.
  virtual std::unique_ptr<FixedPointSystem> redraw_system(double, int, int, int) const { return nullptr; }
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
  // Whether two converged points at the same parameter (different starts) are distinct solutions.
  virtual bool distinct(const CurvePoint&, const CurvePoint&) const { return false; }
  // Optional: columns of text the model writes per point beside its values (e.g. the reason
  // behind a stability verdict, the QMC points behind a refined point): their names, and the
  // cells of one aggregated point in that order.
  virtual std::vector<std::string> note_names() const { return {}; }
  virtual std::vector<std::string> notes(const CurvePoint&) const { return {}; }
};

// Every start x every parameter (in the order given; Backward walks from the end), aggregated
// over the model's replicates. Output: start-major, params in the order given; empty when an
// interrupt was requested (solver/interrupt.hpp) during the run. Parallel over
// (start, replicate) as tasks of the one thread team (solver/parallel.hpp: called from a grid
// runner's chain, the solves share the runner's threads); the result does not depend on the
// number of threads. An exception of the model (system(), values(), ...) is rethrown here.
std::vector<CurvePoint> run_curve(CurveModel& model, const std::vector<double>& params,
                                  const std::vector<CurveStart>& starts, const CurveOptions& opt);

// A curve point as a model's named result P: a CurveStatus with visit(f) calling
// f(name, Estimate&) over its values in the order of CurvePoint::entry (the unknowns, then the
// observables). Fills the status and every named value; the model's own fields (the parameter,
// the start's label, ...) are its caller's.
template <class P>
P named_point(const CurvePoint& c) {
  P p;
  static_cast<CurveStatus&>(p) = c;
  std::size_t j = 0;
  p.visit([&](const char*, Estimate& e) { e = c.entry(j++); });
  return p;
}

// Whether a replicate's result can carry the continuation (warm start of the next point) and
// need not be retried: converged, or stalled with residual <= warm_accept. Not a convergence rule.
bool usable(const SolveSummary& s, const CurveOptions& opt);

// The fallback is tried only where the first solve ended near a fixed point: residual <=
// kFallbackGate * (1 + |x|_inf) at its best iterate x. With Method::Newton it runs the Newton
// steps alone (solver.newton_steps passes: on the corner grid of docs/slr_replica.md the fallbacks
// that converged took 4-8 passes, and those that failed 25-64, at 0.1-0.5 s a pass, 88% of the
// fallbacks' time); with the other methods at most kFallbackMaxIter iterations.
inline constexpr double kFallbackGate = 0.1;
inline constexpr int kFallbackMaxIter = 200;
// The redraw is tried where the first solve stalled with residual <= kRedrawGate (a jump of a
// sampled map straddling a fixed point leaves a residual of order 1e-3), at most
// kRedrawAttempts times.
inline constexpr double kRedrawGate = 0.02;
inline constexpr int kRedrawAttempts = 2;

// One solve from `start`: then, if it did not converge, the fallback system (if any) from its best
// iterate (see kFallbackGate), and the damped retry of CurveOptions (see there) when the result is
// still not usable. The retry starts from *retry_start when given (the continuation's last usable
// point where `start` is the secant predictor's extrapolation), else from `start`.
using RedrawFn = std::function<std::unique_ptr<FixedPointSystem>(int attempt)>;
SolveResult solve_with_retry(const FixedPointSystem& sys, const Vec& start, const CurveOptions& opt,
                             const FixedPointSystem* fallback = nullptr, const Vec* retry_start = nullptr,
                             const RedrawFn& redraw = nullptr);

}  // namespace saddle
