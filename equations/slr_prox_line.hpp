// Pre-integration along one line of the channel draw (docs/equations/slr_replica.md §4.9): the
// expectation over x ~ N(0, 1) of a quantity of the GLOBAL minimiser of a family of problems
// that depends on x, where the global minimiser jumps between local minima at isolated x (ties of
// two local minima). The jumps are located (each local minimum followed by continuation, the tie
// a root of the difference of the two values) and every smooth piece between them is integrated
// by a Gauss rule, so the result is a continuous function of everything the line depends on.
//
// The rule is generic in the family (a "line problem"); equations/slr_replica_preint.cpp uses the
// proximal problem (S16) with omega_chi(x) = omega_0 + x a, tests/equations use a closed-form
// double well. A line problem P provides
//   using Point = ...;                        // a local minimiser at some x (P::x(pt) gives it)
//   Point global(double x);                   // the global minimiser at x
//   bool follow(Point& pt, double x_to);      // continuation of pt's branch to x_to; false at a
//                                             //   fold (the branch ends before x_to)
//   double value(const Point& pt);            // the objective at pt
//   double slope(const Point& a, const Point& b);  // d/dx [value(b) - value(a)] at a common x
//   bool same(const Point& a, const Point& b);     // the same minimiser (same x)
//   bool quick_same(const Point& a, const Point& b);  // a, b (global, adjacent nodes) surely on
//                                             //   one branch with no jump between (may say false)
//   double guess_tie(const Point& a, const Point& b);  // first guess of the tie (NaN: none)
//   static double x(const Point& pt);
//
// Rule (LineOptions): the global minimiser at the n Gauss-Hermite nodes; each node's minimiser is
// followed to the next node: when it arrives at the next node's global minimiser (or at a lower
// value, which then replaces it) the interval has no jump. Otherwise the tie is located by a
// safeguarded Newton iteration on D(x) = value(b) - value(a) between the branch a followed from
// the left node and b followed from the right node (dD/dx from slope()); a third branch that is
// lower at the tie splits the interval (recursively). Lines without jumps use the Gauss-Hermite
// nodes; lines with jumps are integrated piece by piece with Gauss-Legendre in u = Phi(x), about
// n nodes in all (each piece gets a share by its probability mass, at least 3).
// A branch that is global only inside one interval and not at its nodes (an excursion) is missed;
// by the monotonicity of a proximal minimiser along its own field (docs §4.9) such an excursion
// needs a branch that moves by more than the jump within one interval, which was not seen.
#pragma once
#include <algorithm>
#include <cmath>
#include <vector>

#include "equations/slr_replica_prox.hpp"
#include "integrators/quadrature.hpp"
#include "integrators/special.hpp"

namespace saddle {
namespace slr {
namespace replica {

struct LineOptions {
  int nodes = 16;          // Gauss-Hermite nodes (also the detection grid) and piece-rule budget
  int max_depth = 4;       // recursion depth of the tie search (third branches)
  int refine_depth = 4;    // detection: bisection of a doubtful node interval, levels
  double x_tol = 1e-11;    // bracket width at which a tie is accepted
  // The map's Jacobian (pre-integrated channel): true, the derivative of the J sums by a forward
  // difference of J at every node (exact to ~1e-7); false, the derivative of the weighted Stein
  // forms (S20'), (S21a) in their place (the same quantities in expectation, noisy).
  bool exact_jacobian = true;
  // Softmax L = 2: the exact rule from the convex hull of the line's 1-D objective
  // (build_line_rule_softmax2) instead of the generic search (build_line_rule).
  bool exact_softmax2 = true;
};

template <class Point>
struct LineNode {
  double x = 0, w = 0;  // node and weight (weights of a line sum to 1)
  Point pt;
};

template <class Point>
struct LineJump {
  double x = 0;        // tie point
  double density = 0;  // phi(x) / |dD/dx|: the weight of the surface delta delta(D) on this line
  double dDdx = 0;     // d/dx [value(after) - value(before)] (< 0)
  Point before, after;  // the global branch left and right of x, both at x
};

template <class Point>
struct LineRule {
  std::vector<LineNode<Point>> nodes;
  std::vector<LineJump<Point>> jumps;  // increasing x
  int global_solves = 0, follows = 0;
  bool unresolved = false;  // a tie search did not converge (the rule then uses its best bracket)
  void clear() {
    nodes.clear();
    jumps.clear();
    global_solves = follows = 0;
    unresolved = false;
  }
};

namespace line_detail {

template <class P>
struct TieSearch {
  P& prob;
  const LineOptions& opt;
  LineRule<typename P::Point>& rule;

