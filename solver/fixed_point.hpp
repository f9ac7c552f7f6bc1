// Fixed-point solvers (damped iteration, Anderson acceleration with a safe fallback) and a Newton
// polish (GSL hybrids on the residual). Every solve returns a SolveSummary; nothing here prints.
#pragma once
#include <iosfwd>
#include <string>

#include "solver/system.hpp"

namespace saddle {

// Newton: Newton steps on F(x) - x with the Jacobian the system returns with F
// (FixedPointSystem::map_jacobian), or in the system's own chart (chart_residual), backtracking
// on the residual; a system without a Jacobian, a singular or non-finite step, or no convergence
// within newton_steps passes continues with the fallback iteration (newton_fallback: Anderson or
// damped) from the best iterate.
enum class Method { Damped, Anderson, Newton };

// Option struct of every solve; the CLI maps --method/--mix/--tol/... onto it 1:1.
struct SolverOptions {
  Method method = Method::Anderson;
  // Weight of the new iterate: x <- (1 - mix) x + mix F(x). mix = 1 is the plain iteration;
  // "damping 1/2" in the spec means mix = 0.5.
  double mix = 0.5;
  double tol = 1e-10;        // on |residual(x)|_inf
  int max_iter = 2000;       // fixed-point iterations (Newton in a chart: its steps count too)
  int anderson_depth = 5;    // history length of Anderson acceleration
  bool newton_polish = true; // try Newton (GSL hybrids) when the iteration did not reach tol
  int newton_max_iter = 100;
  int newton_steps = 8;  // Method::Newton: map-with-Jacobian passes before the fallback
  int newton_halvings = 3;  // Method::Newton: backtracking trial steps 1, 1/2, ..., 2^-newton_halvings
  Method newton_fallback = Method::Anderson;  // Method::Newton: the iteration after it (not Newton)
  bool newton_only = false;  // Method::Newton: no iteration after it (the caller decides what follows)
  // If > 0: stop when the residual has not beaten its running minimum for this many iterations
  // (limit cycle of a piecewise-smooth map); report the mean of the last `stall_window` iterates,
  // flag the solve as stalled (never converged) and report the cycle's amplitude.
  int stall_window = 0;

  // True when every field is in its domain; else false, with *error (when given) naming the first
  // field that is not, as "max_iter: must be in 1..1e6" (Ceres' Options::IsValid). The command
  // line names its flags after the fields (--max-iter), so the message reads as the flag's.
  bool is_valid(std::string* error) const;
};

std::string to_string(Method m);
// Parses "damped" or "anderson"; throws std::invalid_argument otherwise.
Method parse_method(const std::string& s);

// Why a solve ended. Written as text only where a table or a message needs it (to_string).
enum class Termination {
  Tolerance,     // the residual met tol
  Newton,        // the Newton polish met tol
  NewtonFailed,  // the Newton polish alone did not meet tol
  MaxIter,       // iteration budget spent
  Stalled,       // limit cycle: no new best residual within stall_window iterations
  NonFinite,     // the map returned a non-finite value
  Interrupted,   // stopped by request_interrupt() (solver/interrupt.hpp)
  OutOfDomain,   // the model could not evaluate the map or its values there (solver/system.hpp)
};
std::string to_string(Termination t);  // "tolerance", "newton", "newton_failed", "max_iter", ...
std::ostream& operator<<(std::ostream& os, Termination t);

struct SolveSummary {
  bool converged = false;
  bool stalled = false;
  Termination reason = Termination::MaxIter;
  int iterations = 0;  // fixed-point iterations + Newton iterations (map evaluations)
  // Updates of the iterate attempted: Newton steps (one linear solve each, however many trial
  // points its line search takes) and fixed-point updates (the evaluation that finds the
  // tolerance met is not one).
  int steps = 0;
  Method path = Method::Anderson;  // the iteration that produced the result
  double residual = std::numeric_limits<double>::infinity();  // |F(x) - x|_inf at the result
  // Stalled solves: the amplitude of the limit cycle, max over the unknowns of (largest -
  // smallest value) over the last stall_window iterates; 0 otherwise.
  double amplitude = 0.0;
  // The result came from the model's fallback system (CurveModel::fallback_system).
  bool fallback = false;
  // The result came from a redrawn system of the replicate (CurveModel::redraw_system).
  bool redrawn = false;
  double wall_seconds = 0.0;
};

struct SolveResult {
  Vec x;
  SolveSummary summary;
};

// Solve from x0. The result x is the best iterate found (lowest residual) if not converged.
SolveResult solve(const FixedPointSystem& sys, const Vec& x0, const SolverOptions& opt);

// F(x) - x, the residual whose infinity norm judges convergence.
Vec fixed_point_residual(const FixedPointSystem& sys, const Vec& x);

// Newton polish alone (GSL hybrids on F(x) - x), accepted only if |F(x) - x|_inf <= tol.
SolveResult newton_polish(const FixedPointSystem& sys, const Vec& x0, const SolverOptions& opt);

}  // namespace saddle
