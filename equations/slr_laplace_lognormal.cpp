// Laplace factors of a log-normal variable in log form (docs/equations/slr_population.md §7b; see
// equations/slr_laplace_lognormal.hpp). Two representations of the same Gaussian average:
//   x-representation (s <= 2): F = int phi(x) g(c + s x) dx, the Gaussian variable itself;
//   w-representation (s > 2): exp(-e^Y) = P(W > Y) for W = log E, E ~ Exp(1), whose density is
//     G(w) = e^{w - e^w}, so F_k = int G(w) E[e^{kY} 1{Y < w}] dw and C = int G(w) P(Y > w) dw;
//     the inner Gaussian averages are closed forms (log Phi and the Mills ratio, squares completed
//     so that nothing cancels), and G confines w to about [-40, 4] whatever c and s are.
// Both integrands are log-concave; each value is a trapezoid sum on the lattice through its peak
// (found by safeguarded Newton), with the step set by the curvature there, summed outward until the
// integrand falls below e^{-tail} of the peak.
#include "equations/slr_laplace_lognormal.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace saddle {
namespace slr {
namespace detail {

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kHalfLog2Pi = 0.91893853320467274178;
constexpr double kInvSqrt2 = 0.70710678118654752440;
constexpr double kSplit = 2.0;  // s <= kSplit: x-representation

// M(a) = Phi(-a)/phi(a) = (1/a) S(a) for a >= 26, S = 1 - z + 3 z^2 - ..., z = 1/a^2 (the next
// term is below 3e-15 there).
double mills_series(double a) {
  const double z = 1.0 / (a * a);
  return 1.0 + z * (-1.0 + z * (3.0 + z * (-15.0 + z * (105.0 + z * (-945.0 + z * 10395.0)))));
}
// log M(a), a >= 0.
double log_mills(double a) {
  if (a < 26.0) return log_phi_upper(a) + 0.5 * a * a + kHalfLog2Pi;
  return -std::log(a) + std::log(mills_series(a));
}
// inv_mills(a) - a, accurately for large a (the curvature of log Phi(-a) is -inv (inv - a)).
double inv_mills_minus_a(double a) {
  if (a < 26.0) return inv_mills(a) - a;
  const double S = mills_series(a);
  return a * (1.0 - S) / S;
}

// log(1 - e^{-v}), v = e^y, and its first two derivatives in y.
void log_one_minus(double y, double& f, double& d1, double& d2) {
  if (y < -30.0) {
    const double v = std::exp(y);
    f = y + std::log1p(-0.5 * v);
    d1 = 1.0 - 0.5 * v;
    d2 = -0.5 * v;
    return;
  }
  const double v = std::exp(y);
  if (v > 700.0) {  // 1 - e^{-v} = 1 to double precision
    f = 0.0;
    d1 = d2 = 0.0;
    return;
  }
  const double em1 = std::expm1(v);  // e^v - 1
  f = std::log(-std::expm1(-v));
  const double r = v / em1;  // d/dy
  const double rp = (em1 - v * (em1 + 1.0)) / (em1 * em1);
  d1 = r;
  d2 = v * rp;
}

// One value: F_k (k >= 0) or C (k = -1) at (c, s), as log of a concave-log integral.
struct Integrand {
  int k;
  double c, s;
  bool wrep;
  // H and its derivatives in the integration variable
  double operator()(double t, double& d1, double& d2) const {
    if (!wrep) {  // x: -x^2/2 + log g(c + s x)
      const double y = c + s * t;
      double f, g1, g2;
      if (k < 0) {
        log_one_minus(y, f, g1, g2);
      } else {
        const double ey = std::exp(y);
        f = k * y - ey;
        g1 = k - ey;
        g2 = -ey;
      }
      d1 = -t + s * g1;
      d2 = -1.0 + s * s * g2;
      return -0.5 * t * t + f;
    }
    // w: w - e^w + l(w)
    const double ew = std::exp(t);
    double l1, l2;
    const double l = ell(t, &l1, &l2);
    d1 = 1.0 - ew + l1;
    d2 = -ew + std::min(l2, 0.0);
    return t - ew + l;
  }
  // H alone (the trapezoid sum needs no derivatives)
  double value(double t) const {
    if (!wrep) {
      const double y = c + s * t;
      if (k >= 0) return -0.5 * t * t + k * y - std::exp(y);
      double f, g1, g2;
      log_one_minus(y, f, g1, g2);
      return -0.5 * t * t + f;
    }
    return t - std::exp(t) + ell(t, nullptr, nullptr);
  }
  // w-representation: l(w) = log P(Y > w) (C) or log E[e^{kY} 1{Y < w}] (F_k), and optionally
  // its first two derivatives
  double ell(double w, double* l1, double* l2) const {
    const double a = k < 0 ? (w - c) / s : (c + k * s * s - w) / s;
    double l;
    if (k < 0 || a <= 0.0)
      l = (k < 0 ? 0.0 : k * c + 0.5 * k * k * s * s) + log_phi_upper(a);
    else  // the square completed: k c + k^2 s^2/2 - a^2/2 = k w - (w - c)^2/(2 s^2)
      l = k * w - 0.5 * (w - c) * (w - c) / (s * s) - kHalfLog2Pi + log_mills(a);
    if (l1) {
      const double inv = inv_mills(a);
      *l1 = (k < 0 ? -inv : inv) / s;
      *l2 = -inv * inv_mills_minus_a(a) / (s * s);
    }
    return l;
  }
};

double log_integral(const Integrand& H, const PopulationAccuracy& acc) {
  // ---- peak of the concave H by Newton, safeguarded by a bracket [lo, hi] and step caps
  double x = H.wrep ? 0.0 : std::min(0.0, -H.c / H.s);  // y = 0: the cut of e^{-e^y}
  double lo = -std::numeric_limits<double>::infinity(), hi = -lo;
  double expand = H.wrep ? 4.0 : 1.0;
  double d1 = 0, d2 = -1;
  double hx = H(x, d1, d2);
  double dx_old = std::numeric_limits<double>::infinity();
  for (int it = 0; it < 400; ++it) {
    double xn;
    if (!std::isfinite(d1) || !std::isfinite(hx)) {  // beyond the cut: H = -inf to the right
      hi = x;
      xn = std::isfinite(lo) ? 0.5 * (lo + hi) : x - expand;
      expand *= 2.0;
    } else {
      if (d1 > 0) lo = x; else hi = x;
      const double width = 1.0 / std::sqrt(std::max(-d2, 1e-300));
      xn = (d2 < 0) ? x - d1 / d2 : kNaN;
      const bool bracketed = std::isfinite(lo) && std::isfinite(hi);
      // bisect when Newton leaves the bracket or does not halve the step (rtsafe)
      if (!(xn > lo && xn < hi) || (bracketed && std::abs(xn - x) > 0.5 * dx_old)) {
        if (bracketed) {
          xn = 0.5 * (lo + hi);
        } else {
          xn = d1 > 0 ? x + expand : x - expand;
          expand *= 2.0;
        }
      }
      if (std::abs(xn - x) < 1e-3 * width || (bracketed && hi - lo < 1e-3 * width)) break;
      dx_old = std::abs(xn - x);
    }
    x = xn;
    hx = H(x, d1, d2);
  }
  if (!std::isfinite(hx)) return kNegInf;  // the integrand is 0 to double precision
  // ---- trapezoid on the lattice through the peak
  const double hmax = H.wrep ? std::min(acc.steep, acc.h_x * H.s) : std::min(acc.h_x, acc.steep / H.s);
  const double h = std::min(hmax, acc.steep / std::sqrt(std::max(-d2, 1e-300)));
  const double ref = hx;
  double sum = 1.0;
  int n = 0;
  for (int dir = -1; dir <= 1; dir += 2)
    for (int j = 1;; ++j) {
      const double v = H.value(x + dir * j * h) - ref;
      if (!(v > -acc.tail)) break;  // concave: every later term is smaller
      sum += std::exp(v);
      if (++n > 200000) throw std::logic_error("log_laplace: integration window does not close");
    }
  return ref + std::log(sum * h);
}

double value(int k, double c, double s, const PopulationAccuracy& acc) {
  if (s == 0.0) {  // no average
    if (k < 0) {
      double f, a, b;
      log_one_minus(c, f, a, b);
      return f;
    }
    return k * c - std::exp(c);
  }
  Integrand H{k, c, s, s > kSplit};
  const double v = log_integral(H, acc);
  // x-representation: the Gaussian weight's normalisation
  return H.wrep ? v : v - kHalfLog2Pi;
}

}  // namespace

double log_phi_upper(double a) {
  if (a < 26.0) return std::log(0.5 * std::erfc(a * kInvSqrt2));
  return -0.5 * a * a - kHalfLog2Pi - std::log(a) + std::log(mills_series(a));
}

double inv_mills(double a) {
  if (a < -38.0) return 0.0;  // phi(a) underflows while Phi(-a) = 1
  if (a < 26.0) return norm_pdf(a) / (0.5 * std::erfc(a * kInvSqrt2));
  return a / mills_series(a);
}

LogLaplace log_laplace(double c, double s, unsigned what, const PopulationAccuracy& acc) {
  LogLaplace r{kNaN, kNaN, kNaN, kNaN, kNaN};
  if (what & kLapF0) r.lF0 = value(0, c, s, acc);
  if (what & kLapC0) r.lC0 = value(-1, c, s, acc);
  if (what & kLapF1) r.lF1 = value(1, c, s, acc);
  if (what & kLapF2) r.lF2 = value(2, c, s, acc);
  if (what & kLapF3) r.lF3 = value(3, c, s, acc);
  return r;
}

double log_laplace_L0(double c, double s, const PopulationAccuracy& acc) {
  // F_0 > 1/2 roughly where the median c of Y is below 0 (then C is the small one)
  if (c < 0.0) {
    const double lc = value(-1, c, s, acc);
    if (lc < -0.6931471805599453) return std::log1p(-std::exp(lc));
  }
  const double lf = value(0, c, s, acc);
  if (lf > -0.6931471805599453) return std::log1p(-std::exp(value(-1, c, s, acc)));
  return lf;
}

LapTable laplace_table_lognormal(double mu, double q, const Grid& tau,
                                 const PopulationAccuracy& acc) {
  const double s = std::sqrt(q);
  LapTable T(tau.n);
  for (int i = 0; i < tau.n; ++i) {
    const double c = tau.at(i) + mu;
    T.logL0[i] = log_laplace_L0(c, s, acc);
    T.cL0[i] = -std::expm1(T.logL0[i]);
    T.tL1[i] = std::exp(value(1, c, s, acc));
    T.t2L2[i] = std::exp(value(2, c, s, acc));
  }
  return T;
}

LogLaplaceTable::LogLaplaceTable(double sigma, const PopulationAccuracy& acc) : sigma_(sigma) {
  if (!(sigma > 0.0)) throw std::logic_error("LogLaplaceTable: sigma must be > 0");
  constexpr double kLogTiny = -48.35;  // log(1e-21)
  // 1 - F_0 <= min(e^{s + sigma^2/2}, e^{s + sigma x_tail} + P(X > x_tail)); F_1 likewise;
  // F_0, F_1 <= e^{-e^{s - sigma x_tail}} (x 56) + P(X < -x_tail)
  lo_ = kLogTiny - std::min(0.5 * sigma * sigma, sigma * acc.x_tail) - 1.0;
  hi_ = sigma * acc.x_tail + std::log(56.0) + 1.0;
  grid_ = make_grid(lo_, hi_, 0.05 * std::max(1.0, sigma) * acc.h_x / 0.1);
  for (auto& fk : f_)
    for (auto& v : fk) v.resize(grid_.n);
  for (int i = 0; i < grid_.n; ++i) {
    const double s = grid_.at(i);
    const LogLaplace r = log_laplace(s, sigma, kLapF0 | kLapC0 | kLapF1 | kLapF2 | kLapF3, acc);
    // log F_0: (log F_0)' = -F_1/F_0, '' = -F_1/F_0 + F_2/F_0 - (F_1/F_0)^2
    const double r1 = std::exp(r.lF1 - r.lF0), r2 = std::exp(r.lF2 - r.lF0);
    f_[0][0][i] = r.lF0;
    f_[0][1][i] = -r1;
    f_[0][2][i] = -r1 + r2 - r1 * r1;
    // log C: (log C)' = F_1/C, '' = F_1/C - F_2/C - (F_1/C)^2
    const double p1 = std::exp(r.lF1 - r.lC0), p2 = std::exp(r.lF2 - r.lC0);
    f_[1][0][i] = r.lC0;
    f_[1][1][i] = p1;
    f_[1][2][i] = p1 - p2 - p1 * p1;
    // log F_1: (log F_1)' = 1 - F_2/F_1, '' = -(F_2/F_1 - F_3/F_1 + (F_2/F_1)^2)
    const double q2 = std::exp(r.lF2 - r.lF1), q3 = std::exp(r.lF3 - r.lF1);
    f_[2][0][i] = r.lF1;
    f_[2][1][i] = 1.0 - q2;
    f_[2][2][i] = -(q2 - q3 + q2 * q2);
  }
}

void LogLaplaceTable::eval(double s, double& lF0, double& lC0, double& lF1) const {
  constexpr double kNegInfty = -std::numeric_limits<double>::infinity();
  if (s <= lo_) {  // 1 - F_0 and F_1 below 1e-21: dropped, as every term below kTiny
    lF0 = 0.0;
    lC0 = lF1 = kNegInfty;
    return;
  }
  if (s >= hi_) {
    lF0 = lF1 = kNegInfty;
    lC0 = 0.0;
    return;
  }
  const double pos = (s - grid_.lo) / grid_.h;
  const int i = std::min(static_cast<int>(pos), grid_.n - 2);
  const double u = pos - i, h = grid_.h;
  const double u2 = u * u, u3 = u2 * u, u4 = u3 * u, u5 = u4 * u;
  const double H0 = 1 - 10 * u3 + 15 * u4 - 6 * u5, H1 = u - 6 * u3 + 8 * u4 - 3 * u5,
               H2 = 0.5 * (u2 - 3 * u3 + 3 * u4 - u5), H3 = 10 * u3 - 15 * u4 + 6 * u5,
               H4 = -4 * u3 + 7 * u4 - 3 * u5, H5 = 0.5 * (u3 - 2 * u4 + u5);
  double out[3];
  for (int f = 0; f < 3; ++f) {
    const auto& v = f_[f];
    out[f] = H0 * v[0][i] + h * H1 * v[1][i] + h * h * H2 * v[2][i] + H3 * v[0][i + 1] +
             h * H4 * v[1][i + 1] + h * h * H5 * v[2][i + 1];
  }
  lF0 = out[0];
  lC0 = out[1];
  lF1 = out[2];
}

}  // namespace detail
}  // namespace slr
}  // namespace saddle