  using Point = typename P::Point;

  typename P::Point global(double x) {
    ++rule.global_solves;
    return prob.global(x);
  }
  bool follow(Point& p, double x) {
    ++rule.follows;
    return prob.follow(p, x);
  }

  void refine(const Point& a, const Point& b, int depth) {
    if (prob.quick_same(a, b)) return;
    if (depth >= opt.refine_depth) {
      locate(a, b, 0);
      return;
    }
    const Point m = global(0.5 * (P::x(a) + P::x(b)));
    refine(a, m, depth + 1);
    refine(m, b, depth + 1);
  }

  // Ties between the global branch A (a point a of it at xa) and the global branch B (a point b
  // at xb > xa); appends the jumps in increasing x.
  void locate(Point a, Point b, int depth) {
    const Point a0 = a, b0 = b;  // where A and B are known to be global
    double lo = P::x(a), hi = P::x(b);
    double x = prob.guess_tie(a, b);
    if (!(x > lo && x < hi)) x = 0.5 * (lo + hi);
    Point ca = a, cb = b;
    bool done = false;
    for (int it = 0; it < 80; ++it) {
      Point ta = a, tb = b;
      const bool oka = follow(ta, x), okb = follow(tb, x);
      double xn;
      if (oka && okb) {
        const double D = prob.value(tb) - prob.value(ta);
        const double dD = prob.slope(ta, tb);
        if (D > 0) {
          lo = x;
          a = ta;
        } else {
          hi = x;
          b = tb;
        }
        xn = dD < 0 ? x - D / dD : 0.5 * (lo + hi);
        if (D == 0.0 || std::abs(xn - x) < opt.x_tol) {
          ca = ta;
          cb = tb;
          done = true;
          break;
        }
        if (!(xn > lo && xn < hi)) xn = 0.5 * (lo + hi);
      } else if (oka) {  // B not yet born at x: the tie is to the right
        lo = x;
        a = ta;
        xn = 0.5 * (lo + hi);
      } else if (okb) {  // A ended before x: the tie is to the left
        hi = x;
        b = tb;
        xn = 0.5 * (lo + hi);
      } else {
        // Neither branch at x: a third one is global in between.
        if (depth >= opt.max_depth) {
          rule.unresolved = true;
          return;
        }
        const Point c = global(x);
        locate(a0, c, depth + 1);
        locate(c, b0, depth + 1);
        return;
      }
      if (hi - lo < opt.x_tol) break;
      x = xn;
    }
    if (!done) {
      // The bracket collapsed without a converged Newton step: both branches at its middle.
      x = 0.5 * (lo + hi);
      ca = a;
      cb = b;
      if (!follow(ca, x) || !follow(cb, x)) {
        ca = a;  // a fold within x_tol of the tie: the two sides of the bracket
        cb = b;
        rule.unresolved = true;
      }
    } else {
      x = P::x(ca);
    }
    if (prob.same(ca, cb)) return;  // the two ends are one branch: no jump here
    // A third branch lower than both at the tie: two (or more) jumps in this bracket.
    const Point g = global(x);
    const double v = std::min(prob.value(ca), prob.value(cb));
    if (prob.value(g) < v - 1e-12 * (1.0 + std::abs(v)) && !prob.same(g, ca) && !prob.same(g, cb)) {
      if (depth >= opt.max_depth) {
        rule.unresolved = true;
        return;
      }
      locate(a0, g, depth + 1);
      locate(g, b0, depth + 1);
      return;
    }
    LineJump<Point> j;
    j.x = x;
    j.dDdx = prob.slope(ca, cb);
    j.density = norm_pdf(x) / std::max(std::abs(j.dDdx), 1e-300);
    j.before = ca;
    j.after = cb;
    rule.jumps.push_back(j);
  }
};

}  // namespace line_detail

// The nodes of a line with jumps (rule.jumps sorted): on each piece between them the Gauss rule
// of the normal density restricted to the piece (truncated_normal_rule: exact for polynomials of
// degree 2m - 1 on the piece, as Gauss-Hermite is on the whole line, so a jump that appears or
// vanishes changes the rule of a smooth integrand only at that order), m nodes by the piece's
// probability mass (at least 3, about opt.nodes in all); point(x) gives the piece's minimiser.
template <class Point, class F>
void add_piece_nodes(LineRule<Point>& rule, const LineOptions& opt, const F& point) {
  thread_local Rule1D tn;
  const int np = static_cast<int>(rule.jumps.size()) + 1;
  for (int k = 0; k < np; ++k) {
    const double a = k == 0 ? -INFINITY : rule.jumps[k - 1].x;
    const double b = k == np - 1 ? INFINITY : rule.jumps[k].x;
    // Probability mass of the piece, in the tail that keeps precision.
    const bool upper = a > 0;
    const double ua = upper ? norm_cdf(-a) : (k == 0 ? 0.0 : norm_cdf(a));
    const double ub = upper ? (k == np - 1 ? 0.0 : norm_cdf(-b)) : (k == np - 1 ? 1.0 : norm_cdf(b));
    const double mass = upper ? ua - ub : ub - ua;
    if (!(mass > 0)) continue;
    const int m = std::max(3, std::min(opt.nodes, static_cast<int>(std::ceil(opt.nodes * mass)) + 2));
    truncated_normal_rule(a, b, m, tn);
    for (int i = 0; i < m; ++i) {
      if (!(tn.w[i] > 0)) continue;
      LineNode<Point> nd;
      nd.x = std::min(std::max(tn.x[i], std::isfinite(a) ? a : -40.0), std::isfinite(b) ? b : 40.0);
      nd.w = tn.w[i];
      nd.pt = point(nd.x);
      rule.nodes.push_back(nd);
    }
  }
}

// Builds the pre-integration rule of one line (see the file comment). `rule` is cleared first;
// its vectors keep their capacity, so a rule reused across lines does not allocate.
template <class P>
void build_line_rule(P& prob, const LineOptions& opt, LineRule<typename P::Point>& rule) {
  using Point = typename P::Point;
  rule.clear();
  const Rule1D& gh = gauss_hermite(std::max(2, opt.nodes));
  const int n = gh.size();
  for (int i = 0; i < n; ++i) {
    LineNode<Point> nd;
    nd.x = gh.x[i];
    nd.w = gh.w[i];
    nd.pt = prob.global(nd.x);
    ++rule.global_solves;
    rule.nodes.push_back(nd);
  }
  line_detail::TieSearch<P> ts{prob, opt, rule};
  // Detection: adjacent nodes whose minimisers are not surely one smooth branch (quick_same) are
  // bisected with global solves down to 1/2^refine_depth of the node spacing; the intervals still
  // in doubt go to the tie search (which finds no jump when the two ends are one branch).
  for (int i = 0; i + 1 < n; ++i) ts.refine(rule.nodes[i].pt, rule.nodes[i + 1].pt, 0);
  if (rule.jumps.empty()) return;
  std::sort(rule.jumps.begin(), rule.jumps.end(),
            [](const LineJump<Point>& a, const LineJump<Point>& b) { return a.x < b.x; });
  rule.nodes.clear();
  add_piece_nodes(rule, opt, [&](double x) {
    // The piece's branch: the global minimiser at the node (the pieces are where it is one branch).
    ++rule.global_solves;
    return prob.global(x);
  });
}


// ---- The proximal problem (S16) along a line of key fields: omega_chi(x) = omega_0 + x a. ----
// Along the line (S17) changes by a linear tilt in chi (plus a constant), so its local minima are
// followed by natural-parameter continuation: predictor dchi/dx = Hphi^-1 a / V_k (differentiate
// grad Phi = 0), corrector plain Newton on Phi, the step halved until the corrector converges
// close to the predictor at a positive-definite Hphi; a branch ends (fold) when the step falls
// below 1e-10.
template <int L>
struct ProxPoint {
  double x = 0;
  ProxResult<L> pr;    // pr.chi and pr.objective always; the rest only when `full`
  bool full = false;   // pr complete (from the global solve or prox_result)
};

template <int L>
struct ProxLine {
  using Point = ProxPoint<L>;
  ProxAct act;
  const ProxOptions& opt;
  ProxInput<L> in0;  // fields at x = 0
  VecL<L> a;         // d omega_chi / dx

