// SLR population level (docs/equations/slr_population.md §3.3-§3.7, §7a): A, B of (S7) for softmax, linear, erf and
// normalised softplus attention, the Bayes risk (S9), the closed forms (S10)-(S12), and the
// optimisation of §3.4. See equations/slr_population.hpp for the reductions used.
//
// Notation: t = e^tau is the Laplace variable of the s-normalisation T = sum_j a(chi_j), u = e^ups
// that of the p-normalisation (max-SLR). For Y ~ N(mu, q), Lj(t; mu) = E[a(Y)^j e^{-t a(Y)}]
// (§7a), computed by a trapezoid rule in x (Y = mu + sqrt(q) x) with the x step kept below
// steep/sqrt(q): e^{-t a} is a step of width ~1/sqrt(q) in x, analytic in the strip
// |Im sqrt(q) x| < pi/2, so the rule converges like exp(-pi^2/(sqrt(q) h)). All products of many
// factors are formed in log space: L0^{L-1} = exp((L-1) log L0), with log L0 = log1p(-(1-L0))
// when 1 - L0 < 1/2 and 1 - L0 summed directly from -expm1(-t a).
#include "equations/slr_population.hpp"

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

#include <boost/math/tools/minima.hpp>
#include <cstdint>

#include "integrators/quadrature.hpp"
#include "integrators/special.hpp"

