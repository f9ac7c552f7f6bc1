// Damped and Anderson-accelerated fixed-point iteration with Newton polish (GSL hybrids).
#include "solver/fixed_point.hpp"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_multiroots.h>
#include <gsl/gsl_vector.h>

#include <chrono>
#include <cmath>
#include <deque>
#include <ostream>
#include <stdexcept>

#include "solver/interrupt.hpp"

namespace saddle {
namespace {

double inf_norm(const Vec& v) {
  if (v.size() == 0) return 0.0;
  double r = 0.0;
  for (Eigen::Index i = 0; i < v.size(); ++i) {
    if (!std::isfinite(v[i])) return std::numeric_limits<double>::infinity();
    r = std::max(r, std::fabs(v[i]));
  }
  return r;
}

bool all_finite(const Vec& v) { return v.allFinite(); }

// The system's residual norm at x (one map evaluation).
double norm_at(const FixedPointSystem& sys, const Vec& x) { return sys.residual_norm(x, sys.map(x)); }

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

struct GslAdapter {
  const FixedPointSystem* sys;
  static int f(const gsl_vector* x, void* p, gsl_vector* out) {
    auto* a = static_cast<GslAdapter*>(p);
    Vec xv(x->size);
    for (std::size_t i = 0; i < x->size; ++i) xv[i] = gsl_vector_get(x, i);
    Vec r = fixed_point_residual(*a->sys, xv);
    if (!all_finite(r)) return GSL_EBADFUNC;
    for (std::size_t i = 0; i < x->size; ++i) gsl_vector_set(out, i, r[i]);
    return GSL_SUCCESS;
  }
};

}  // namespace

std::string to_string(Termination t) {
  switch (t) {
    case Termination::Tolerance: return "tolerance";
    case Termination::Newton: return "newton";
    case Termination::NewtonFailed: return "newton_failed";
    case Termination::MaxIter: return "max_iter";
    case Termination::Stalled: return "stalled";
    case Termination::NonFinite: return "non_finite";
    case Termination::Interrupted: return "interrupted";
    case Termination::OutOfDomain: return "out_of_domain";
  }
  return "unknown";
}

std::ostream& operator<<(std::ostream& os, Termination t) { return os << to_string(t); }

Vec fixed_point_residual(const FixedPointSystem& sys, const Vec& x) { return sys.map(x) - x; }

std::string to_string(Method m) {
  switch (m) {
    case Method::Damped: return "damped";
    case Method::Newton: return "newton";
    default: return "anderson";
  }
}

bool SolverOptions::is_valid(std::string* error) const {
  auto fail = [error](const char* what) {
    if (error) *error = what;
    return false;
  };
  if (!(mix > 0.0 && mix <= 1.0)) return fail("mix: must be in (0, 1]");
  if (!(tol > 0.0) || !std::isfinite(tol)) return fail("tol: must be a positive number");
  if (max_iter < 1 || max_iter > 1000000) return fail("max_iter: must be in 1..1e6");
  if (anderson_depth < 0 || anderson_depth > 100) return fail("anderson_depth: must be in 0..100");
  if (stall_window < 0) return fail("stall_window: must be >= 0");
  if (newton_steps < 0 || newton_halvings < 0 || newton_max_iter < 0)
    return fail("newton_steps: Newton's counts must be >= 0");
  if (newton_fallback == Method::Newton) return fail("newton_fallback: must not be newton");
  return true;
}

Method parse_method(const std::string& s) {
  if (s == "damped") return Method::Damped;
  if (s == "anderson") return Method::Anderson;
  if (s == "newton") return Method::Newton;
  throw std::invalid_argument("unknown solver method '" + s +
                              "' (expected damped, anderson or newton)");
}

SolveResult newton_polish(const FixedPointSystem& sys, const Vec& x0, const SolverOptions& opt) {
  gsl_set_error_handler_off();
  const auto t0 = std::chrono::steady_clock::now();
  const int n = sys.dim();
  SolveResult res;
  res.x = x0;
  res.summary.residual = norm_at(sys, x0);
  res.summary.reason = Termination::NewtonFailed;
  GslAdapter ad{&sys};
  gsl_multiroot_function F{&GslAdapter::f, static_cast<std::size_t>(n), &ad};
  gsl_vector* x = gsl_vector_alloc(n);
  for (int i = 0; i < n; ++i) gsl_vector_set(x, i, x0[i]);
  gsl_multiroot_fsolver* s = gsl_multiroot_fsolver_alloc(gsl_multiroot_fsolver_hybrids, n);
  int iters = 0;
  if (gsl_multiroot_fsolver_set(s, &F, x) == GSL_SUCCESS) {
    for (iters = 1; iters <= opt.newton_max_iter && !interrupt_requested(); ++iters) {
      int st = gsl_multiroot_fsolver_iterate(s);
      Vec xv(n);
      for (int i = 0; i < n; ++i) xv[i] = gsl_vector_get(s->x, i);
      Vec xp = xv;
      sys.project(xp);
      double r = norm_at(sys, xp);
      if (r < res.summary.residual) {
        res.summary.residual = r;
        res.x = xp;
      }
      if (res.summary.residual <= opt.tol) break;
      if (st != GSL_SUCCESS) break;
    }
  }
  gsl_multiroot_fsolver_free(s);
  gsl_vector_free(x);
  res.summary.iterations = std::min(iters, opt.newton_max_iter);
  res.summary.converged = res.summary.residual <= opt.tol;
  if (res.summary.converged) res.summary.reason = Termination::Newton;
  res.summary.wall_seconds = seconds_since(t0);
  return res;
}

namespace {
SolveResult iterate(const FixedPointSystem& sys, const Vec& x0, const SolverOptions& opt) {
  const auto t0 = std::chrono::steady_clock::now();
  if (x0.size() != sys.dim()) throw std::invalid_argument("solve: x0 has the wrong dimension");
  if (!(opt.mix > 0.0 && opt.mix <= 1.0)) throw std::invalid_argument("solve: mix must be in (0, 1]");
  SolveResult res;
  Vec x = x0;
  sys.project(x);
  Vec best_x = x;
  double best_r = std::numeric_limits<double>::infinity();
  int since_best = 0;
  std::deque<Vec> hist_x;     // recent iterates (stall detection)
  std::deque<Vec> dX, dG;     // Anderson differences of iterates and of residuals
  Vec prev_x, prev_g;         // last accepted iterate and its residual F(x) - x
  double prev_r = std::numeric_limits<double>::infinity();
  bool last_was_anderson = false;
  int it = 0;
  Termination reason = Termination::MaxIter;
  double r_final = std::numeric_limits<double>::infinity();  // residual at x when tol was met
  bool stalled = false;
  auto reset_history = [&] {
    dX.clear();
    dG.clear();
  };
  for (it = 1; it <= opt.max_iter; ++it) {
    if (interrupt_requested()) { reason = Termination::Interrupted; break; }  // no throw: may run under OpenMP
    Vec fx = sys.map(x);
    const bool finite = all_finite(fx);
    // The residual F(x) - x of the undamped map, from the F(x) just evaluated.
    Vec g = fx - x;
    double r = finite ? sys.residual_norm(x, fx) : std::numeric_limits<double>::infinity();
    // Safe fallback: an accelerated step that made things clearly worse (or non-finite) is
    // replaced by a plain damped step from the last accepted iterate, and the history is reset.
    if (last_was_anderson && (!finite || r > 2.0 * prev_r)) {
      x = prev_x + opt.mix * prev_g;
      sys.project(x);
      reset_history();
      last_was_anderson = false;
      ++res.summary.steps;
      continue;
    }
    if (!finite) {
      reason = Termination::NonFinite;
      break;
    }
    if (r < best_r) {
      best_r = r;
      best_x = x;
      since_best = 0;
    } else {
      ++since_best;
    }
    if (r <= opt.tol) {
      r_final = r;
      reason = Termination::Tolerance;
      break;
    }
    if (opt.stall_window > 0) {
      hist_x.push_back(x);
      if (static_cast<int>(hist_x.size()) > opt.stall_window) hist_x.pop_front();
      if (since_best >= opt.stall_window) {
        stalled = true;
        reason = Termination::Stalled;
        break;
      }
    }
    Vec xn = x + opt.mix * g;  // damped step
    last_was_anderson = false;
    if (opt.method == Method::Anderson && opt.anderson_depth > 0) {
      if (prev_x.size() == x.size()) {
        dX.push_back(x - prev_x);
        dG.push_back(g - prev_g);
        if (static_cast<int>(dX.size()) > opt.anderson_depth) {
          dX.pop_front();
          dG.pop_front();
        }
      }
      const int m = static_cast<int>(dG.size());
      if (m > 0) {
        Eigen::MatrixXd Gm(x.size(), m), Xm(x.size(), m);
        for (int j = 0; j < m; ++j) {
          Gm.col(j) = dG[j];
          Xm.col(j) = dX[j];
        }
        Vec gamma = Gm.colPivHouseholderQr().solve(g);
        Vec xa = x + opt.mix * g - (Xm + opt.mix * Gm) * gamma;
        Vec xa_proj = xa;
        sys.project(xa_proj);
        // Keep the accelerated step only if it is finite, stays admissible (projection did not
        // move it) and the iteration is still making progress; otherwise damped + reset.
        if (all_finite(xa) && (xa_proj - xa).cwiseAbs().maxCoeff() == 0.0 &&
            since_best <= 2 * opt.anderson_depth) {
          xn = xa;
          last_was_anderson = true;
        } else {
          reset_history();
        }
      }
    }
    prev_x = x;
    prev_g = g;
    prev_r = r;
    sys.project(xn);
    x = xn;
    ++res.summary.steps;
  }
  if (it > opt.max_iter) it = opt.max_iter;
  res.summary.iterations = it;
  if (reason == Termination::Tolerance) {
    res.x = x;
    res.summary.residual = r_final;
    res.summary.converged = true;
  } else if (stalled) {
    Vec mean = Vec::Zero(x.size());
    Vec lo = hist_x.front(), hi = hist_x.front();
    for (const Vec& h : hist_x) {
      mean += h;
      lo = lo.cwiseMin(h);
      hi = hi.cwiseMax(h);
    }
    mean /= static_cast<double>(hist_x.size());
    res.summary.amplitude = (hi - lo).maxCoeff();
    sys.project(mean);
    res.x = mean;
    res.summary.residual = norm_at(sys, mean);
    res.summary.stalled = true;
    res.summary.converged = false;
  } else {
    res.x = best_x;
    res.summary.residual = best_r;
  }
  res.summary.reason = reason;
  if (!res.summary.converged && !stalled && opt.newton_polish && std::isfinite(best_r)) {
    SolveResult nr = newton_polish(sys, best_x, opt);
    res.summary.iterations += nr.summary.iterations;
    if (nr.summary.residual < res.summary.residual) {
      res.x = nr.x;
      res.summary.residual = nr.summary.residual;
    }
    if (nr.summary.converged) {
      res.summary.converged = true;
      res.summary.reason = Termination::Newton;
    }
  }
  res.summary.path = opt.method;
  res.summary.wall_seconds = seconds_since(t0);
  return res;
}

// Newton steps in the system's chart (FixedPointSystem::chart_residual): dz = -(dR/dz)^-1 R,
// trial points x = from_chart(z + t dz) for t = 1, 1/2, ..., 2^-newton_halvings (a trial point
// that is not finite is skipped), the first that lowers the system's residual norm accepted.
SolveResult chart_newton_steps(const FixedPointSystem& sys, const Vec& x0, Vec R, Eigen::MatrixXd J,
                               double r, const SolverOptions& opt) {
  SolveResult res;
  res.summary.path = Method::Newton;
  Vec x = x0;
  int passes = 1;
  res.x = x;
  res.summary.residual = r;
  Vec Rt, dz, z, zt, xt;  // buffers reused over the steps
  Eigen::MatrixXd Jt;
  Eigen::PartialPivLU<Eigen::MatrixXd> lu(J.rows());
  while (std::isfinite(r) && r > opt.tol && passes < opt.newton_steps && res.summary.steps < opt.max_iter) {
    lu.compute(J);
    dz = lu.solve(R);
    dz = -dz;
    if (!all_finite(dz)) break;
    ++res.summary.steps;
    sys.to_chart(x, z);
    bool improved = false;
    double t = 1.0;
    for (int half = 0; half <= opt.newton_halvings && passes < opt.newton_steps; ++half, t *= 0.5) {
      zt = z + t * dz;
      sys.from_chart(zt, xt);
      if (!all_finite(xt)) continue;
      double rt = std::numeric_limits<double>::infinity();
      sys.chart_residual(xt, Rt, Jt, rt);
      ++passes;
      if (std::isfinite(rt) && rt < r) {
        x.swap(xt);
        R.swap(Rt);
        J.swap(Jt);
        r = rt;
        improved = true;
        break;
      }
    }
    if (!improved) break;
  }
  res.x = x;
  res.summary.residual = r;
  res.summary.iterations = passes;
  res.summary.converged = r <= opt.tol;
  if (res.summary.converged) res.summary.reason = Termination::Tolerance;
  return res;
}

// Newton on G(x) = F(x) - x with J_G = J_F - I from map_jacobian; each trial point costs one
// pass. A step that does not lower the residual is halved (at most 3 times). Returns converged
// (tolerance met) or the best iterate, with the number of passes used.
// A system with a chart (chart_residual) goes to chart_newton_steps (in_chart = true).
SolveResult newton_steps(const FixedPointSystem& sys, const Vec& x0, const SolverOptions& opt,
                         bool& jacobian_available, bool& in_chart) {
  const int n = sys.dim();
  {
    Vec R;
    Eigen::MatrixXd J;
    double r = std::numeric_limits<double>::infinity();
    if (sys.chart_residual(x0, R, J, r)) {
      jacobian_available = in_chart = true;
      return chart_newton_steps(sys, x0, std::move(R), std::move(J), r, opt);
    }
  }
  SolveResult res;
  res.summary.path = Method::Newton;
  Vec x = x0;
  sys.project(x);
  Vec fx;
  Eigen::MatrixXd J;
  int passes = 0;
  jacobian_available = sys.map_jacobian(x, fx, J);
  ++passes;
  if (!jacobian_available) {
    res.x = x;
    res.summary.iterations = 0;
    return res;
  }
  Vec g = fx - x;
  double r = all_finite(fx) ? inf_norm(g) : std::numeric_limits<double>::infinity();
  res.x = x;
  res.summary.residual = r;
  while (std::isfinite(r) && r > opt.tol && passes < opt.newton_steps) {
    const Eigen::MatrixXd A = Eigen::MatrixXd::Identity(n, n) - J;  // (I - J_F) dx = G
    const Vec dx = A.fullPivLu().solve(g);
    if (!all_finite(dx)) break;
    bool improved = false;
    double t = 1.0;
    ++res.summary.steps;
    for (int half = 0; half <= opt.newton_halvings && passes < opt.newton_steps; ++half, t *= 0.5) {
      Vec xt = x + t * dx;
      sys.project(xt);
      Vec ft;
      Eigen::MatrixXd Jt;
      sys.map_jacobian(xt, ft, Jt);
      ++passes;
      const Vec gt = ft - xt;
      const double rt = all_finite(ft) ? inf_norm(gt) : std::numeric_limits<double>::infinity();
      if (rt < r) {
        x = xt;
        g = gt;
        J = Jt;
        r = rt;
        improved = true;
        break;
      }
    }
    if (!improved) break;
    res.x = x;
    res.summary.residual = r;
  }
  res.summary.iterations = passes;
  res.summary.converged = r <= opt.tol;
  if (res.summary.converged) res.summary.reason = Termination::Tolerance;
  return res;
}
}  // namespace

SolveResult solve(const FixedPointSystem& sys, const Vec& x0, const SolverOptions& opt) {
  if (opt.method != Method::Newton) return iterate(sys, x0, opt);
  if (x0.size() != sys.dim()) throw std::invalid_argument("solve: x0 has the wrong dimension");
  const auto t0 = std::chrono::steady_clock::now();
  bool has_jacobian = false, in_chart = false;
  SolveResult nr = newton_steps(sys, x0, opt, has_jacobian, in_chart);
  // In a chart, Newton steps count against max_iter and the fallback gets what is left.
  const int left = in_chart ? opt.max_iter - nr.summary.steps : opt.max_iter;
  if (nr.summary.converged || left <= 0 || (opt.newton_only && has_jacobian)) {
    if (!nr.summary.converged) nr.summary.reason = Termination::MaxIter;
    nr.summary.wall_seconds = seconds_since(t0);
    return nr;
  }
  // Fallback: Anderson (or damped) from the best Newton iterate (or from x0 without a Jacobian).
  SolverOptions fb = opt;
  fb.method = opt.newton_fallback == Method::Newton ? Method::Anderson : opt.newton_fallback;
  fb.max_iter = left;
  SolveResult ar = iterate(sys, has_jacobian ? nr.x : x0, fb);
  ar.summary.iterations += nr.summary.iterations;
  ar.summary.steps += nr.summary.steps;
  ar.summary.wall_seconds = seconds_since(t0);
  return ar;
}

}  // namespace saddle