  ProxLine(ProxAct act_, const ProxOptions& opt_, const ProxInput<L>& in0_, const VecL<L>& a_)
      : act(act_), opt(opt_), in0(in0_), a(a_) {}

  ProxInput<L> at(double x) const {
    ProxInput<L> in = in0;
    in.omega_chi += x * a;
    return in;
  }
  static double x(const Point& p) { return p.x; }
  Point global(double x) const {
    Point p;
    p.x = x;
    // the minimiser and its value only: the channel quantities are formed once per node
    // (node_eval in equations/slr_replica_draw.hpp) or by result()
    solve_prox_min<L>(act, at(x), opt, p.pr.chi, p.pr.objective);
    p.full = false;
    return p;
  }
  double value(const Point& p) const { return p.pr.objective; }
  // d/dx [Phi(b) - Phi(a)] = -(g_b - g_a).a, g = (chi - omega)/V_k (envelope theorem).
  double slope(const Point& pa, const Point& pb) const {
    return -(pb.pr.chi - pa.pr.chi).dot(a) / in0.V_k;
  }
  bool same(const Point& pa, const Point& pb) const {
    const double sc = 1.0 + std::max(pa.pr.chi.cwiseAbs().maxCoeff(), pb.pr.chi.cwiseAbs().maxCoeff());
    return (pa.pr.chi - pb.pr.chi).cwiseAbs().maxCoeff() <= 1e-6 * sc;
  }
  // Plain Newton on Phi from chi at input `in`; true when it converged to a local minimum.
  bool correct(const ProxInput<L>& in, VecL<L>& chi, PhiDerivs<L>& d) const {
    for (int k = 0; k < 10; ++k) {
      phi_derivs<L>(act, in, chi, d);
      if (!d.grad.allFinite()) return false;
      const VecL<L> dx = d.Hphi.partialPivLu().solve(d.grad);
      if (!dx.allFinite()) return false;
      chi -= dx;
      if (d.grad.cwiseAbs().maxCoeff() < opt.grad_tol ||
          dx.cwiseAbs().maxCoeff() < 1e-13 * (1.0 + chi.cwiseAbs().maxCoeff())) {
        phi_derivs<L>(act, in, chi, d);
        Eigen::LLT<Eigen::Matrix<double, L, L>> llt(d.Hphi);
        return llt.info() == Eigen::Success;
      }
    }
    return false;
  }
  // dPhi/dx along a branch at (x, chi): -(chi - omega(x)).a / V_k (envelope theorem).
  double dphi_dx(double x, const VecL<L>& chi) const {
    return -(chi - in0.omega_chi - x * a).dot(a) / in0.V_k;
  }
  // Continuation steps are accepted when (i) the corrector converges to a minimum within a
  // quarter of the predicted move from the predictor, (ii) the predicted move is at most
  // kMaxMove, and (iii) the value agrees with the trapezoid rule on dPhi/dx within a tenth of
  // the change of slope: a step that lands on another local minimum (across a fold) fails (iii)
  // unless the two values agree by coincidence, and (i)-(ii) keep such steps short.
  static constexpr double kMaxMove = 0.25;
  double max_move = kMaxMove;  // (ii); the detection's first try uses no cap
  bool follow(Point& p, double x_to) const {
    if (x_to == p.x) return true;
    VecL<L> chi = p.pr.chi;
    double x = p.x;
    double F = p.pr.objective, dF = dphi_dx(x, chi);
    PhiDerivs<L> d, d2;
    phi_derivs<L>(act, at(x), chi, d);
    double h = x_to - x;
    const double hmin = 1e-7 * (1.0 + std::abs(x_to));
    for (int it = 0; it < 200; ++it) {
      const double rest = x_to - x;
      const VecL<L> t = d.Hphi.partialPivLu().solve(a / in0.V_k);
      if (!t.allFinite()) return false;
      const double tn = t.cwiseAbs().maxCoeff();
      double step = std::abs(h) >= std::abs(rest) ? rest : h;
      if (std::abs(step) * tn > max_move) step = std::copysign(max_move / tn, step);
      const bool last = step == rest;
      const double xn = last ? x_to : x + step;
      const VecL<L> pred = chi + step * t;
      VecL<L> c = pred;
      const ProxInput<L> in2 = at(xn);
      const double move = std::abs(step) * tn;
      bool ok = correct(in2, c, d2) &&
                (c - pred).cwiseAbs().maxCoeff() <= 0.25 * move + 1e-9 * (1.0 + c.cwiseAbs().maxCoeff());
      double Fn = 0, dFn = 0;
      if (ok) {
        Fn = reduced_phi<L>(act, in2, c);
        dFn = dphi_dx(xn, c);
        const double err = std::abs(Fn - F - 0.5 * step * (dF + dFn));
        ok = err <= 0.1 * std::abs(step) * std::abs(dFn - dF) + 1e-11 * (1.0 + std::abs(F));
      }
      if (ok) {
        x = xn;
        chi = c;
        d = d2;
        F = Fn;
        dF = dFn;
        if (last) {
          p.x = x_to;
          p.pr.chi = chi;
          p.pr.objective = Fn;
          p.full = false;
          return true;
        }
        h = 1.5 * step;
      } else {
        h = 0.5 * step;
        if (std::abs(h) < hmin) return false;
      }
    }
    return false;
  }
  // A first guess of the tie between the branch of pa (at xa) and that of pb (at xb > xa): where
  // the second-order models of the two values in x cross (NaN: no crossing inside).
  double guess_tie(const Point& pa, const Point& pb) const {
    PhiDerivs<L> d;
    phi_derivs<L>(act, at(pa.x), pa.pr.chi, d);
    const VecL<L> ta = d.Hphi.partialPivLu().solve(a / in0.V_k);
    phi_derivs<L>(act, at(pb.x), pb.pr.chi, d);
    const VecL<L> tb = d.Hphi.partialPivLu().solve(a / in0.V_k);
    const double da = dphi_dx(pa.x, pa.pr.chi), db = dphi_dx(pb.x, pb.pr.chi);
    const double d2a = (a.squaredNorm() - ta.dot(a)) / in0.V_k, d2b = (a.squaredNorm() - tb.dot(a)) / in0.V_k;
    // D(x) = Phi_b(x) - Phi_a(x) with each value expanded about its own node.
    auto D = [&](double x) {
      const double ua = x - pa.x, ub = x - pb.x;
      return (pb.pr.objective + ub * db + 0.5 * ub * ub * d2b) - (pa.pr.objective + ua * da + 0.5 * ua * ua * d2a);
    };
    double lo = pa.x, hi = pb.x, Dlo = D(lo), Dhi = D(hi);
    if (!(Dlo > 0 && Dhi < 0)) return NAN;
    for (int it = 0; it < 60; ++it) {  // bisection on the model (cheap)
      const double m = 0.5 * (lo + hi), Dm = D(m);
      if (Dm > 0) lo = m; else hi = m;
    }
    return 0.5 * (lo + hi);
  }
  // Cheap test that two global minimisers at adjacent nodes lie on one smooth branch with no jump
  // between: each is predicted from the other by its tangent within a quarter of the predicted
  // move, and the values agree with the trapezoid rule on dPhi/dx within a tenth of the change of
  // slope (as in follow(), for one step with no cap on the move). False means "not sure".
  bool quick_same(const Point& pa, const Point& pb) const {
    PhiDerivs<L> d;
    phi_derivs<L>(act, at(pa.x), pa.pr.chi, d);
    const VecL<L> ta = d.Hphi.partialPivLu().solve(a / in0.V_k);
    phi_derivs<L>(act, at(pb.x), pb.pr.chi, d);
    const VecL<L> tb = d.Hphi.partialPivLu().solve(a / in0.V_k);
    if (!ta.allFinite() || !tb.allFinite()) return false;
    const double h = pb.x - pa.x;
    const double sc = 1e-9 * (1.0 + pb.pr.chi.cwiseAbs().maxCoeff());
    // chi: trapezoid on the tangents
    const double ec = (pb.pr.chi - pa.pr.chi - 0.5 * h * (ta + tb)).cwiseAbs().maxCoeff();
    if (ec > 0.25 * std::abs(h) * std::max(ta.cwiseAbs().maxCoeff(), tb.cwiseAbs().maxCoeff()) + sc) {
      return false;
    }
    // value: the cubic Hermite interpolant of (Phi, dPhi/dx) at both ends must reproduce the
    // curvature Phi'' = (|a|^2 - t.a)/V_k at both ends (a kink of the value, i.e. a jump of the
    // minimiser, shows as a curvature (slope jump)/h that the ends do not have).
    const double da = dphi_dx(pa.x, pa.pr.chi), db = dphi_dx(pb.x, pb.pr.chi);
    const double d2a = (a.squaredNorm() - ta.dot(a)) / in0.V_k, d2b = (a.squaredNorm() - tb.dot(a)) / in0.V_k;
    const double dF = (pb.pr.objective - pa.pr.objective) / h;
    const double p2a = (6.0 * dF - 4.0 * da - 2.0 * db) / h, p2b = (-6.0 * dF + 2.0 * da + 4.0 * db) / h;
    const double tol = 0.25 * (std::abs(d2a) + std::abs(d2b)) + 1e-9 * (1.0 + std::abs(da) + std::abs(db)) / std::abs(h);
    if (std::abs(p2a - d2a) > tol || std::abs(p2b - d2b) > tol) {
      return false;
    }
    return true;
  }
  // The complete channel quantities of a point.
  ProxResult<L> result(const Point& p) const {
    return p.full ? p.pr : prox_result<L>(act, at(p.x), p.pr.chi, p.pr.objective);
  }
};

// ---- Softmax with L = 2: the exact line rule (docs/equations/slr_replica.md §4.9, "L = 2"). ----
// The key fields move along e = h = (1, -1)/sqrt 2, the Helmert direction itself, so their Helmert
// coordinate is w(x) = w0 + c x and the minimiser's is t(x) = argmin_t H(t) - t w(x)/V_k, with
// H(t) = ell(t) + t^2/(2 V_k) (Softmax2 with t0 = 0; ell does not depend on x). So t(x) is the
// inverse of H' on the lower convex hull of H: where H is convex it solves H'(t) = w/V_k (H'
// increasing), and it jumps from t_L to t_R where w/V_k crosses the slope of a bitangent of the
// hull, the common tangent at t_L < t_R across a region where H'' < 0. The rule needs no global
// search: the regions H'' < 0 are found on a grid of t (with the minima of H'' refined, so a dip
// between grid points is not missed), each bitangent by the Maxwell construction (equal values of
// H - sigma t on the two convex branches, bisection in the slope sigma), bitangents that overlap
// merged, and every node by a bracketed Newton iteration on H'(t) = w/V_k on its convex piece.
struct Softmax2Hull {
  Softmax2 H;  // t0 = 0: value() = H(t)
  double vk;
  struct Edge {
    double tL, tR, sigma;  // the bitangent: tangent points and slope
  };
  std::vector<Edge> edges;  // increasing slope (and t)