namespace saddle {
namespace slr {

PopulationAccuracy PopulationAccuracy::refined(double factor) const {
  PopulationAccuracy r = *this;
  r.h_tau /= factor;
  r.h_x /= factor;
  r.steep /= factor;
  r.tail += 5.0 * std::log2(std::max(factor, 1.0));
  r.x_tail += 1.0 * std::log2(std::max(factor, 1.0));
  return r;
}

PopulationAccuracy PopulationAccuracy::coarse() {
  PopulationAccuracy r;
  r.h_tau = 0.5;
  r.h_x = 0.2;
  r.steep = 0.5;
  r.tail = 22.0;
  r.x_tail = 8.5;
  r.coarse_2d = 1.0;
  return r;
}

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kExpUnderflow = 745.0;

bool normalised(Activation a) { return a == Activation::Softmax || a == Activation::Softplus; }

// Uniform grid lo + h i, i = 0..n-1, covering [lo, hi].
struct Grid {
  double lo = 0.0, h = 1.0;
  int n = 0;
  double at(int i) const { return lo + h * i; }
};
Grid make_grid(double lo, double hi, double h) {
  Grid g;
  g.lo = lo;
  g.h = h;
  // inside the documented domain grids stay far below this; the check keeps the int count (and
  // the memory) bounded if a caller passes something outside it
  const double n = std::ceil((hi - lo) / h - 1e-9) + 1.0;
  if (!(n <= 2e8))
    throw std::invalid_argument("SLR population: a quadrature grid would need " +
                                std::to_string(n) + " points (more than 2e8)");
  g.n = static_cast<int>(n);
  if (g.n < 2) g.n = 2;
  return g;
}

// Normalised activations a(y) > 0 (§2): softmax e^y, softplus log(1 + e^y).
inline double act_a(Activation act, double y) {
  return act == Activation::Softmax ? std::exp(y) : log1p_exp(y);
}
inline double log_act_a(Activation act, double y) {
  if (act == Activation::Softmax) return y;
  if (y < -30.0) return y + std::log1p(-0.5 * std::exp(y));
  return std::log(log1p_exp(y));
}
// An upper estimate of log E[a(Y)], Y ~ N(mu, q) (sets the lower end of the Laplace grid).
double log_mean_a(Activation act, double mu, double q) {
  if (act == Activation::Softmax) return mu + 0.5 * q;
  return std::log(log1p_exp(mu) + std::sqrt(q) + 1.0);
}

void check_lengths(const std::vector<int>& lengths) {
  if (lengths.empty()) throw std::invalid_argument("SLR population: empty length set");
  for (int L : lengths)
    if (L < 1) throw std::invalid_argument("SLR population: L must be >= 1");
}
void check_nu(Task task, double nu) {
  if (std::isnan(nu) || nu < 0) throw std::invalid_argument("SLR population: nu must be >= 0");
  if (task == Task::Spiked && std::isinf(nu))
    throw std::invalid_argument("SLR population: nu = inf is only defined for max-SLR");
  if (task == Task::Spiked && nu > kPopulationMaxNuSpiked)
    throw std::invalid_argument("SLR population: spiked nu must be <= 150 (the risks ~e^{-nu/4} "
                                "lose their relative accuracy beyond)");
  if (task == Task::Max && std::isfinite(nu) && nu > kPopulationMaxNuMax)
    throw std::invalid_argument("SLR population: max-SLR nu must be <= 100 or inf (the Laplace "
                                "grids grow with nu)");
}
int max_length(const std::vector<int>& lengths) {
  return *std::max_element(lengths.begin(), lengths.end());
}

// ---------------------------------------------------------------------------------------------
// Laplace tables (§7a): for Y ~ N(mu, q), q > 0, on a tau grid: log L0, 1 - L0, and the scaled
// tL1 = t L1 = E[(ta) e^{-ta}] <= 1/e, t2L2 = t^2 L2 = E[(ta)^2 e^{-ta}] <= 4/e^2 (no overflow for
// any q: ta = exp(tau + log a) is formed in log space).
struct LapTable {
  std::vector<double> logL0, cL0, tL1, t2L2;
};

LapTable laplace_table(Activation act, double mu, double q, const Grid& tau,
                       const PopulationAccuracy& acc) {
  const double sq = std::sqrt(q);
  const double hx = std::min(acc.h_x, acc.steep / sq);
  const double xlo = -acc.x_tail;
  // (ta)^2 e^{-ta} phi(x) at the smallest t peaks near x = 2 sqrt(q) (softmax), unless e^{-ta}
  // cuts it first.
  double xhi = acc.x_tail + (act == Activation::Softmax ? 2.0 * sq : 0.0);
  if (act == Activation::Softmax)
    xhi = std::max(acc.x_tail, std::min(xhi, (std::log(kExpUnderflow) - tau.at(0) - mu) / sq + 1.0));
  Grid xg = make_grid(xlo, xhi, hx);
  const int n = xg.n;
  std::vector<double> w(n), la(n), wsuffix(n + 1, 0.0), wprefix(n + 1, 0.0);
  for (int k = 0; k < n; ++k) {
    double x = xg.at(k);
    w[k] = hx * norm_pdf(x);
    la[k] = log_act_a(act, mu + sq * x);  // increasing in k
  }
  for (int k = n - 1; k >= 0; --k) wsuffix[k] = wsuffix[k + 1] + w[k];
  for (int k = 0; k < n; ++k) wprefix[k + 1] = wprefix[k] + w[k];
  // Where ta < kTiny, e^{-ta} = 1 - ta to relative 1e-21: those terms need no exponential.
  // Their sums sum_{j<k} w_j a_j^p are kept scaled by a_k^{-p} (lref = la[min(k, n-1)]) so that
  // neither overflows: Qp[k] = sum_{j<k} w_j exp(p (la_j - lref_k)).
  constexpr double kLogTiny = -48.35;  // log(1e-21)
  std::vector<double> lref(n + 1), Q1(n + 1, 0.0), Q2(n + 1, 0.0);
  for (int k = 0; k <= n; ++k) lref[k] = la[std::min(k, n - 1)];
  for (int k = 0; k < n; ++k) {
    const double d = la[k] - lref[k + 1];
    Q1[k + 1] = (Q1[k] + w[k]) * std::exp(d);
    Q2[k + 1] = (Q2[k] + w[k]) * std::exp(2.0 * d);
  }
  LapTable T;
  T.logL0.resize(tau.n);
  T.cL0.resize(tau.n);
  T.tL1.resize(tau.n);
  T.t2L2.resize(tau.n);
  for (int i = 0; i < tau.n; ++i) {
    const double ti = tau.at(i);
    int k = static_cast<int>(std::lower_bound(la.begin(), la.end(), kLogTiny - ti) - la.begin());
    const double e1 = std::exp(ti + lref[k]);
    double s0 = wprefix[k], s1 = e1 * Q1[k], s2 = e1 * e1 * Q2[k], c = s1;
    for (; k < n; ++k) {
      const double ua = std::exp(ti + la[k]);
      if (ua > kExpUnderflow) break;  // a increases with x: every later term vanishes
      const double e = std::exp(-ua);
      const double we = w[k] * e;
      s0 += we;
      const double p1 = we * ua;
      s1 += p1;
      s2 += p1 * ua;
      c += w[k] * (ua < 0.5 ? -std::expm1(-ua) : 1.0 - e);
    }
    c += wsuffix[k];
    T.cL0[i] = c;
    T.logL0[i] = c < 0.5 ? std::log1p(-c) : std::log(s0);
    T.tL1[i] = s1;
    T.t2L2[i] = s2;
  }
  return T;
}

// Step of the log-Laplace grid tau = log t for the 1-D reductions (S26)-(S28) and the max-SLR A.
// Range: below tau = -log L - log max a - tail the integrand is < L t max a (the Gaussian
// variables are truncated at x_tail, so max a = a(mu + x_tail sqrt(q))); above, e^{-t a} is
// below e^{-tail} for every token. Step: the integrand is int phi(x) g(tau + log a(mu + sq x)) dx
// times powers of L0(tau) = int phi(x) e^{-e^{tau} a(..)} dx. For softmax, log a is linear in x,
// so every factor is a Gaussian (scale sq in tau) convolved with a bump of scale 1: its Fourier
// transform decays like exp(-(sq k h_r')^2/2)... and the trapezoid rule in tau is exact to the
// same order with steps up to h_r sq, h_r the Gaussian-variable step (h_x, shrunk for large L
// where Phi^{L-1} sharpens to the scale 1/sqrt(2 log L)). Softplus (log a curved) keeps h_tau.
double ridge_step_x(int Lmax, const PopulationAccuracy& acc) {
  return acc.h_x / std::max(1.0, 0.5 * std::sqrt(2.0 * std::log(double(Lmax))));
}
double ridge_tau_step(Activation act, double sq, int Lmax, const PopulationAccuracy& acc) {
  if (act != Activation::Softmax) return acc.h_tau;
  return std::max(acc.h_tau, ridge_step_x(Lmax, acc) * sq);
}

// exp((n) * logx) with n possibly 0 (then 1 even if logx = -inf).
inline double powlog(double logx, double n) {
  if (n == 0.0) return 1.0;
  return std::exp(n * logx);
}

// ---------------------------------------------------------------------------------------------
// Spiked-SLR, normalised activation: (S26), (S27), (S28) and 1 - B = (L-1) int L0(mu) L1(0)
// L0(0)^{L-2} dt, conditioned on eps* = 1 (chi_1 ~ N(mu_s, q), others N(0, q)).
std::vector<ABDetail> spiked_normalised(Activation act, double mu_s, double q,
                                        const std::vector<int>& lengths,
                                        const PopulationAccuracy& acc) {
  std::vector<ABDetail> out;
  const double sq = std::sqrt(q);
  const int Lmax = max_length(lengths);
  // t a(Y) ~ 1 for some token value Y = mu + sqrt(q) x, |x| <= x_tail (ridge_tau_grid)
  const double lo = -std::log(double(Lmax)) -
                    log_act_a(act, std::max(mu_s, 0.0) + acc.x_tail * sq) - acc.tail;
  const double hi = std::log(acc.tail) - log_act_a(act, std::min(mu_s, 0.0) - acc.x_tail * sq) + 1.0;
  Grid tau = make_grid(lo, hi, ridge_tau_step(act, sq, Lmax, acc));
  LapTable Ts = laplace_table(act, mu_s, q, tau, acc);
  LapTable T0 = laplace_table(act, 0.0, q, tau, acc);
  for (int L : lengths) {
    ABDetail r;
    if (L == 1) {
      r.A = r.B = 1.0;
      r.cA = r.cB = 0.0;
      out.push_back(r);
      continue;
    }
    double A = 0, B = 0, cA = 0, cB = 0;
    const double Lm1 = L - 1;
    for (int i = 0; i < tau.n; ++i) {
      // dt = t dtau: B = int t L1 .., A = int t^2 L2 .. (S26)-(S28)
      const double l0 = T0.logL0[i];
      const double e1 = powlog(l0, Lm1), e2 = powlog(l0, Lm1 - 1), e3 = powlog(l0, Lm1 - 2);
      const double L0s = std::exp(Ts.logL0[i]);
      B += Ts.tL1[i] * e1;
      cB += Lm1 * L0s * T0.tL1[i] * e2;
      A += Ts.t2L2[i] * e1 + Lm1 * T0.t2L2[i] * L0s * e2;
      cA += 2.0 * Lm1 * Ts.tL1[i] * T0.tL1[i] * e2 +
            (L >= 3 ? Lm1 * (Lm1 - 1) * T0.tL1[i] * T0.tL1[i] * L0s * e3 : 0.0);
    }
    r.A = A * tau.h;
    r.B = B * tau.h;
    r.cA = cA * tau.h;
    r.cB = cB * tau.h;
    out.push_back(r);
  }
  return out;
}

// Max-SLR, normalised activation, A and 1 - A (§7a): chi ~ N(0, q I_L).
void max_normalised_A(Activation act, double q, const std::vector<int>& lengths,
                      const PopulationAccuracy& acc, std::vector<ABDetail>& out) {
  const double sq = std::sqrt(q);
  const int Lmax = max_length(lengths);
  const double lo = -std::log(double(Lmax)) - log_act_a(act, acc.x_tail * sq) - acc.tail;
  const double hi = std::log(acc.tail) - log_act_a(act, -acc.x_tail * sq) + 1.0;
  Grid tau = make_grid(lo, hi, ridge_tau_step(act, sq, Lmax, acc));
  LapTable T0 = laplace_table(act, 0.0, q, tau, acc);
  for (std::size_t j = 0; j < lengths.size(); ++j) {
    const int L = lengths[j];
    if (L == 1) {
      out[j].A = 1.0;
      out[j].cA = 0.0;
      continue;
    }
    double A = 0, cA = 0;
    for (int i = 0; i < tau.n; ++i) {
      const double l0 = T0.logL0[i];
      A += T0.t2L2[i] * powlog(l0, L - 1);
      cA += T0.tL1[i] * T0.tL1[i] * powlog(l0, L - 2);
    }
    out[j].A = A * tau.h * L;
    out[j].cA = cA * tau.h * double(L) * (L - 1);
  }
}

// Lambda_{sigma^2}(e^s) = E[exp(-e^{s + sigma X})] and its complement, X ~ N(0,1) (§7a (S29)),
// tabulated on a fine s grid with their s-derivatives; cubic Hermite interpolation of
// log Lambda and log(1 - Lambda).
class LambdaTable {
 public:
  LambdaTable(double sigma, double s_lo, double s_hi, const PopulationAccuracy& acc)
      : sigma_(sigma) {
    if (sigma_ == 0.0) return;
    grid_ = make_grid(s_lo, s_hi, 0.01 * acc.h_x / 0.1);
    const double hx = std::min(acc.h_x, acc.steep / sigma);
    Grid xg = make_grid(-acc.x_tail, acc.x_tail, hx);
    std::vector<double> w(xg.n), ex(xg.n);
    for (int k = 0; k < xg.n; ++k) {
      w[k] = hx * norm_pdf(xg.at(k));
      ex[k] = sigma * xg.at(k);
    }
    lv_.resize(grid_.n);
    dlv_.resize(grid_.n);
    lc_.resize(grid_.n);
    dlc_.resize(grid_.n);
    for (int i = 0; i < grid_.n; ++i) {
      const double s = grid_.at(i);
      double v = 0, c = 0, d = 0;  // Lambda, 1 - Lambda, -dLambda/ds
      for (int k = 0; k < xg.n; ++k) {
        const double ua = std::exp(s + ex[k]);
        if (ua > kExpUnderflow) {
          for (int kk = k; kk < xg.n; ++kk) c += w[kk];
          break;
        }
        const double e = std::exp(-ua);
        v += w[k] * e;
        c += w[k] * (ua < 0.5 ? -std::expm1(-ua) : 1.0 - e);
        d += w[k] * ua * e;
      }
      // Far right Lambda underflows: clamp its log at -700 with zero slope (exp(-700) ~ 0).
      if (v > 1e-300) {
        lv_[i] = std::log(v);
        dlv_[i] = -d / v;
      } else {
        lv_[i] = -700.0;
        dlv_[i] = 0.0;
      }
      lc_[i] = std::log(c);
      dlc_[i] = d / c;
    }
  }
  // log Lambda(e^s) and log(1 - Lambda(e^s)).
  void eval(double s, double& logv, double& logc) const {
    if (sigma_ == 0.0) {
      const double ua = std::exp(s);
      logv = -ua;
      logc = std::log(-std::expm1(-ua));
      return;
    }
    double pos = (s - grid_.lo) / grid_.h;
    if (pos < 0 || pos > grid_.n - 1)
      throw std::logic_error("LambdaTable: argument outside the table");
    int i = std::min(static_cast<int>(pos), grid_.n - 2);
    double u = pos - i, h = grid_.h;
    auto herm = [&](const std::vector<double>& f, const std::vector<double>& df) {
      double u2 = u * u, u3 = u2 * u;
      return (2 * u3 - 3 * u2 + 1) * f[i] + (u3 - 2 * u2 + u) * h * df[i] +
             (-2 * u3 + 3 * u2) * f[i + 1] + (u3 - u2) * h * df[i + 1];
    };
    logv = herm(lv_, dlv_);
    logc = herm(lc_, dlc_);
  }

