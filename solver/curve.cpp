// The curve driver (see curve.hpp): continuation x starts x replicates, accept rule with retry,
// aggregation, refinement, branch preference and coexistence.
#include "solver/curve.hpp"

#include "solver/interrupt.hpp"
#include "solver/map_radius.hpp"
#include "solver/parallel.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

namespace saddle {

bool CurveOptions::is_valid(std::string* error) const {
  if (!solver.is_valid(error)) return false;
  auto fail = [error](const char* what) {
    if (error) *error = what;
    return false;
  };
  if (!(noise_factor >= 0.0 && noise_factor <= 1.0)) return fail("noise_factor: must be in [0, 1]");
  if (!(target_se >= 0.0) || !std::isfinite(target_se)) return fail("target_se: must be >= 0 (0 = no refinement)");
  if (max_refine < 0 || max_refine > 4) return fail("max_refine: must be in 0..4");
  if (!(warm_accept >= 0.0)) return fail("warm_accept: must be >= 0");
  if (!(retry_mix > 0.0 && retry_mix <= 1.0)) return fail("retry_mix: must be in (0, 1]");
  if (retry_max_iter < 1) return fail("retry_max_iter: must be >= 1");
  return true;
}

std::string to_string(Stability s) {
  switch (s) {
    case Stability::Stable: return "stable";
    case Stability::Unstable: return "unstable";
    case Stability::Marginal: return "marginal";
    default: return "unknown";
  }
}

std::string path_text(const CurveStatus& s) {
  const Method order[3] = {Method::Newton, Method::Anderson, Method::Damped};
  int kinds = 0;
  for (Method m : order) kinds += s.n_by_path[static_cast<int>(m)] > 0;
  std::string t;
  for (Method m : order) {
    const int n = s.n_by_path[static_cast<int>(m)];
    if (n == 0) continue;
    if (!t.empty()) t += "+";
    t += to_string(m);
    if (kinds > 1) t += ":" + std::to_string(n);
  }
  if (s.n_redrawn > 0) t += (t.empty() ? "" : "+") + std::string("redraw:") + std::to_string(s.n_redrawn);
  if (s.n_fallback > 0) t += (t.empty() ? "" : "+") + std::string("fallback:") + std::to_string(s.n_fallback);
  if (s.n_out_of_domain > 0) t += (t.empty() ? "" : "+") + std::string("out_of_domain:") + std::to_string(s.n_out_of_domain);
  return t;
}

std::string reason_text(const CurveStatus& s) {
  if (s.reason == Termination::Tolerance && s.n_noise > 0) return "noise";
  return to_string(s.reason);
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

bool usable(const SolveSummary& sm, const CurveOptions& opt) {
  return sm.converged || (sm.stalled && sm.residual <= opt.warm_accept);
}

namespace {
// The residual met the tolerance (a stalled solve never has).
bool met_tol(const SolveSummary& sm) { return sm.converged && !sm.stalled; }

// A replicate whose map or values the model could not evaluate (OutOfDomain): not converged, at its
// start, with the reason.
SolveResult out_of_domain(const Vec& start) {
  SolveResult sr;
  sr.x = start;
  sr.summary.converged = false;
  sr.summary.stalled = false;
  sr.summary.reason = Termination::OutOfDomain;
  sr.summary.residual = std::numeric_limits<double>::infinity();
  return sr;
}
SolveResult solve_in_domain(const FixedPointSystem& sys, const Vec& start, const SolverOptions& opt) {
  try {
    return solve(sys, start, opt);
  } catch (const OutOfDomain&) {
    return out_of_domain(start);
  }
}

// Adds the passes of an earlier solve to a later one's count.
void add_work(SolveSummary& to, const SolveSummary& from) {
  to.iterations += from.iterations;
  to.steps += from.steps;
}

// The first solve of a replicate. With a redraw (CurveModel::redraw_system) and Newton: the
// Newton steps alone; where they end near a fixed point without meeting tol (a jump of the
// sampled map straddling it), the redrawn systems by Newton from the best iterate, the first that
// meets tol being the result (summary.redrawn); otherwise the fallback iteration of Newton from
// its best iterate, as a plain Newton solve would have run it (with the whole max_iter: a system
// with a chart, whose Newton steps count against max_iter in solve(), would get a larger budget
// here; none reaches the curve driver today, RMT's BulkSystem has its own solve_attention).
SolveResult first_solve(const FixedPointSystem& sys, const Vec& start, const CurveOptions& opt,
                        const RedrawFn& redraw) {
  if (!redraw || opt.solver.method != Method::Newton) return solve_in_domain(sys, start, opt.solver);
  SolverOptions newton = opt.solver;
  newton.newton_only = true;
  SolveResult nr = solve_in_domain(sys, start, newton);
  if (nr.summary.converged || nr.summary.path != Method::Newton ||
      nr.summary.reason == Termination::OutOfDomain)
    return nr;
  SolveSummary spent = nr.summary;
  if (std::isfinite(nr.summary.residual) && nr.summary.residual <= kRedrawGate) {
    for (int a = 1; a <= kRedrawAttempts; ++a) {
      const auto alt = redraw(a);
      if (!alt) break;
      SolveResult rd = solve_in_domain(*alt, nr.x, newton);
      if (rd.summary.converged && !rd.summary.stalled) {
        add_work(rd.summary, spent);
        rd.summary.redrawn = true;
        return rd;
      }
      add_work(spent, rd.summary);
    }
  }
  SolverOptions then = opt.solver;
  then.method = opt.solver.newton_fallback == Method::Newton ? Method::Anderson : opt.solver.newton_fallback;
  SolveResult it = solve_in_domain(sys, nr.x, then);
  add_work(it.summary, spent);
  return it;
}
}  // namespace

SolveResult solve_with_retry(const FixedPointSystem& sys, const Vec& start, const CurveOptions& opt,
                             const FixedPointSystem* fallback, const Vec* retry_start,
                             const RedrawFn& redraw) {
  SolveResult sr = first_solve(sys, start, opt, redraw);
  if (sr.summary.redrawn) return sr;
  // The fallback is for a small limit cycle about a fixed point (residual small against the
  // state): Newton on the continuous map finds that point in a few steps. A replicate that
  // wandered off (residual comparable to its state) has no nearby fixed point to find, and the
  // fallback's map is costly far from one: it is not tried, and its iterations are capped (Newton:
  // its steps alone, which find a nearby fixed point or fail), so every point costs a bounded
  // multiple of its primary solve.
  const double scale = 1.0 + (sr.x.size() ? sr.x.cwiseAbs().maxCoeff() : 0.0);
  if (fallback && !sr.summary.converged && std::isfinite(sr.summary.residual) &&
      sr.summary.residual <= kFallbackGate * scale) {
    SolverOptions fo = opt.solver;
    fo.max_iter = std::min(fo.max_iter, kFallbackMaxIter);
    fo.newton_only = fo.method == Method::Newton;
    SolveResult fb = solve_in_domain(*fallback, sr.x, fo);
    if (fb.summary.converged) {
      fb.summary.iterations += sr.summary.iterations;
      fb.summary.steps += sr.summary.steps;
      fb.summary.fallback = true;
      return fb;
    }
  }
  if (opt.retry && !usable(sr.summary, opt)) {
    // A slow damped iteration: the plain or accelerated iteration can have an unstable direction
    // (e.g. near the interpolation peak of linear attention).
    SolverOptions slow = opt.solver;
    slow.method = Method::Damped;
    slow.mix = opt.retry_mix;
    slow.max_iter = retry_iterations(opt);  // bounded by --max-iter too
    slow.stall_window = std::max(opt.solver.stall_window, 100);
    SolveResult again = solve_in_domain(sys, retry_start ? *retry_start : start, slow);
    again.summary.iterations += sr.summary.iterations;
    if (again.summary.converged || (!sr.summary.converged && again.summary.residual < sr.summary.residual))
      return again;
  }
  return sr;
}

namespace {

// Replicate r's solve at (param, level) by solve_with_retry, with the model's fallback and
// redraw of that replicate; sys is model.system(param, r, level).
SolveResult solve_replicate(const CurveModel& model, const FixedPointSystem& sys, double param, int r,
                            int level, const Vec& start, const CurveOptions& opt, const Vec* retry_start) {
  const auto fb = model.fallback_system(param, r, level);
  const RedrawFn redraw = [&](int a) { return model.redraw_system(param, r, level, a); };
  return solve_with_retry(sys, start, opt, fb.get(), retry_start, redraw);
}

// The parameter index of the k-th point of a chain that walks n_par points in direction dir.
int chain_index(Direction dir, int k, int n_par) { return dir == Direction::Forward ? k : n_par - 1 - k; }

struct Replicate {
  SolveResult res;  // x projected
  Vec values;
  double radius = std::numeric_limits<double>::quiet_NaN();  // map radius (if computed)
  bool within_noise = false;  // not converged, but its residual is below the map's noise
};

// How severe a replicate's termination is for the point's reason (higher wins).
int severity(Termination t) {
  switch (t) {
    case Termination::Tolerance:
    case Termination::Newton: return 0;
    case Termination::NewtonFailed: return 1;
    case Termination::MaxIter: return 2;
    case Termination::Stalled: return 3;
    case Termination::Interrupted: return 4;
    case Termination::NonFinite: return 5;
    case Termination::OutOfDomain: return 6;
  }
  return 0;
}

// The model's values at a replicate's solution; where the model cannot evaluate them (OutOfDomain)
// they are NaN and the replicate is marked not converged, so the point says converged = 0.
Vec values_in_domain(const CurveModel& model, const FixedPointSystem& sys, SolveResult& sr) {
  try {
    return model.values(sys, sr.x);
  } catch (const OutOfDomain&) {
    sr.summary.converged = false;
    sr.summary.stalled = false;
    sr.summary.reason = Termination::OutOfDomain;
    return Vec::Constant(static_cast<Eigen::Index>(sys.observable_names().size()),
                         std::numeric_limits<double>::quiet_NaN());
  }
}

// Map radius at a usable solution (x projected first).
MapSpectrum spectrum_at(const FixedPointSystem& sys, const Vec& x) {
  Vec xp = x;
  sys.project(xp);
  try {
    return map_spectrum(sys, xp);
  } catch (const OutOfDomain&) {  // a neighbour of x outside the model's domain: radius unknown
    MapSpectrum ms;
    ms.radius = std::numeric_limits<double>::quiet_NaN();
    return ms;
  }
}

CurvePoint aggregate(const std::vector<const Replicate*>& reps, double param, int start, int level,
                     const CurveOptions& opt) {
  CurvePoint p;
  p.param = param;
  p.start = start;
  p.level = level;
  const int R = static_cast<int>(reps.size());
  const int nx = static_cast<int>(reps[0]->res.x.size());
  const int nv = static_cast<int>(reps[0]->values.size());
  std::vector<std::vector<double>> xs(nx, std::vector<double>(R)), vs(nv, std::vector<double>(R));
  p.reason = Termination::Tolerance;
  for (int r = 0; r < R; ++r) {
    const SolveResult& sr = reps[r]->res;
    for (int j = 0; j < nx; ++j) xs[j][r] = sr.x(j);
    for (int j = 0; j < nv; ++j) vs[j][r] = reps[r]->values(j);
    // converged means below tolerance (a stalled solve never is), or within the map's noise
    const bool ok_tol = met_tol(sr.summary);
    const bool ok_noise = !ok_tol && reps[r]->within_noise;
    if (ok_tol) ++p.n_converged;
    if (ok_noise) ++p.n_noise;
    if (sr.summary.stalled) {
      ++p.n_stalled;
      p.amplitude = std::max(p.amplitude, sr.summary.amplitude);
    }
    if (!ok_tol && !ok_noise) {
      ++p.n_failed;
      // a solve that met tol only by its Newton polish reports Newton; any other non-converged
      // ending is the reason of the point (the most severe one)
      const Termination t = sr.summary.reason == Termination::Tolerance || sr.summary.reason == Termination::Newton
                                ? Termination::MaxIter
                                : sr.summary.reason;
      if (p.reason == Termination::Tolerance || severity(t) > severity(p.reason)) p.reason = t;
    }
    if (sr.summary.reason == Termination::OutOfDomain) ++p.n_out_of_domain;
    if (sr.summary.fallback) ++p.n_fallback;
    if (sr.summary.redrawn) ++p.n_redrawn;
    p.iterations = std::max(p.iterations, sr.summary.iterations);
    ++p.n_by_path[static_cast<int>(sr.summary.path)];
    p.residual = std::max(p.residual, sr.summary.residual);
  }
  for (int j = 0; j < nx; ++j) p.x.push_back(summarize(xs[j]));
  for (int j = 0; j < nv; ++j) p.values.push_back(summarize(vs[j]));
  p.converged = p.n_failed == 0;
  std::vector<double> radii;
  for (int r = 0; r < R; ++r) radii.push_back(reps[r]->radius);
  if (std::all_of(radii.begin(), radii.end(), [](double v) { return std::isfinite(v); }))
    p.map_radius = summarize(radii);
  return p;
}

// The replicates of one point, for the noise rule.
struct NoiseCheck {
  double param;
  int level;
  std::vector<Replicate*> reps;
};

// The noise rule of CurveOptions: for every point with a replicate that did not converge (finite
// residual), the map's QMC noise per component is the standard deviation over the replicates of
// F_r(xbar) at the mean state xbar, and such a replicate is marked within_noise when
// |F_r(x_r) - x_r|_j <= max(noise_factor noise_j, tol) for every j. Map evaluations run in
// parallel; a state the model cannot evaluate leaves the replicate not converged.
void apply_noise_rule(const CurveModel& model, std::vector<NoiseCheck>& checks, const CurveOptions& opt) {
  if (!(opt.noise_factor > 0.0)) return;
  std::vector<NoiseCheck*> todo;
  for (NoiseCheck& c : checks) {
    if (c.reps.size() < 2) continue;
    bool need = false, blocked = false;
    for (const Replicate* r : c.reps) {
      const SolveSummary& sm = r->res.summary;
      if (met_tol(sm)) continue;
      // a replicate without a usable state: the point is not converged, no rule
      if (sm.reason == Termination::OutOfDomain || sm.reason == Termination::Interrupted ||
          sm.reason == Termination::NonFinite || !std::isfinite(sm.residual))
        blocked = true;
      else
        need = true;
    }
    if (need && !blocked) todo.push_back(&c);
  }
  if (todo.empty()) return;
  const std::size_t R = todo.front()->reps.size();
  // Per (point, replicate): F_r(xbar) and F_r(x_r) - x_r.
  std::vector<Vec> xbar(todo.size());
  for (std::size_t t = 0; t < todo.size(); ++t) {
    xbar[t] = Vec::Zero(todo[t]->reps[0]->res.x.size());
    for (const Replicate* r : todo[t]->reps) xbar[t] += r->res.x;
    xbar[t] /= static_cast<double>(todo[t]->reps.size());
  }
  std::vector<Vec> f_bar(todo.size() * R), g_own(todo.size() * R);
  std::vector<char> ok(todo.size() * R, 1);
  parallel_for(todo.size() * R, [&](std::size_t u) {
    if (interrupt_requested()) return;
    const NoiseCheck& c = *todo[u / R];
    const int r = static_cast<int>(u % R);
    const Replicate& rep = *c.reps[r];
    try {
      const auto sys = model.system(c.param, r, c.level);
      Vec xb = xbar[u / R];
      sys->project(xb);
      f_bar[u] = sys->map(xb);
      if (!met_tol(rep.res.summary))
        g_own[u] = sys->map(rep.res.x) - rep.res.x;
      if (!f_bar[u].allFinite() || (g_own[u].size() > 0 && !g_own[u].allFinite())) ok[u] = 0;
    } catch (const OutOfDomain&) {
      ok[u] = 0;
    }
  });
  if (interrupt_requested()) return;
  for (std::size_t t = 0; t < todo.size(); ++t) {
    bool all = true;
    for (std::size_t r = 0; r < R; ++r) all = all && ok[t * R + r];
    if (!all) continue;
    const Eigen::Index n = f_bar[t * R].size();
    Vec mean = Vec::Zero(n), var = Vec::Zero(n);
    for (std::size_t r = 0; r < R; ++r) mean += f_bar[t * R + r];
    mean /= static_cast<double>(R);
    for (std::size_t r = 0; r < R; ++r) var += (f_bar[t * R + r] - mean).cwiseAbs2();
    const Vec noise = (var / static_cast<double>(R - 1)).cwiseSqrt();
    for (std::size_t r = 0; r < R; ++r) {
      const Vec& g = g_own[t * R + r];
      if (g.size() == 0) continue;  // converged by tolerance
      bool within = true;
      for (Eigen::Index j = 0; j < n; ++j)
        within = within && std::abs(g[j]) <= std::max(opt.noise_factor * noise[j], opt.solver.tol);
      todo[t]->reps[r]->within_noise = within;
    }
  }
}

}  // namespace

std::vector<CurvePoint> run_curve(CurveModel& model, const std::vector<double>& params,
                                  const std::vector<CurveStart>& starts, const CurveOptions& opt) {
  const int R = model.replicates();
  const int n_start = static_cast<int>(starts.size());
  const int n_tasks = n_start * R;
  const int n_par = static_cast<int>(params.size());
  if (n_par == 0 || n_start == 0) return {};
  model.prepare_level(0);
  // Progress (solver/interrupt.hpp): each solve of level 0 is an equal part of the curve; with
  // refinement, level 0 counts for 60 % and each refinement level for an equal part of the rest.
  const WorkShare work = current_work();
  const bool refining = opt.target_se > 0.0 && model.refine_on() >= 0 && opt.max_refine > 0;
  const double level0_share = refining ? 0.6 : 1.0;
  const double per_solve = level0_share / (static_cast<double>(n_tasks) * n_par);
  // Per task (start, replicate): the solution and values at every parameter.
  std::vector<std::vector<Replicate>> reps(n_tasks, std::vector<Replicate>(n_par));

  // The pilot of each warm chain (CurveOptions::pilot): replicate 0 at the chain's first point.
  std::vector<std::optional<SolveResult>> pilot(n_start);
  if (opt.pilot && R > 1) {
    parallel_for(static_cast<std::size_t>(n_start), [&](std::size_t kk) {
      const CurveStart& st = starts[kk];
      if (!st.warm || interrupt_requested()) return;
      const int i = chain_index(st.direction, 0, n_par);
      const auto sys = model.system(params[i], 0, 0);
      pilot[kk] = solve_replicate(model, *sys, params[i], 0, 0, st.x0, opt, nullptr);
    });
  }

  // Every (start, replicate) is a task of the one team (solver/parallel.hpp); an exception of a
  // model (e.g. a setting outside what it implements) reaches the caller, never terminates.
  parallel_for(static_cast<std::size_t>(n_tasks), [&](std::size_t tt) {
    const int t = static_cast<int>(tt);
    const CurveStart& st = starts[t / R];
    const int r = t % R;
    // Continuation with warm starts: a usable replicate (converged, or a small limit cycle) is
    // the start of the next point, or the secant predictor from the last two (CurveOptions).
    std::vector<SolveResult> res(n_par);
    std::vector<double> radius(n_par, std::numeric_limits<double>::quiet_NaN());
    const bool need_radius = opt.map_radius || st.escape > 0.0;
    Vec start = st.x0;
    // the parameter index of the k-th point of the chain
    const auto at = [&](int k) { return chain_index(st.direction, k, n_par); };
    for (int k = 0; k < n_par; ++k) {
      if (interrupt_requested()) break;  // polled, not thrown: this runs inside OpenMP
      const int i = at(k);
      const auto sys = model.system(params[i], r, 0);
      Vec x_start = st.warm ? start : st.x0;
      bool predicted = false;
      if (st.warm && opt.secant_predictor && k >= 2) {
        const int i1 = at(k - 1), i2 = at(k - 2);
        if (met_tol(res[i1].summary) && met_tol(res[i2].summary) && params[i1] != params[i2]) {
          const double f = (params[i] - params[i1]) / (params[i1] - params[i2]);
          x_start = res[i1].x + f * (res[i1].x - res[i2].x);
          sys->project(x_start);
          predicted = x_start.allFinite();
          if (!predicted) x_start = start;
        }
      }
      // a failed replicate's damped retry starts from the last usable point, not from the
      // extrapolation (a far extrapolation can lead the slow iteration through costly states)
      const std::optional<SolveResult>& pl = pilot[t / R];
      if (k == 0 && pl && r == 0) {
        res[i] = *pl;  // the pilot was this replicate's solve
      } else {
        if (k == 0 && pl && met_tol(pl->summary)) x_start = pl->x;
        res[i] = solve_replicate(model, *sys, params[i], r, 0, x_start, opt, predicted ? &start : nullptr);
      }
      if (need_radius && usable(res[i].summary, opt)) {
        const MapSpectrum ms = spectrum_at(*sys, res[i].x);
        radius[i] = ms.radius;
        if (st.escape > 0.0 && ms.radius > 1.0) {
          // A repelling fixed point: leave it along the unstable direction with the damped
          // iteration (which follows attraction; Anderson and Newton steps, like a secant
          // method, would find the nearby repelling root again).
          SolverOptions damped = opt.solver;
          damped.method = Method::Damped;
          SolveResult again = solve_in_domain(*sys, res[i].x + st.escape * ms.direction, damped);
          if (usable(again.summary, opt)) {
            const double ra = spectrum_at(*sys, again.x).radius;
            if (ra < ms.radius) {
              again.summary.iterations += res[i].summary.iterations;
              res[i] = std::move(again);
              radius[i] = ra;
            }
          }
        }
      }
      if (usable(res[i].summary, opt)) start = res[i].x;
      work.add(per_solve);
    }
    for (int i = 0; i < n_par && !interrupt_requested(); ++i) {
      const auto sys = model.system(params[i], r, 0);
      sys->project(res[i].x);
      reps[t][i].values = values_in_domain(model, *sys, res[i]);
      reps[t][i].res = std::move(res[i]);
      reps[t][i].radius = radius[i];
    }
  });

  // An interrupted curve is incomplete: the caller (the grid runner) drops it.
  if (interrupt_requested()) return {};
  {
    std::vector<NoiseCheck> checks;
    for (int k = 0; k < n_start; ++k)
      for (int i = 0; i < n_par; ++i) {
        NoiseCheck c{params[i], 0, {}};
        for (int r = 0; r < R; ++r) c.reps.push_back(&reps[k * R + r][i]);
        checks.push_back(std::move(c));
      }
    apply_noise_rule(model, checks, opt);
  }
  if (interrupt_requested()) return {};

  auto point = [&](int k, int i, int level) {
    std::vector<const Replicate*> rr(R);
    for (int r = 0; r < R; ++r) rr[r] = &reps[k * R + r][i];
    CurvePoint p = aggregate(rr, params[i], k, level, opt);
    p.stability = model.stability(p);
    return p;
  };
  std::vector<CurvePoint> out;
  for (int k = 0; k < n_start; ++k)
    for (int i = 0; i < n_par; ++i) out.push_back(point(k, i, 0));

  // Refinement to the target s.e. on the model's chosen value.
  const int i_ref = model.refine_on();
  for (int level = 1; opt.target_se > 0.0 && i_ref >= 0 && level <= opt.max_refine; ++level) {
    if (interrupt_requested()) return {};
    std::vector<int> todo;  // indices into out
    for (int j = 0; j < static_cast<int>(out.size()); ++j) {
      const CurvePoint& p = out[j];
      if (p.converged && p.entry(i_ref).se > opt.target_se &&
          (opt.refine_unstable || p.stability != Stability::Unstable))
        todo.push_back(j);
    }
    if (todo.empty()) break;
    if (!model.prepare_level(level)) break;
    std::vector<Replicate> fine(todo.size() * R);
    const double per_fine = (1.0 - level0_share) / opt.max_refine / static_cast<double>(fine.size());
    parallel_for(fine.size(), [&](std::size_t uu) {
      if (interrupt_requested()) return;
      struct Done {
        const WorkShare& w;
        double f;
        ~Done() { w.add(f); }
      } done{work, per_fine};
      const int u = static_cast<int>(uu);
      const int j = todo[u / R], r = u % R;
      const int k = j / n_par, i = j % n_par;
      const auto sys = model.system(params[i], r, level);
      SolveResult sr = solve_replicate(model, *sys, params[i], r, level, reps[k * R + r][i].res.x, opt, nullptr);
      sys->project(sr.x);
      fine[u].values = values_in_domain(model, *sys, sr);
      if (opt.map_radius || starts[k].escape > 0.0)
        if (usable(sr.summary, opt)) fine[u].radius = spectrum_at(*sys, sr.x).radius;
      fine[u].res = std::move(sr);
    });
    if (interrupt_requested()) return {};
    {
      std::vector<NoiseCheck> checks;
      for (std::size_t v = 0; v < todo.size(); ++v) {
        NoiseCheck c{params[todo[v] % n_par], level, {}};
        for (int r = 0; r < R; ++r) c.reps.push_back(&fine[v * R + r]);
        checks.push_back(std::move(c));
      }
      apply_noise_rule(model, checks, opt);
    }
    if (interrupt_requested()) return {};
    for (std::size_t v = 0; v < todo.size(); ++v) {
      const int j = todo[v], k = j / n_par, i = j % n_par;
      // Keep the refined point only if it converged (else the coarser point, which converged,
      // stays).
      std::vector<const Replicate*> rr(R);
      for (int r = 0; r < R; ++r) rr[r] = &fine[v * R + r];
      if (!aggregate(rr, params[i], k, level, opt).converged) continue;
      for (int r = 0; r < R; ++r) reps[k * R + r][i] = std::move(fine[v * R + r]);
      out[j] = point(k, i, level);
    }
  }

  // Preferred start (lowest free energy among the converged) and coexistence at each parameter.
  for (int i = 0; i < n_par; ++i) {
    std::vector<double> f(n_start);
    std::vector<bool> ok(n_start);
    for (int k = 0; k < n_start; ++k) {
      const CurvePoint& p = out[k * n_par + i];
      ok[k] = p.converged;
      f[k] = p.converged ? model.free_energy(p) : std::numeric_limits<double>::quiet_NaN();
    }
    const int best = lowest_free_energy(f, ok);
    for (int k = 0; k < n_start; ++k) {
      CurvePoint& p = out[k * n_par + i];
      p.preferred = best == k;
      for (int kk = 0; kk < n_start && p.converged; ++kk)
        if (kk != k && ok[kk] && model.distinct(p, out[kk * n_par + i])) p.coexist = true;
    }
  }
  return out;
}

}  // namespace saddle
