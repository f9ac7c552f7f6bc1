// Optimisation of the SLR population risk over the key/value overlaps (docs/equations/slr_population.md
// §3.4): q_v = m_v^2, m_v = B/A (S8), q_k = m_k^2 + dq_k, m_k by a scan of [0, m_k_max] and Brent,
// the erf offset b by a nested scan and Brent; costly (max-SLR normalised, finite nu) evaluations
// are bracketed with a coarse quadrature and polished.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <map>
#include <stdexcept>
#include <utility>
#include <vector>

#include <boost/math/tools/minima.hpp>

#include "equations/slr_population.hpp"
#include "equations/slr_population_internal.hpp"

namespace saddle {
namespace slr {

using detail::check_lengths;
using detail::check_nu;
using detail::normalised;

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
  if (!(m_max > 0)) {  // automatic: max(10, 2 c_nu) (10 at nu = inf), within the domain
    m_max = std::isinf(set.nu) ? 10.0 : std::max(10.0, 2.0 * c_nu(set.task, set.nu));
    m_max = std::min(m_max, population_max_mk(set, opt.dq_k));
  }
  // the whole search must stay inside the domain (checked before any evaluation)
  const double m_top = opt.fix_m_k ? std::abs(opt.m_k) : m_max;
  {  // the domain is an upper bound on q_k: its largest point decides (PopulationDomainError)
    PopulationSetting top = set;
    top.erf_b = 0.0;
    check_population_domain(top, m_top, m_top * m_top + opt.dq_k);
  }
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

}  // namespace slr
}  // namespace saddle