 private:
  double sigma_;
  Grid grid_;
  std::vector<double> lv_, dlv_, lc_, dlc_;
};

// Max-SLR, normalised activation, B by the 2-D Laplace integral (S30), for finite nu > 0 and
// any q_k >= m_k^2. Each token is written through Y = sqrt(q) Z (s-side) and
// X = c Z + s_eta eta (p-side), c = m/sqrt(q), s_eta^2 = 1 - c^2, so the eta-smoothing of the
// p-side is Lambda_{sigma^2} with sigma = nu s_eta (exact exp(-e^s) when q = m^2). With the
// z-grid weights W the u,t tables are the products
//   Xi0 = S0 W K0^T, 1 - Xi0 = (1 - L0(t)) + (1 - P0(u)) - Sbar W Kbar^T, Xi1 = S1 W K1^T,
// and B = L sum_{tau,ups} h^2 t u Xi1 Xi0^{L-1}. They are not formed as full matrix products:
// Xi1 lives on a ridge of the (tau, ups) plane (t a(Y) ~ 1 and u e^{nu X} ~ 1 for the same z)
// and every z-sum has a short window (see below), so the cost grows like nu, not nu^3.
void max_normalised_B_finite(Activation act, double nu, double m, double q,
                             const std::vector<int>& lengths, const PopulationAccuracy& acc,
                             std::vector<ABDetail>& out) {
  const double sq = std::sqrt(q);
  const double c = m / sq;
  const double s_eta = std::sqrt(std::max(0.0, 1.0 - c * c));
  const double sigma = nu * (s_eta < 1e-7 ? 0.0 : s_eta);
  const int Lmax = max_length(lengths);
  // z grid: every token, the eps* one included, needs only Z in [-x_tail, x_tail]. The eps* weight
  // e^{nu X} is always multiplied by e^{-u e^{nu X}} (and a(Y) by e^{-t a(Y)}): the scaled
  // products u e^{nu X} e^{-u e^{nu X}} <= 1/e and (ta) e^{-ta} <= 1/e are bounded, so Z keeps its
  // N(0,1) weight (in the Gumbel-race form of p, the eps* token's X is the winner's X, not a
  // tilted one), and Z outside [-x_tail, x_tail] carries < e^{-x_tail^2/2}.
  const double steep = std::max({sq, std::abs(nu * c), 1e-300});
  const double hz = std::min(acc.h_x, acc.steep / steep);
  Grid zg0 = make_grid(-acc.x_tail, acc.x_tail, hz);
  // t grid (s-normalisation): t a(Y) ~ 1 for some Y = sqrt(q) Z, |Z| <= x_tail; below, the
  // integrand is < L t max a (ignored under e^{-tail}); above, e^{-t a} < e^{-tail} for all tokens.
  const double t_lo = -std::log(double(Lmax)) - log_act_a(act, acc.x_tail * sq) - acc.tail;
  const double t_hi = std::log(acc.tail) - log_act_a(act, -acc.x_tail * sq) + 1.0;
  // u grid (p-normalisation): u e^{nu X} ~ 1 for some |X| <= x_tail (X = c Z + s_eta eta,
  // marginally N(0,1)), the same bounds.
  const double u_lo = -std::log(double(Lmax)) - nu * acc.x_tail - acc.tail;
  const double u_hi = std::log(acc.tail) + nu * acc.x_tail + 1.0;
  // Steps. The integrand lives on the ridge (tau, ups) ~ (-log a(sqrt(q) Z), -nu c Z): across it
  // it varies on the scale 1 (the bumps (ta) e^{-ta}, y e^{-y}), along it like phi(Z) Xi0^{L-1}
  // (Z scale h_r). By Poisson summation the 2-D trapezoid error is the Fourier transform at the
  // dual lattice points; for a ridge of slope |dtau/dups| <= 1 every dual point with a nonzero
  // tau frequency lies at least as far from the ridge's spectrum as with the fine square grid,
  // and those with zero tau frequency lie along the ridge at distance 2 pi / h_u in ups, i.e.
  // 2 pi (nu c) / h_u in Z frequency: so the ups step may grow to h_r nu c. The same holds with
  // the axes swapped for a steep ridge. Both need a straight ridge (slope sqrt(q) everywhere:
  // softmax). Softplus bends its ridge within |Z| ~ 1/sqrt(q) of 0 (log a goes from linear to
  // logarithmic), which puts structure of scale nu c / sqrt(q) ~ 1 along ups: it keeps h_tau
  // (measured: the coarse ups step moved its risk by 2e-8). Cost for softmax:
  // O(min(sqrt(q), nu c)) rows, not their product.
  const double h_r = ridge_step_x(Lmax, acc);
  double h_t = acc.h_tau, h_u = acc.h_tau;
  if (act == Activation::Softmax) {
    if (sq <= nu * c)
      h_u = std::max(acc.h_tau, h_r * nu * c);
    else
      h_t = std::max(acc.h_tau, h_r * sq);
  }
  Grid tg = make_grid(t_lo, t_hi, h_t);
  Grid ug = make_grid(u_lo, u_hi, h_u);
  const int nt = tg.n, nu_ = ug.n;
  const double zabs = std::max(std::abs(zg0.at(0)), std::abs(zg0.at(zg0.n - 1)));
  const double s_lo = ug.at(0) - std::abs(nu * c) * zabs - 1.0;
  const double s_hi = ug.at(nu_ - 1) + std::abs(nu * c) * zabs + sigma * sigma + 1.0;
  LambdaTable lam(sigma, s_lo, s_hi, acc);

  // Both factors of every z-sum below are steps or bumps in z around the point where t a = 1
  // (resp. u e^{nu X} = 1), so each (tau, ups) entry needs only the z window where neither factor
  // is trivial: the integrand lies on a ridge in (tau, ups) (Xi1 vanishes off it) and the z-sums
  // are short. Terms below kTiny (absolute; all entries are <= 1) are dropped and the "one"
  // region of the steps (complement < kTiny) is summed exactly by a suffix of the weights:
  // the neglected mass is < 1e-20 per entry, far below the quadrature error.
  constexpr double kTiny = 1e-21;
  constexpr double kLogTiny = -48.35;  // log(kTiny)
  const double kLogOne = std::log(-kLogTiny);  // ta above e^kLogOne: e^{-ta} < kTiny
  const double kLog38 = std::log(38.0), kLog56 = std::log(56.0);
  // Untilted tokens: 1 - Xi0 = (1 - L0(t)) + (1 - P0(u)) - M, M = sum_z w (1 - e^{-ta})(1 - P),
  // P = Lambda(u e^{nu c z}): M = (suffix of w where both steps are 1) + short window.
  const int n0 = zg0.n;
  // The p-side arguments s_k = ups + nu c z_k increase with k when c >= 0 (m_k >= 0): windows are
  // found by bisection and only their entries are computed and stored. For c < 0 the p-side
  // rows are computed and stored in full.
  const bool mono = c >= 0.0;
  std::vector<double> w0(n0), wsuf0(n0 + 1, 0.0), la(n0), zz(n0);
  for (int k = 0; k < n0; ++k) {
    zz[k] = zg0.at(k);
    w0[k] = hz * norm_pdf(zz[k]);
    la[k] = log_act_a(act, sq * zz[k]);  // increasing in k
  }
  for (int k = n0 - 1; k >= 0; --k) wsuf0[k] = wsuf0[k + 1] + w0[k];
  // Windowed rows: row i holds its values for k in [b[i], e[i]) at v[off[i] + k - b[i]]. A step
  // row is < kTiny below b and 1 within kTiny from e on; a bump row is < kTiny outside.
  struct Rows {
    std::vector<double> v;
    std::vector<std::size_t> off;
    std::vector<int> b, e;
    explicit Rows(int n) : off(n), b(n), e(n) {}
    // store tmp[0..n) as the values on [k0, k0 + n), trimmed to the entries >= tiny at both ends
    // (bump) or at the start only (step)
    void put(int i, int k0, const std::vector<double>& tmp, double tiny, bool bump) {
      int lo = 0, hi = static_cast<int>(tmp.size());
      while (lo < hi && tmp[lo] < tiny) ++lo;
      if (bump)
        while (hi > lo && tmp[hi - 1] < tiny) --hi;
      off[i] = v.size();
      b[i] = k0 + lo;
      e[i] = bump ? k0 + hi : k0 + static_cast<int>(tmp.size());
      v.insert(v.end(), tmp.begin() + lo, tmp.begin() + (bump ? hi : static_cast<int>(tmp.size())));
    }
    const double* at(int i) const { return v.data() + off[i]; }  // value of k: at(i)[k - b[i]]
  };
  auto first_k = [&](const std::vector<double>& inc, double thr, bool strict) {
    return static_cast<int>((strict ? std::upper_bound(inc.begin(), inc.end(), thr)
                                    : std::lower_bound(inc.begin(), inc.end(), thr)) -
                            inc.begin());
  };
  // ---- t side (all tokens share the z grid): step w (1 - e^{-ta}) (Cs, with the weight) and
  // bump w (ta) e^{-ta} (S1)
  Rows Cs(nt), S1(nt);
  std::vector<double> cL0(nt), tmp;
  for (int i = 0; i < nt; ++i) {
    const double tau = tg.at(i);
    const int zs = first_k(la, kLogTiny - tau, false);             // below: ta < kTiny
    const int ze = std::max(zs, first_k(la, kLogOne - tau, true));  // from here: e^{-ta} < kTiny
    tmp.assign(ze - zs, 0.0);
    double cs = wsuf0[ze];
    for (int k = zs; k < ze; ++k) {
      const double lua = tau + la[k];
      double cb = 1.0;  // = 1.0 in double precision above ta = 38
      if (lua <= kLog38) {
        const double ua = std::exp(lua);
        cb = ua < 0.5 ? -std::expm1(-ua) : 1.0 - std::exp(-ua);
      }
      tmp[k - zs] = w0[k] * cb;  // stored with its weight
      cs += tmp[k - zs];
    }
    cL0[i] = cs;
    Cs.put(i, zs, tmp, kTiny * w0[zs < n0 ? zs : n0 - 1], false);
    // (ta) e^{-ta} < kTiny for ta < kTiny and for ta > 56
    const int he = std::max(zs, first_k(la, kLog56 - tau, true));
    tmp.assign(he - zs, 0.0);
    for (int k = zs; k < he; ++k) {
      const double lua = tau + la[k];
      tmp[k - zs] = w0[k] * std::exp(lua - std::exp(lua));
    }
    S1.put(i, zs, tmp, kTiny, true);
  }
  // ---- u side: step 1 - P (Dp) and, for the eps* token, the bump K1 = u E_eta[e^{nu X}
  // e^{-u e^{nu X}}] = e^{s + sigma^2/2} Lambda(e^{s + sigma^2}), s = ups + nu c z (scaled by u).
  const double half_s2 = 0.5 * sigma * sigma;
  auto dp_val = [&](double sk, bool& one) {
    if (sigma == 0.0) {  // exact 1 - exp(-e^s), as the t side
      one = sk > kLogOne;
      return sk < kLogTiny ? 0.0 : (sk > kLog38 ? 1.0 : -std::expm1(-std::exp(sk)));
    }
    one = false;
    if (sk + half_s2 < kLogTiny) return 0.0;  // 1 - Lambda <= e^{s + sigma^2/2}
    double lv, lc;
    lam.eval(sk, lv, lc);
    one = lv < kLogTiny;
    return std::exp(lc);
  };
  auto k1_val = [&](double sk) {
    if (sigma == 0.0) return (sk < kLogTiny || sk > kLog56) ? 0.0 : std::exp(sk - std::exp(sk));
    if (sk + half_s2 < kLogTiny) return 0.0;  // <= E[y] = e^{s + sigma^2/2}
    double lv1, lc1;
    lam.eval(sk + sigma * sigma, lv1, lc1);
    return std::exp(sk + half_s2 + lv1);
  };
  Rows Dp(nu_), K1(nu_);
  std::vector<double> cP0(nu_), sgrid(n0);
  for (int j = 0; j < nu_; ++j) {
    const double ups = ug.at(j);
    for (int k = 0; k < n0; ++k) sgrid[k] = ups + nu * c * zz[k];
    // first index where the step (and the bump) can exceed kTiny
    const int z0 = mono ? first_k(sgrid, kLogTiny - (sigma == 0.0 ? 0.0 : half_s2), false) : 0;
    int ze = n0;
    tmp.clear();
    double cp = 0.0;
    for (int k = z0; k < n0; ++k) {
      bool one;
      const double v = dp_val(sgrid[k], one);
      if (mono && one) {
        ze = k;
        break;
      }
      tmp.push_back(v);
      cp += w0[k] * v;
    }
    cP0[j] = cp + wsuf0[ze];
    Dp.put(j, z0, tmp, kTiny, false);
    tmp.clear();
    double prev = 0.0;
    for (int k = z0; k < n0; ++k) {
      const double v = k1_val(sgrid[k]);
      // the bump is unimodal in k: stop once it falls below kTiny after its peak
      if (mono && v < kTiny && v < prev) break;
      if (mono && sigma == 0.0 && sgrid[k] > kLog56) break;
      tmp.push_back(v);
      prev = v;
    }
    K1.put(j, z0, tmp, kTiny, true);
  }
  auto dot = [](const double* a, const double* b, int n) {
    double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
    int k = 0;
    for (; k + 4 <= n; k += 4) {
      s0 += a[k] * b[k];
      s1 += a[k + 1] * b[k + 1];
      s2 += a[k + 2] * b[k + 2];
      s3 += a[k + 3] * b[k + 3];
    }
    for (; k < n; ++k) s0 += a[k] * b[k];
    return (s0 + s1) + (s2 + s3);
  };
  std::vector<double> Bsum(lengths.size(), 0.0);
  for (int i = 0; i < nt; ++i) {
    if (S1.b[i] >= S1.e[i]) continue;
    const double* s1row = S1.at(i);
    const double* csrow = Cs.at(i);
    const int zs_t = Cs.b[i], ze_t = Cs.e[i];
    for (int j = 0; j < nu_; ++j) {
      const int lo = std::max(S1.b[i], K1.b[j]), hi = std::min(S1.e[i], K1.e[j]);
      if (lo >= hi) continue;
      const double x1 = dot(s1row + (lo - S1.b[i]), K1.at(j) + (lo - K1.b[j]), hi - lo);
      if (!(x1 > 0.0)) continue;
      // M = sum_z w (1 - e^{-ta})(1 - P): both steps stored on [a, m1), one of them 1 on
      // [m1, b), both 1 from b on
      const int zs_u = Dp.b[j], ze_u = Dp.e[j];
      const double* dcol = Dp.at(j);
      const int a = std::max(zs_t, zs_u), b = std::max(ze_t, ze_u), m1 = std::min(ze_t, ze_u);
      double M = wsuf0[b];
      {
        double s0 = 0, s1 = 0;
        int k = a;
        for (; k + 2 <= m1; k += 2) {
          s0 += csrow[k - zs_t] * dcol[k - zs_u];
          s1 += csrow[k + 1 - zs_t] * dcol[k + 1 - zs_u];
        }
        for (; k < m1; ++k) s0 += csrow[k - zs_t] * dcol[k - zs_u];
        k = std::max(a, m1);
        if (ze_t <= ze_u)
          for (; k < b; ++k) s1 += w0[k] * dcol[k - zs_u];
        else
          for (; k < b; ++k) s1 += csrow[k - zs_t];
        M += s0 + s1;
      }
      const double cx = std::min(1.0, std::max(0.0, cL0[i] + cP0[j] - M));  // 1 - Xi0
      // Xi0 = 1 - cx: absolute error ~1e-16 where Xi0 is small, harmless in Xi0^{L-1}.
      const double lx = cx < 0.5 ? std::log1p(-cx) : std::log(1.0 - cx);
      for (std::size_t jl = 0; jl < lengths.size(); ++jl)
        if (lengths[jl] > 1) Bsum[jl] += x1 * powlog(lx, lengths[jl] - 1);
    }
  }
  for (std::size_t jl = 0; jl < lengths.size(); ++jl) {
    const int L = lengths[jl];
    if (L == 1) {
      out[jl].B = 1.0;
      out[jl].cB = 0.0;
      continue;
    }
    out[jl].B = Bsum[jl] * tg.h * ug.h * L;
    out[jl].cB = 1.0 - out[jl].B;
  }
}

// Max-SLR at nu = inf, normalised activation, X-representation (§7a): with chi_l = m X_l + r xi_l,
// l(t,x) = E_xi[e^{-t a(m x + r xi)}], l1(t,x) = E_xi[a e^{-t a}] (r = 0: no average),
// B = L int dt int phi(x) l1(t,x) C(t,x)^{L-1} dx,  C(t,x) = int_{-inf}^x phi(x') l(t,x') dx'.
// The cell integrals of C use 4-point Gauss-Legendre (C is an indefinite integral, so a plain
// cumulative trapezoid would be only O(h^2)); 1 - C = (1 - L0) + int_x^inf phi l keeps log C
// accurate for large L. Softmax: l = Lambda_{r^2}(t e^{mx}), l1 = e^{mx + r^2/2}
// Lambda_{r^2}(t e^{mx + r^2}); softplus: trapezoid in xi.
void max_normalised_B_inf_x(Activation act, double m, double r, const std::vector<int>& lengths,
                            const PopulationAccuracy& acc, std::vector<ABDetail>& out) {
  const double am = std::abs(m);
  const double q = m * m + r * r;
  const double sq = std::sqrt(q);
  const int Lmax = max_length(lengths);
  // x in [-x_tail, x_tail] for every token: the eps* token's a e^{-ta} enters scaled by t,
  // (ta) e^{-ta} <= 1/e, so x keeps its N(0,1) weight (no tilt towards x = m survives the cut)
  const double xlo = -acc.x_tail, xhi = acc.x_tail;
  const double hx = std::min(acc.h_x, acc.steep / std::max(am, 1e-300));
  Grid xg = make_grid(xlo, xhi, hx);
  const int nx = xg.n;
  const Rule1D& gl = gauss_legendre(4);
  // all evaluation abscissae: node k at index 5k, GL points at 5k+1..5k+4
  std::vector<double> xs(5 * nx), ws(5 * nx, 0.0);
  for (int k = 0; k < nx; ++k) {
    xs[5 * k] = xg.at(k);
    ws[5 * k] = 0.0;
    for (int g = 0; g < 4; ++g) {
      const double x = xg.at(k) + 0.5 * hx * (1.0 + gl.x[g]);
      xs[5 * k + 1 + g] = x;
      ws[5 * k + 1 + g] = k + 1 < nx ? 0.5 * hx * gl.w[g] * norm_pdf(x) : 0.0;
    }
  }
  // t a(m x + r xi) ~ 1 for some |x|, |xi| <= x_tail (as ridge_tau_step); softmax steps along
  // its straight ridge tau = -m x
  const double t_lo = -std::log(double(Lmax)) - log_act_a(act, acc.x_tail * (am + r)) - acc.tail;
  const double t_hi = std::log(acc.tail) - log_act_a(act, -acc.x_tail * sq - am) + 1.0;
  Grid tg = make_grid(t_lo, t_hi, ridge_tau_step(act, am, Lmax, acc));
  // xi-smoothing
  std::unique_ptr<LambdaTable> lam;
  Grid xig;
  std::vector<double> xiw;
  if (r > 0 && act == Activation::Softmax) {
    const double span = am * (std::abs(xlo) + std::abs(xhi)) + r * r + 2.0;
    lam.reset(new LambdaTable(r, tg.at(0) - span, tg.at(tg.n - 1) + span, acc));
  } else if (r > 0) {
    const double hxi = std::min(acc.h_x, acc.steep / r);
    xig = make_grid(-acc.x_tail, acc.x_tail, hxi);
    xiw.resize(xig.n);
    for (int k = 0; k < xig.n; ++k) xiw[k] = hxi * norm_pdf(xig.at(k));
  }
  // l, 1 - l, l1 at (tau, x)
  // l1 is returned scaled by t: t l1 = E[(ta) e^{-ta}]
  // r = 0: log a(m x) at every abscissa, once; terms below 1e-21 (t a < 1e-21: l0 = 1 - t a,
  // or t a > 60: l0 < 1e-26) are rounded to their limits, so only the window of x where t a(m x)
  // is neither small nor large costs transcendentals.
  std::vector<double> la_x;
  if (r == 0.0) {
    la_x.resize(xs.size());
    for (std::size_t k = 0; k < xs.size(); ++k) la_x[k] = log_act_a(act, m * xs[k]);
  }
  const double kLogTiny = -48.35, kLog60 = std::log(60.0);
  auto ell = [&](double tau, std::size_t idx, double& l0, double& cl0, double& l1) {
    const double x = xs[idx];
    if (r == 0.0) {
      const double lua = tau + la_x[idx];
      if (lua < kLogTiny) {
        l0 = 1.0;
        cl0 = l1 = 0.0;
      } else if (lua > kLog60) {
        l0 = l1 = 0.0;
        cl0 = 1.0;
      } else {
        const double ua = std::exp(lua);
        l0 = std::exp(-ua);
        cl0 = ua < 0.5 ? -std::expm1(-ua) : 1.0 - l0;
        l1 = ua * l0;
      }
    } else if (lam) {
      double lv, lc, lv1, lc1;
      lam->eval(tau + m * x, lv, lc);
      l0 = std::exp(lv);
      cl0 = std::exp(lc);
      lam->eval(tau + m * x + r * r, lv1, lc1);
      l1 = std::exp(tau + m * x + 0.5 * r * r + lv1);
    } else {
      double s0 = 0, c0 = 0, s1 = 0;
      for (int k = 0; k < xig.n; ++k) {
        const double ua = std::exp(tau + log_act_a(act, m * x + r * xig.at(k)));
        const double e = ua > kExpUnderflow ? 0.0 : std::exp(-ua);
        s0 += xiw[k] * e;
        c0 += xiw[k] * (ua < 0.5 ? -std::expm1(-ua) : 1.0 - e);
        s1 += xiw[k] * ua * e;
      }
      l0 = s0;
      cl0 = c0;
      l1 = s1;
    }
  };
  std::vector<double> Bs(lengths.size(), 0.0);
  std::vector<double> cellv(nx, 0.0), upper(nx + 1, 0.0), base(nx), logC(nx);
  std::vector<double> pdf_node(nx);
  for (int k = 0; k < nx; ++k) pdf_node[k] = norm_pdf(xs[5 * k]);
  for (int i = 0; i < tg.n; ++i) {
    const double tau = tg.at(i);
    double c_all = 0.0;
    for (int k = 0; k < nx; ++k) {
      double l0, cl0, l1;
      ell(tau, 5 * k, l0, cl0, l1);
      base[k] = pdf_node[k] * l1;
      double cv = 0.0;
      if (k + 1 < nx)
        for (int g = 0; g < 4; ++g) {
          ell(tau, 5 * k + 1 + g, l0, cl0, l1);
          cv += ws[5 * k + 1 + g] * l0;
          c_all += ws[5 * k + 1 + g] * cl0;
        }
      cellv[k] = cv;
    }
    upper[nx - 1] = 0.0;
    for (int k = nx - 2; k >= 0; --k) upper[k] = upper[k + 1] + cellv[k];
    double lower = 0.0;  // C(t, x_k)
    for (int k = 0; k < nx; ++k) {
      if (k > 0) lower += cellv[k - 1];
      if (base[k] == 0.0) continue;  // (logC is only needed where base > 0)
      const double oneminus = c_all + upper[k];  // 1 - C(t, x_k)
      logC[k] = oneminus < 0.5 ? std::log1p(-oneminus) : std::log(lower);
    }
    for (std::size_t jl = 0; jl < lengths.size(); ++jl) {
      const int L = lengths[jl];
      double sum = 0.0;
      for (int k = 0; k < nx; ++k)
        if (base[k] > 0.0) sum += base[k] * powlog(logC[k], L - 1);
      Bs[jl] += sum * hx;
    }
  }
  for (std::size_t jl = 0; jl < lengths.size(); ++jl) {
    const int L = lengths[jl];
    out[jl].B = L == 1 ? 1.0 : Bs[jl] * tg.h * L;
    out[jl].cB = 1.0 - out[jl].B;
  }
}

// Max-SLR at nu = inf, normalised activation, q > m^2: with Y = sqrt(q) Z, X = c Z + s eta,
// C(t, x0) = E_Z[e^{-t a} Phi((x0 - cZ)/s)], and the eps* token density in x0,
// B = L int dt int dx0 E_Z[a e^{-ta} phi((x0 - cZ)/s)/s] C(t, x0)^{L-1}.
void max_normalised_B_inf_smooth(Activation act, double m, double q,
                                 const std::vector<int>& lengths, const PopulationAccuracy& acc,
                                 std::vector<ABDetail>& out) {
  const double sq = std::sqrt(q);
  const double c = m / sq;
  const double s = std::sqrt(std::max(0.0, 1.0 - c * c));
  const int Lmax = max_length(lengths);
  const double tilt = act == Activation::Softmax ? sq : 0.0;
  const double zlo = -acc.x_tail + std::min(0.0, tilt), zhi = acc.x_tail + std::max(0.0, tilt);
  const double hz = std::min({acc.h_x, acc.steep / sq, acc.steep * s / std::max(std::abs(c), 1e-300)});
  Grid zg = make_grid(zlo, zhi, hz);
  const double x_ext = acc.x_tail + 2.0;
  const double h0 = std::min(acc.h_x, acc.steep * s);
  Grid xg = make_grid(-x_ext - std::abs(c) * tilt, x_ext + std::abs(c) * tilt, h0);
  const double t_lo = -std::log(double(Lmax)) - log_mean_a(act, 0.0, q) - acc.tail -
                      (act == Activation::Softmax ? 0.5 * q : 0.0);
  const double t_hi = std::log(acc.tail) - log_act_a(act, -acc.x_tail * sq) + 1.0;
  Grid tg = make_grid(t_lo, t_hi, acc.h_tau);
  const int nz = zg.n, nx = xg.n, nt = tg.n;
  std::vector<double> w(nz), la(nz);
  for (int k = 0; k < nz; ++k) {
    w[k] = hz * norm_pdf(zg.at(k));
    la[k] = log_act_a(act, sq * zg.at(k));
  }
  Eigen::MatrixXd S0(nt, nz), S1(nt, nz);  // S1 scaled by t
  std::vector<double> cL0(nt);
  for (int i = 0; i < nt; ++i) {
    double cs = 0;
    for (int k = 0; k < nz; ++k) {
      const double ua = std::exp(tg.at(i) + la[k]);
      const double e = ua > kExpUnderflow ? 0.0 : std::exp(-ua);
      S0(i, k) = w[k] * e;
      S1(i, k) = w[k] * ua * e;
      cs += w[k] * (ua < 0.5 ? -std::expm1(-ua) : 1.0 - e);
    }
    cL0[i] = cs;
  }
  Eigen::MatrixXd Kc(nz, nx), Kcb(nz, nx), Kd(nz, nx);
  for (int j = 0; j < nx; ++j)
    for (int k = 0; k < nz; ++k) {
      const double r = (xg.at(j) - c * zg.at(k)) / s;
      Kc(k, j) = norm_cdf(r);
      Kcb(k, j) = norm_cdf(-r);
      Kd(k, j) = norm_pdf(r) / s;
    }
  Eigen::MatrixXd C = S0 * Kc, Cb = S0 * Kcb, D1 = S1 * Kd;
  for (std::size_t jl = 0; jl < lengths.size(); ++jl) {
    const int L = lengths[jl];
    if (L == 1) {
      out[jl].B = 1.0;
      out[jl].cB = 0.0;
      continue;
    }
    double B = 0;
    for (int j = 0; j < nx; ++j)
      for (int i = 0; i < nt; ++i) {
        const double om = cL0[i] + Cb(i, j);  // 1 - C
        const double lc = om < 0.5 ? std::log1p(-om) : std::log(C(i, j));
        B += D1(i, j) * powlog(lc, L - 1);
      }
    out[jl].B = B * tg.h * xg.h * L;
    out[jl].cB = 1.0 - out[jl].B;
  }
}

// ---------------------------------------------------------------------------------------------
// Max-SLR: density of chi*_{eps*} (§7a, element-wise max-SLR), on the grid x = lo + h i:
// f_L(x) = L phi(x) e^{nu x} int_0^inf e^{-t e^{nu x}} Lambda_{nu^2}(t)^{L-1} dt (finite nu),
// L phi(x) Phi(x)^{L-1} (nu = inf), phi(x) (nu = 0). Cached per (nu, L, accuracy).
struct TiltDensity {
  Grid x;
  std::vector<double> f;  // density values; sum f h = 1
};

std::shared_ptr<const TiltDensity> compute_tilt_density(double nu, int L,
                                                        const PopulationAccuracy& acc) {
  auto D = std::make_shared<TiltDensity>();
  const double hx = 0.02 * acc.h_x / 0.1;
  D->x = make_grid(-acc.x_tail - 1.0, acc.x_tail + 1.0, hx);
  const int nx = D->x.n;
  D->f.resize(nx);
  if (nu == 0.0 || L == 1) {
    for (int k = 0; k < nx; ++k) D->f[k] = norm_pdf(D->x.at(k));
  } else if (std::isinf(nu)) {
    for (int k = 0; k < nx; ++k) {
      const double x = D->x.at(k);
      const double lPhi = x < 0 ? log_norm_cdf(x) : std::log1p(-norm_cdf(-x));
      D->f[k] = std::exp(std::log(double(L)) + std::log(norm_pdf(x)) + (L - 1) * lPhi);
    }
  } else {
    const double q = nu * nu;
    // f at x needs t e^{nu x} ~ 1, |x| <= x_tail + 1 (the term is < e^{tau + nu x} below)
    const double lo = -std::log(double(L)) - nu * (acc.x_tail + 1.0) - acc.tail;
    const double hi = std::log(acc.tail) + nu * (acc.x_tail + 1.0) + 1.0;
    Grid tau = make_grid(lo, hi, acc.h_tau);
    LapTable T = laplace_table(Activation::Softmax, 0.0, q, tau, acc);
    std::vector<double> lt(tau.n);
    for (int i = 0; i < tau.n; ++i) lt[i] = tau.at(i) + (L - 1) * T.logL0[i];
    constexpr double kLogTiny = -48.35;  // terms below e^{-48.35} = 1e-21 (relative to 1/e) skipped
    for (int k = 0; k < nx; ++k) {
      const double x = D->x.at(k);
      const double enx = nu * x;
      // K(x) = int exp(tau - e^{tau + nu x} + (L-1) log L0) dtau; f = L phi e^{nu x} K.
      double s = 0.0;
      const int i0 = std::max(0, static_cast<int>(std::floor((kLogTiny - enx - tau.lo) / tau.h)));
      for (int i = i0; i < tau.n; ++i) {
        const double ea = std::exp(tau.at(i) + enx);
        if (ea > kExpUnderflow) break;
        s += std::exp(lt[i] + enx - ea);
      }
      D->f[k] = L * norm_pdf(x) * s * tau.h;
    }
  }
  return D;
}

std::mutex g_cache_mutex;
std::map<std::tuple<double, int, double, double, double, double, double>,
         std::shared_ptr<const TiltDensity>>
    g_tilt_cache;

std::shared_ptr<const TiltDensity> tilt_density(double nu, int L, const PopulationAccuracy& acc) {
  auto key = std::make_tuple(nu, L, acc.h_tau, acc.h_x, acc.steep, acc.tail, acc.x_tail);
  {
    std::lock_guard<std::mutex> lock(g_cache_mutex);
    auto it = g_tilt_cache.find(key);
    if (it != g_tilt_cache.end()) return it->second;
  }
  auto D = compute_tilt_density(nu, L, acc);
  std::lock_guard<std::mutex> lock(g_cache_mutex);
  if (g_tilt_cache.size() > 256) g_tilt_cache.clear();
  g_tilt_cache[key] = D;
  return D;
}

// ---------------------------------------------------------------------------------------------
// Element-wise activations (§3.8): a(y) = 1 + y (linear), 1 + erf(b + y) (erf).
// E[a(Y)] and E[a(Y)^2] for Y ~ N(mu, q), closed forms. For erf:
// E[erf(c + sZ)] = erf(c / sqrt(1 + 2 s^2)),
// E[erf(c + sZ)^2] = 1 - 8 T(sqrt(2) c / sqrt(1 + 2 s^2), 1 / sqrt(1 + 4 s^2)) (Owen's T).
double ew_mean(Activation act, double b, double mu, double q) {
  if (act == Activation::Linear) return 1.0 + mu;
  return std::erfc(-(b + mu) / std::sqrt(1.0 + 2.0 * q));  // 1 + erf, without cancellation
}
// E[(1 + erf(b + Y))^2] = E[erfc(-(b + Y))^2] by a trapezoid rule in x (Y = mu + sqrt(q) x):
// all terms positive, so it stays accurate when 1 + erf is tiny (b << 0), unlike the Owen-T form
// 1 + 2 E[erf] + (1 - 8 T(.,.)).
double ew_second(Activation act, double b, double mu, double q, const PopulationAccuracy& acc) {
  if (act == Activation::Linear) return (1.0 + mu) * (1.0 + mu) + q;
  if (q == 0.0) {
    const double e = std::erfc(-(b + mu));
    return e * e;
  }
  const double sq = std::sqrt(q);
  const double hx = std::min(acc.h_x, acc.steep / (kSqrt2 * sq));
  Grid xg = make_grid(-acc.x_tail, acc.x_tail, hx);
  double s = 0.0;
  for (int k = 0; k < xg.n; ++k) {
    const double x = xg.at(k);
    const double e = std::erfc(-(b + mu + sq * x));
    s += norm_pdf(x) * e * e;
  }
  return s * hx;
}

ABDetail elementwise_AB(const PopulationSetting& set, int L, double m, double q,
                        const PopulationAccuracy& acc) {
  ABDetail r;
  r.cA = r.cB = kNaN;
  const double b = set.erf_b;
  if (set.task == Task::Spiked) {
    const double mu_s = m * std::sqrt(set.nu);
    r.A = ew_second(set.activation, b, mu_s, q, acc) +
          (L - 1) * ew_second(set.activation, b, 0.0, q, acc);
    r.B = ew_mean(set.activation, b, mu_s, q);
  } else {
    r.A = L * ew_second(set.activation, b, 0.0, q, acc);
    return r;  // B filled by the caller (needs the tilt density)
  }
  return r;
}

// B for element-wise max-SLR: int f_L(x) E_xi[a(m x + r xi)] dx, r^2 = q - m^2.
double elementwise_max_B(const PopulationSetting& set, int L, double m, double q,
                         const PopulationAccuracy& acc) {
  auto D = tilt_density(set.nu, L, acc);
  const double r2 = std::max(0.0, q - m * m);
  double s = 0.0;
  if (set.activation == Activation::Linear) {
    for (int k = 0; k < D->x.n; ++k) s += D->f[k] * (1.0 + m * D->x.at(k));
  } else {
    const double scale = 1.0 / std::sqrt(1.0 + 2.0 * r2);
    for (int k = 0; k < D->x.n; ++k)
      s += D->f[k] * std::erfc(-(set.erf_b + m * D->x.at(k)) * scale);
  }
  return s * D->x.h;
}

void check_overlaps(double m_k, double q_k) {
  if (!std::isfinite(m_k) || !std::isfinite(q_k))
    throw std::invalid_argument("SLR population: m_k and q_k must be finite");
  if (std::abs(m_k) > kPopulationMaxMk || q_k > kPopulationMaxQk)
    throw std::invalid_argument("SLR population: need |m_k| <= 200 and q_k <= 1e5");
  if (q_k < m_k * m_k * (1.0 - 1e-12) - 1e-300)
    throw std::invalid_argument("SLR population: q_k must be >= m_k^2");
}

}  // namespace

// ---------------------------------------------------------------------------------------------
ABDetail population_AB_detail(const PopulationSetting& set, double m_k, double q_k,
                              const PopulationAccuracy& acc) {
  check_lengths(set.lengths);
  check_nu(set.task, set.nu);
  check_overlaps(m_k, q_k);
  if (!(std::abs(set.erf_b) <= kPopulationMaxErfB))
    throw std::invalid_argument("SLR population: erf b must be in [-10, 10]");
  if (set.task == Task::Spiked && std::abs(m_k) * std::sqrt(set.nu) > kPopulationMaxSpikedMean * (1 + 1e-12))
    throw std::invalid_argument("SLR population: spiked m_k sqrt(nu) must be <= 300");
  q_k = std::max(q_k, m_k * m_k);
  const std::vector<int>& Ls = set.lengths;
  std::vector<ABDetail> per(Ls.size());
  if (!normalised(set.activation)) {
    for (std::size_t j = 0; j < Ls.size(); ++j) {
      per[j] = elementwise_AB(set, Ls[j], m_k, q_k, acc);
      if (set.task == Task::Max) per[j].B = elementwise_max_B(set, Ls[j], m_k, q_k, acc);
    }
  } else if (q_k == 0.0) {
    // s is uniform: A = B = 1/L.
    for (std::size_t j = 0; j < Ls.size(); ++j) {
      per[j].A = per[j].B = 1.0 / Ls[j];
      per[j].cA = per[j].cB = 1.0 - 1.0 / Ls[j];
    }
  } else if (set.task == Task::Spiked) {
    per = spiked_normalised(set.activation, m_k * std::sqrt(set.nu), q_k, Ls, acc);
  } else {
    max_normalised_A(set.activation, q_k, Ls, acc, per);
    if (set.nu == 0.0) {
      for (std::size_t j = 0; j < Ls.size(); ++j) {
        per[j].B = 1.0 / Ls[j];
        per[j].cB = 1.0 - per[j].B;
      }
    } else if (std::isinf(set.nu)) {
      // X-representation (exact at q = m^2; softmax via Lambda_{r^2}); softplus with a large
      // key noise r uses the Y-representation instead (its xi-average would be costly).
      double r2 = q_k - m_k * m_k;
      if (r2 <= 1e-14 * std::max(1.0, q_k)) r2 = 0.0;
      const double s_eta2 = r2 / q_k;
      if (m_k == 0.0)
        for (std::size_t j = 0; j < Ls.size(); ++j) {
          per[j].B = 1.0 / Ls[j];  // s independent of the location
          per[j].cB = 1.0 - per[j].B;
        }
      else if (set.activation == Activation::Softmax || s_eta2 < 0.0625)
        max_normalised_B_inf_x(set.activation, m_k, std::sqrt(r2), Ls, acc, per);
      else
        max_normalised_B_inf_smooth(set.activation, m_k, q_k, Ls, acc, per);
    } else {
      PopulationAccuracy a2 = acc;
      a2.h_tau *= acc.coarse_2d;
      a2.h_x *= acc.coarse_2d;
      a2.steep *= acc.coarse_2d;
      max_normalised_B_finite(set.activation, set.nu, m_k, q_k, Ls, a2, per);
    }
  }
  ABDetail r;
  r.A = r.B = r.cA = r.cB = 0.0;
  for (const auto& p : per) {
    r.A += p.A;
    r.B += p.B;
    r.cA += p.cA;
    r.cB += p.cB;
  }
  const double n = static_cast<double>(per.size());
  r.A /= n;
  r.B /= n;
  r.cA /= n;
  r.cB /= n;
  return r;
}

AB population_AB(const PopulationSetting& set, double m_k, double q_k,
                 const PopulationAccuracy& acc) {
  ABDetail d = population_AB_detail(set, m_k, q_k, acc);
  AB r;
  r.A = d.A;
  r.B = d.B;
  return r;
}

AB population_AB(const PopulationSetting& set, double m_k, double q_k) {
  return population_AB(set, m_k, q_k, PopulationAccuracy{});
}

double population_risk(const PopulationSetting& set, double m_k, double q_k, double m_v,
                       double q_v) {
  if (!std::isfinite(m_v) || !std::isfinite(q_v) || q_v < m_v * m_v * (1.0 - 1e-12) - 1e-300)
    throw std::invalid_argument("SLR population: need finite m_v, q_v with q_v >= m_v^2");
  AB ab = population_AB(set, m_k, q_k);
  return 1.0 - 2.0 * m_v * ab.B + q_v * ab.A;  // (S7)
}

double risk_optimal_v(const ABDetail& ab) {
  // The complement form only helps when A is near 1 (small risks); for small A it would
  // amplify the absolute error of 1 - A.
  if (std::isfinite(ab.cA) && std::isfinite(ab.cB) && ab.A >= 0.5) {
    // (S8) 1 - B^2/A = [(1 - B)(1 + B) - (1 - A)] / A
    return (ab.cB * (1.0 + ab.B) - ab.cA) / ab.A;
  }
  return 1.0 - ab.B * ab.B / ab.A;
}

double bayes_risk(Task task, const std::vector<int>& lengths, double nu,
                  const PopulationAccuracy& acc) {
  check_lengths(lengths);
  check_nu(task, nu);
  if (task == Task::Max && std::isinf(nu)) return 0.0;
  // (S9) E_Bayes = 1 - E sum p^2 = 1 - A of softmax with chi = c_nu chi*:
  // spiked: (S28) with mu_s = nu, q = nu; max: q = nu^2.
  PopulationSetting s;
  s.task = task;
  s.lengths = lengths;
  s.nu = nu;
  s.activation = Activation::Softmax;
  const double c = c_nu(task, nu);
  ABDetail d = population_AB_detail(s, c, c * c, acc);
  return d.cA;
}

double bayes_risk(Task task, const std::vector<int>& lengths, double nu) {
  return bayes_risk(task, lengths, nu, PopulationAccuracy{});
}

double bayes_risk_via_B(Task task, const std::vector<int>& lengths, double nu,
                        const PopulationAccuracy& acc) {
  check_lengths(lengths);
  check_nu(task, nu);
  PopulationSetting s;
  s.task = task;
  s.lengths = lengths;
  s.nu = nu;
  s.activation = Activation::Softmax;
  const double c = c_nu(task, nu);
  if (task == Task::Max && std::isinf(nu)) return 0.0;
  return population_AB_detail(s, c, c * c, acc).cB;
}

double max_mu1(int L, double nu, const PopulationAccuracy& acc) {
  if (L < 1) throw std::invalid_argument("max_mu1: L must be >= 1");
  check_nu(Task::Max, nu);
  auto D = tilt_density(nu, L, acc);
  double s = 0.0;
  for (int k = 0; k < D->x.n; ++k) s += D->f[k] * D->x.at(k);
  return s * D->x.h;
}

LinearOptimum linear_closed_form(Task task, const std::vector<int>& lengths, double nu,
                                 const PopulationAccuracy& acc) {
  check_lengths(lengths);
  check_nu(task, nu);
  double Lbar = 0.0;
  for (int L : lengths) Lbar += L;
  Lbar /= lengths.size();
  LinearOptimum r;
  if (task == Task::Spiked) {
    // (S10) with L -> E[L]: m_k = sqrt(nu)(L-1)/L; A = L + 2 m sqrt(nu) + m^2 (L + nu), B = 1 + m sqrt(nu).
    r.m_k = std::sqrt(nu) * (Lbar - 1.0) / Lbar;
    const double A = Lbar + 2 * r.m_k * std::sqrt(nu) + r.m_k * r.m_k * (Lbar + nu);
    const double B = 1 + r.m_k * std::sqrt(nu);
    r.m_v = B / A;
    r.risk = Lbar * (Lbar - 1.0) / (Lbar * Lbar + nu * (Lbar - 1.0));
  } else {
    // (S12): mu_1 = nu E_Bayes (finite nu, Stein) or E[max of L Gaussians] (nu = inf).
    double mu = 0.0;
    for (int L : lengths) {
      if (std::isinf(nu))
        mu += max_mu1(L, nu, acc);
      else
        mu += nu * bayes_risk(task, {L}, nu, acc);
    }
    mu /= lengths.size();
    r.m_k = mu;
    r.m_v = 1.0 / Lbar;
    r.risk = 1.0 - (1.0 + mu * mu) / Lbar;
  }
  return r;
}

// ---------------------------------------------------------------------------------------------
// Optimisation (§3.4).
namespace {

// Brent's minimiser on [a, b] (golden section + parabolic steps) by Boost.Math's
// brent_find_minima, to an absolute x tolerance of about tol: Boost's stopping rule is
// |x - mid| <= 2 (eps |x| + eps/4) - (b - a)/2 with eps = 2^(1 - bits), so eps is chosen as
// tol / max(1, |a|, |b|) rounded down to a power of two.
double brent_min(const std::function<double(double)>& f, double a, double b, double tol,
                 double& fx_out) {
  const double scale = std::max({1.0, std::abs(a), std::abs(b)});
  const int bits = std::min(52, static_cast<int>(std::ceil(1.0 - std::log2(tol / scale))));
  std::uintmax_t max_iter = 200;
  const auto r = boost::math::tools::brent_find_minima(f, a, b, bits, max_iter);
  fx_out = r.second;
  return r.first;
}

// Scan f on the points xs, then Brent on the bracket around the best point. Returns argmin.
double scan_then_brent(const std::function<double(double)>& f, const std::vector<double>& xs,
                       double tol, double& fbest, bool& at_upper, bool& at_lower) {
  std::vector<double> fs(xs.size());
  std::size_t ib = 0;
  for (std::size_t i = 0; i < xs.size(); ++i) {
    fs[i] = f(xs[i]);
    if (fs[i] < fs[ib]) ib = i;
  }
  const double lo = xs[ib == 0 ? 0 : ib - 1];
  const double hi = xs[ib + 1 < xs.size() ? ib + 1 : ib];
  double fx;
  double x = brent_min(f, lo, hi, tol, fx);
  if (fs[ib] < fx) {
    x = xs[ib];
    fx = fs[ib];
  }
  fbest = fx;
  at_upper = x >= xs.back() - 2.0 * tol;
  at_lower = x <= xs.front() + 2.0 * tol;
  return x;
}

}  // namespace

PopulationOptimum optimise_population(const PopulationSetting& set_in, const OptimiseOptions& opt) {
  check_lengths(set_in.lengths);
  check_nu(set_in.task, set_in.nu);
  if (opt.dq_k < 0 || !std::isfinite(opt.dq_k))
    throw std::invalid_argument("optimise_population: dq_k must be >= 0");
  if (opt.fix_m_k && (!std::isfinite(opt.m_k)))
    throw std::invalid_argument("optimise_population: m_k must be finite");
  PopulationSetting set = set_in;
  const bool is_erf = set.activation == Activation::Erf;
  double m_max = opt.m_k_max;
  if (!(m_max > 0)) m_max = std::isinf(set.nu) ? 10.0 : std::max(10.0, 2.0 * c_nu(set.task, set.nu));
  // the whole search must stay inside the domain (checked before any evaluation)
  const double m_top = opt.fix_m_k ? std::abs(opt.m_k) : m_max;
  if (m_top > kPopulationMaxMk || m_top * m_top + opt.dq_k > kPopulationMaxQk)
    throw std::invalid_argument("optimise_population: need m_k <= 200 and m_k^2 + dq_k <= 1e5");
  if (set.task == Task::Spiked && std::isfinite(set.nu) &&
      m_top * std::sqrt(set.nu) > kPopulationMaxSpikedMean * (1 + 1e-12))
    throw std::invalid_argument("optimise_population: spiked m_k sqrt(nu) must stay <= 300");
  if (is_erf && !(opt.fix_b ? std::abs(set_in.erf_b) <= kPopulationMaxErfB
                            : opt.b_max > 0 && opt.b_max <= kPopulationMaxErfB))
    throw std::invalid_argument("optimise_population: the erf offset must stay in [-10, 10]");
  int evals = 0;
  // Expensive (A, B) evaluations are first bracketed with a coarse quadrature, then polished.
  const bool expensive = normalised(set.activation) && set.task == Task::Max && set.nu > 0;
  PopulationAccuracy acc = expensive ? PopulationAccuracy::coarse() : opt.acc;
  // Full-accuracy evaluations are remembered (the final one is usually the polish's best point).
  bool full = !expensive;
  std::map<std::pair<double, double>, ABDetail> full_cache;
  auto eval_full = [&](double m, double b) {
    auto key = std::make_pair(m, b);
    auto it = full_cache.find(key);
    if (it != full_cache.end()) return it->second;
    set.erf_b = b;
    ABDetail d = population_AB_detail(set, m, m * m + opt.dq_k, opt.acc);
    ++evals;
    full_cache.emplace(key, d);
    return d;
  };
  auto risk_at = [&](double m, double b) {
    if (full) return risk_optimal_v(eval_full(m, b));
    set.erf_b = b;
    ABDetail d = population_AB_detail(set, m, m * m + opt.dq_k, acc);
    ++evals;
    return risk_optimal_v(d);
  };
  bool b_cap = false;
  // Risk at m (optimal v, and optimal b for erf unless fixed); returns the b used.
  auto risk_m = [&](double m, double& b_used) {
    if (!is_erf || opt.fix_b) {
      b_used = set_in.erf_b;
      return risk_at(m, b_used);
    }
    std::vector<double> bs;
    for (int i = -8; i <= 8; ++i) bs.push_back(opt.b_max * i / 8.0);
    double fb;
    bool up, lo;
    b_used = scan_then_brent([&](double b) { return risk_at(m, b); }, bs, opt.tol, fb, up, lo);
    b_cap = up || lo;
    return fb;
  };
  double m_best = opt.m_k, b_best = set_in.erf_b;
  bool m_cap = false;
  if (!opt.fix_m_k) {
    // Starts of §3.4 (0.3, 1, 2, 4) within a scan of [0, m_max], then Brent.
    std::vector<double> grid;
    const std::vector<double> cheap{0.0, 0.1, 0.3, 0.6, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, 8.0};
    const std::vector<double> costly{0.0, 0.3, 1.0, 2.0, 4.0, 7.0};
    for (double m : expensive ? costly : cheap)
      if (m < m_max * (1.0 - 1e-9)) grid.push_back(m);
    for (double m = 12.0; m < m_max * (1.0 - 1e-9); m *= 1.6) grid.push_back(m);
    grid.push_back(m_max);
    double fb, b_dummy;
    bool up, lo;
    m_best = scan_then_brent([&](double m) { return risk_m(m, b_dummy); }, grid,
                             expensive ? 1e-3 : opt.tol, fb, up, lo);
    m_cap = m_best >= m_max * (1.0 - 1e-4);
    if (expensive && !m_cap) {
      // polish with the full accuracy in a narrow bracket around the coarse optimum, to
      // max(tol, 1e-5): the risk is quadratic there, so the m_k error moves it by ~1e-10
      acc = opt.acc;
      full = true;
      const double w = 0.03 * std::max(1.0, m_best);
      const double lo_m = std::max(0.0, m_best - w), hi_m = std::min(m_max, m_best + w);
      double f0 = risk_m(m_best, b_dummy);
      double fx;
      const double x = brent_min([&](double m) { return risk_m(m, b_dummy); }, lo_m, hi_m,
                                 std::max(opt.tol, 1e-5), fx);
      if (fx <= f0) m_best = x;
      m_cap = m_best >= m_max * (1.0 - 1e-4);
    }
  }
  acc = opt.acc;
  full = true;
  // erf: the optimal b at m_best (with the full accuracy); otherwise b is fixed.
  if (is_erf && !opt.fix_b) risk_m(m_best, b_best);
  // Final evaluation at the optimum (fills A, B).
  ABDetail d = eval_full(m_best, b_best);
  PopulationOptimum res;
  res.m_k = m_best;
  res.q_k = m_best * m_best + opt.dq_k;
  res.A = d.A;
  res.B = d.B;
  res.m_v = d.B / d.A;
  res.q_v = res.m_v * res.m_v;
  res.erf_b = b_best;
  res.risk = risk_optimal_v(d);
  res.m_k_at_cap = m_cap;
  res.b_at_cap = is_erf && !opt.fix_b && b_cap;
  res.evaluations = evals;
  return res;
}

void clear_population_caches() {
  std::lock_guard<std::mutex> lock(g_cache_mutex);
  g_tilt_cache.clear();
}

}  // namespace slr
}  // namespace saddle