  explicit Softmax2Hull(const ProxInput<2>& in) : H(in), vk(in.V_k) { H.t0 = 0.0; }

  double d1(double t) const {
    double F, F1, F2;
    H.derivs(t, F, F1, F2);
    return F1;
  }
  double d2(double t) const {
    double F, F1, F2;
    H.derivs(t, F, F1, F2);
    return F2;
  }
  // Solves H'(t) = sigma for t in [lo, hi] where H' is increasing (H convex), H'(lo) <= sigma <=
  // H'(hi): Newton steps kept inside the bracket, bisection otherwise.
  double solve_slope(double sigma, double lo, double hi, double t = NAN) const {
    if (!(t > lo && t < hi)) t = 0.5 * (lo + hi);
    for (int it = 0; it < 100; ++it) {
      double F, F1, F2;
      H.derivs(t, F, F1, F2);
      const double g = F1 - sigma;
      if (g > 0) hi = t; else lo = t;
      double tn = F2 > 0 ? t - g / F2 : 0.5 * (lo + hi);
      if (!(tn > lo && tn < hi)) tn = 0.5 * (lo + hi);
      if (std::abs(tn - t) <= 1e-13 * (1.0 + std::abs(t)) || hi - lo <= 1e-13 * (1.0 + std::abs(t))) return tn;
      t = tn;
    }
    return t;
  }
  // An interval [lo, hi] around the convex piece (a, b) (a may be -inf, b +inf) that brackets
  // H'(t) = sigma.
  void bracket(double sigma, double a, double b, double& lo, double& hi) const {
    // H'(t) = t/V_k + ell'(t) with ell' bounded: widen by doubling until it brackets
    lo = std::isfinite(a) ? a : (std::isfinite(b) ? b : 0.0) - 1.0;
    hi = std::isfinite(b) ? b : (std::isfinite(a) ? a : 0.0) + 1.0;
    double step = 1.0;
    for (int k = 0; k < 200 && !std::isfinite(a) && d1(lo) > sigma; ++k, step *= 2.0) lo -= step;
    step = 1.0;
    for (int k = 0; k < 200 && !std::isfinite(b) && d1(hi) < sigma; ++k, step *= 2.0) hi += step;
  }
  // The minimiser for slope sigma = w/V_k: on the convex piece between the edges around sigma
  // (guess: a first Newton iterate, e.g. the previous node's minimiser).
  double argmin(double sigma, double guess = NAN) const {
    std::size_t k = 0;
    while (k < edges.size() && edges[k].sigma < sigma) ++k;
    const double a = k == 0 ? -INFINITY : edges[k - 1].tR;
    const double b = k == edges.size() ? INFINITY : edges[k].tL;
    double lo, hi;
    if (std::isfinite(guess) && guess >= a && guess <= b) {
      // a bracket around the guess: step out by doubling where the piece is unbounded
      const double g = d1(guess) - sigma;
      lo = g > 0 ? (std::isfinite(a) ? a : guess) : guess;
      hi = g > 0 ? guess : (std::isfinite(b) ? b : guess);
      double step = 1.0;
      for (int k2 = 0; k2 < 200 && !std::isfinite(a) && g > 0 && d1(lo) > sigma; ++k2, step *= 2.0) lo -= step;
      step = 1.0;
      for (int k2 = 0; k2 < 200 && !std::isfinite(b) && g <= 0 && d1(hi) < sigma; ++k2, step *= 2.0) hi += step;
      return solve_slope(sigma, lo, hi, guess);
    }
    bracket(sigma, a, b, lo, hi);
    return solve_slope(sigma, lo, hi);
  }
  // The bitangent across the non-convex stretch [a, b] with convex branches (pa, a] and [b, pb):
  // sigma with equal minima of H - sigma t on both branches (D(sigma) decreasing in sigma).
  bool bitangent(double a, double b, double pa, double pb, Edge& e) const {
    // both branch minima exist for sigma in [max(H'(b), H'(pa)), min(H'(a), H'(pb))]
    double s_lo = d1(b), s_hi = d1(a);
    if (std::isfinite(pa)) s_lo = std::max(s_lo, d1(pa));
    if (std::isfinite(pb)) s_hi = std::min(s_hi, d1(pb));
    if (!(s_hi > s_lo)) return false;
    // D(sigma) = min of H - sigma t on the right branch minus that on the left, decreasing
    // (D' = -(t_R - t_L)): Newton in sigma kept inside the bracket, bisection otherwise
    double tL = NAN, tR = NAN, sg = 0.5 * (s_lo + s_hi);
    for (int it = 0; it < 100; ++it) {
      double lo, hi;
      bracket(sg, pa, a, lo, hi);
      tL = solve_slope(sg, lo, hi, tL);
      bracket(sg, b, pb, lo, hi);
      tR = solve_slope(sg, lo, hi, tR);
      const double D = (H.value(tR) - sg * tR) - (H.value(tL) - sg * tL);
      if (D > 0) s_lo = sg; else s_hi = sg;
      double sn = tR > tL ? sg + D / (tR - tL) : 0.5 * (s_lo + s_hi);
      if (!(sn > s_lo && sn < s_hi)) sn = 0.5 * (s_lo + s_hi);
      const bool done = std::abs(sn - sg) <= 1e-14 * (1.0 + std::abs(sg)) || s_hi - s_lo <= 1e-14 * (1.0 + std::abs(sg));
      sg = sn;
      if (done) break;
    }
    s_lo = s_hi = sg;
    e.sigma = 0.5 * (s_lo + s_hi);
    e.tL = tL;
    e.tR = tR;
    return true;
  }
  void build() {
    edges.clear();
    // H'' on a grid; its local minima refined by golden section (a dip thinner than the grid).
    constexpr int n = 49;
    constexpr double T = 8.0, dt = 2.0 * T / (n - 1);
    double h2[n];
    for (int i = 0; i < n; ++i) h2[i] = d2(-T + dt * i);
    std::vector<std::pair<double, double>> neg;  // maximal intervals with H'' < 0
    auto zero = [&](double lo, double hi) {  // H''(lo) and H''(hi) of opposite signs
      const bool lo_neg = d2(lo) < 0;
      for (int it = 0; it < 44; ++it) {
        const double m = 0.5 * (lo + hi);
        if ((d2(m) < 0) == lo_neg) lo = m; else hi = m;
      }
      return 0.5 * (lo + hi);
    };
    double start = NAN;
    for (int i = 0; i < n; ++i) {
      const double t = -T + dt * i;
      if (h2[i] < 0) {
        if (std::isnan(start)) start = i == 0 ? -T : zero(t - dt, t);
        continue;
      }
      if (!std::isnan(start)) {
        neg.push_back({start, zero(t - dt, t)});
        start = NAN;
      }
      // a grid minimum of H'' that stays positive: look between its neighbours
      if (i > 0 && i + 1 < n && h2[i] <= h2[i - 1] && h2[i] <= h2[i + 1]) {
        double lo = t - dt, hi = t + dt;
        constexpr double g = 0.6180339887498949;
        double c1 = hi - g * (hi - lo), c2 = lo + g * (hi - lo), f1 = d2(c1), f2 = d2(c2);
        for (int it = 0; it < 24; ++it) {
          if (f1 < f2) { hi = c2; c2 = c1; f2 = f1; c1 = hi - g * (hi - lo); f1 = d2(c1); }
          else { lo = c1; c1 = c2; f1 = f2; c2 = lo + g * (hi - lo); f2 = d2(c2); }
        }
        const double tm = 0.5 * (lo + hi);
        if (d2(tm) < 0) neg.push_back({zero(t - dt, tm), zero(tm, t + dt)});
      }
    }
    if (!std::isnan(start)) neg.push_back({start, T});
    std::sort(neg.begin(), neg.end());
    // bitangents, one per group of non-convex stretches whose hull edge spans them all: a group
    // grows forward while its edge reaches past the next stretch, and absorbs the previous group
    // while its edge starts inside that group's edge
    struct Group {
      std::size_t first, last;
      Edge e;
    };
    std::vector<Group> gs;
    auto compute = [&](Group& g) {
      const double pa = g.first == 0 ? -INFINITY : neg[g.first - 1].second;
      const double pb = g.last + 1 == neg.size() ? INFINITY : neg[g.last + 1].first;
      return bitangent(neg[g.first].first, neg[g.last].second, pa, pb, g.e);
    };
    std::size_t i = 0;
    while (i < neg.size()) {
      Group g{i, i, Edge{}};
      bool ok = compute(g);
      while (ok) {
        if (g.last + 1 < neg.size() && g.e.tR > neg[g.last + 1].first) {
          ++g.last;
        } else if (!gs.empty() && g.e.tL < gs.back().e.tR) {
          g.first = gs.back().first;
          gs.pop_back();
        } else {
          break;
        }
        ok = compute(g);
      }
      if (ok) gs.push_back(g);
      i = g.last + 1;
    }
    for (const Group& g : gs) edges.push_back(g.e);
  }
};

// The rule of one line for softmax L = 2 (same layout as build_line_rule): Gauss-Hermite nodes when
// the hull has no edge, else pieces between the jumps with Gauss-Legendre in u = Phi(x). omega0:
// the key fields at x = 0, c: d w/dx.
inline void build_line_rule_softmax2(const ProxInput<2>& in0, double c, const LineOptions& opt,
                                     LineRule<ProxPoint<2>>& rule) {
  rule.clear();
  Softmax2Hull hull(in0);
  hull.build();
  const double w0 = (in0.omega_chi(0) - in0.omega_chi(1)) * 0.7071067811865476;
  const double mean = 0.5 * (in0.omega_chi(0) + in0.omega_chi(1));
  const double vk = in0.V_k;
  double prev_t = NAN;  // nodes come in increasing x: the previous minimiser is a first guess
  auto point = [&](double x) {
    ProxPoint<2> p;
    p.x = x;
    const double w = w0 + c * x;
    const double t = hull.argmin(w / vk, prev_t);
    prev_t = t;
    p.pr.chi << mean + 0.7071067811865476 * t, mean - 0.7071067811865476 * t;
    p.pr.objective = hull.H.value(t) - t * w / vk + 0.5 * w * w / vk;
    p.full = false;
    return p;
  };
  auto at_t = [&](double x, double t) {
    ProxPoint<2> p;
    p.x = x;
    const double w = w0 + c * x;
    p.pr.chi << mean + 0.7071067811865476 * t, mean - 0.7071067811865476 * t;
    p.pr.objective = hull.H.value(t) - t * w / vk + 0.5 * w * w / vk;
    p.full = false;
    return p;
  };
  for (const auto& e : hull.edges) {
    if (!(c > 0)) break;
    LineJump<ProxPoint<2>> j;
    j.x = (vk * e.sigma - w0) / c;
    if (!(std::abs(j.x) < 40.0)) continue;  // beyond any node: no mass
    j.dDdx = -c * (e.tR - e.tL) / vk;  // D_x = -[g].a, [g] = (t_R - t_L) h / V_k, a = c h
    j.density = norm_pdf(j.x) / std::max(std::abs(j.dDdx), 1e-300);
    j.before = at_t(j.x, e.tL);
    j.after = at_t(j.x, e.tR);
    rule.jumps.push_back(j);
  }
  if (rule.jumps.empty()) {
    const Rule1D& gh = gauss_hermite(std::max(2, opt.nodes));
    for (int i = 0; i < gh.size(); ++i) {
      LineNode<ProxPoint<2>> nd;
      nd.x = gh.x[i];
      nd.w = gh.w[i];
      nd.pt = point(nd.x);
      rule.nodes.push_back(nd);
    }
    return;
  }
  add_piece_nodes(rule, opt, point);
}

}  // namespace replica
}  // namespace slr
}  // namespace saddle
