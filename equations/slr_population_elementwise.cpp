// Element-wise activations of docs/equations/slr_population.md §3.3 (S7a) (linear 1 + y, erf
// 1 + erf(b + y)): closed forms and 1-D sums, and the density of chi*_{eps*} (S30a) used by their
// max-SLR B and by mu_1 of (S11).
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

#include "equations/slr_population_internal.hpp"

namespace saddle {
namespace slr {
namespace detail {

namespace {
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

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
}  // namespace

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

void clear_tilt_density_cache() {
  std::lock_guard<std::mutex> lock(g_cache_mutex);
  g_tilt_cache.clear();
}

}  // namespace detail
}  // namespace slr
}  // namespace saddle
