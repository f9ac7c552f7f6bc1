// Max-SLR B of a normalised activation at finite nu by the 2-D Laplace integral (S30) of
// docs/equations/slr_population.md §7a, summed only on the ridge of the (tau, ups) plane where
// the integrand lives.
#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "equations/slr_laplace_lognormal.hpp"
#include "equations/slr_population_internal.hpp"

namespace saddle {
namespace slr {
namespace detail {

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
  // With key noise (sigma > 0) the p-side functions of s = ups + nu c z are smoothed by
  // Lambda_{sigma^2}: their width in s is w_p = max(1, sigma), so they vary on the scale
  // w_p/(nu c) in z and have the width w_p across the ridge in ups (sigma <= 1: as without noise).
  const double w_p = std::max(1.0, sigma);
  const double steep = std::max({sq, std::abs(nu * c) / w_p, 1e-300});
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
  double h_t = acc.h_tau, h_u = acc.h_tau * w_p;
  if (act == Activation::Softmax) {
    if (sq <= nu * c / w_p)
      h_u = std::max(h_u, h_r * nu * c);
    else
      h_t = std::max(acc.h_tau, h_r * sq);
  }
  Grid tg = make_grid(t_lo, t_hi, h_t);
  Grid ug = make_grid(u_lo, u_hi, h_u);
  const int nt = tg.n, nu_ = ug.n;
  // p-side functions of s = ups + nu c z: F_0 = Lambda_{sigma^2}(e^s), 1 - F_0 and the tilted F_1
  // (equations/slr_laplace_lognormal.hpp); exact closed forms when sigma = 0
  std::unique_ptr<LogLaplaceTable> lam;
  if (sigma > 0.0) lam.reset(new LogLaplaceTable(sigma, acc));

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
    std::vector<double> v, p;  // values; optional exclusive prefix sums of wt[k] v (see put)
    std::vector<std::size_t> off, offp;
    std::vector<int> b, e;
    const double* wt = nullptr;  // weights of the prefix sums (nullptr: none kept)
    explicit Rows(int n) : off(n), offp(n), b(n), e(n) {}
    void clear() {
      v.clear();
      p.clear();
    }
    // sum_{k in [k0, k1)} wt[k] v_k for k0, k1 within [b[i], e[i]]
    double wsum(int i, int k0, int k1) const {
      return p[offp[i] + (k1 - b[i])] - p[offp[i] + (k0 - b[i])];
    }
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
      if (wt) {
        offp[i] = p.size();
        double acc = 0.0;
        p.push_back(0.0);
        for (int k = b[i]; k < e[i]; ++k) p.push_back(acc += wt[k] * v[off[i] + (k - b[i])]);
      }
    }
    const double* at(int i) const { return v.data() + off[i]; }  // value of k: at(i)[k - b[i]]
  };
  auto first_k = [&](const std::vector<double>& inc, double thr, bool strict) {
    return static_cast<int>((strict ? std::upper_bound(inc.begin(), inc.end(), thr)
                                    : std::lower_bound(inc.begin(), inc.end(), thr)) -
                            inc.begin());
  };
  // ---- u side: step 1 - P (Dp) and, for the eps* token, the bump K1 = u E_eta[e^{nu X}
  // e^{-u e^{nu X}}] = F_1(s), s = ups + nu c z (scaled by u).
  auto dp_val = [&](double sk, bool& one) {
    if (sigma == 0.0) {  // exact 1 - exp(-e^s), as the t side
      one = sk > kLogOne;
      return sk < kLogTiny ? 0.0 : (sk > kLog38 ? 1.0 : -std::expm1(-std::exp(sk)));
    }
    one = sk >= lam->hi();
    if (sk <= lam->lo()) return 0.0;
    if (one) return 1.0;
    double lf0, lc0, lf1;
    lam->eval(sk, lf0, lc0, lf1);
    one = lf0 < kLogTiny;
    return std::exp(lc0);
  };
  auto k1_val = [&](double sk) {
    if (sigma == 0.0) return (sk < kLogTiny || sk > kLog56) ? 0.0 : std::exp(sk - std::exp(sk));
    if (sk <= lam->lo() || sk >= lam->hi()) return 0.0;
    double lf0, lc0, lf1;
    lam->eval(sk, lf0, lc0, lf1);
    return std::exp(lf1);
  };
  std::vector<double> tmp_t, tmp_p, sgrid(n0);  // work buffers of the row builders
  // ---- u side: rows of 1 - P (Dp, prefix sums with the weights) and of the bump K1
  auto p_row = [&](Rows& Dp, Rows& K1, int r, double ups, double& cP0) {
    std::vector<double>& tmp = tmp_p;
    for (int k = 0; k < n0; ++k) sgrid[k] = ups + nu * c * zz[k];
    // first index where the step (and the bump) can exceed kTiny
    const int z0 = mono ? first_k(sgrid, sigma == 0.0 ? kLogTiny : lam->lo(), false) : 0;
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
    cP0 = cp + wsuf0[ze];
    Dp.put(r, z0, tmp, kTiny, false);
    tmp.clear();
    double prev = 0.0;
    for (int k = z0; k < n0; ++k) {
      const double v = k1_val(sgrid[k]);
      // the bump is unimodal in k: stop once it falls below kTiny after its peak
      if (mono && v < kTiny && v < prev) break;
      if (mono && sgrid[k] > (sigma == 0.0 ? kLog56 : lam->hi())) break;
      tmp.push_back(v);
      prev = v;
    }
    K1.put(r, z0, tmp, kTiny, true);
  };
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
  // ---- t side (all tokens share the z grid): step w (1 - e^{-ta}) (Cs, with the weight) and
  // bump w (ta) e^{-ta} (S1)
  std::vector<double> ones(n0, 1.0);  // Cs is stored with its weight: prefix sums of v itself
  auto t_row = [&](Rows& Cs, Rows& S1, int r, double tau, double& cL0) {
    const int zs = first_k(la, kLogTiny - tau, false);             // below: ta < kTiny
    const int ze = std::max(zs, first_k(la, kLogOne - tau, true));  // from here: e^{-ta} < kTiny
    std::vector<double>& tmp = tmp_t;
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
    cL0 = cs;
    Cs.put(r, zs, tmp, kTiny * w0[zs < n0 ? zs : n0 - 1], false);
    // (ta) e^{-ta} < kTiny for ta < kTiny and for ta > 56
    const int he = std::max(zs, first_k(la, kLog56 - tau, true));
    tmp.assign(he - zs, 0.0);
    for (int k = zs; k < he; ++k) {
      const double lua = tau + la[k];
      tmp[k - zs] = w0[k] * std::exp(lua - std::exp(lua));
    }
    S1.put(r, zs, tmp, kTiny, true);
  };
  // One (tau, ups) entry from the t-side rows (Cs, S1) at index it and the u-side rows (Dp, K1)
  // at index ju.
  std::vector<double> Bsum(lengths.size(), 0.0);
  auto entry = [&](const Rows& Cs, const Rows& S1, int it, double cL0i, const Rows& Dp,
                   const Rows& K1, int j, double cP0j) {
    const int lo = std::max(S1.b[it], K1.b[j]), hi = std::min(S1.e[it], K1.e[j]);
    if (lo >= hi) return;
    const double x1 = dot(S1.at(it) + (lo - S1.b[it]), K1.at(j) + (lo - K1.b[j]), hi - lo);
    if (!(x1 > 0.0)) return;
    const double* csrow = Cs.at(it);
    const int zs_t = Cs.b[it], ze_t = Cs.e[it];
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
      // long runs (a wide p-side step, sigma >> 1) by the rows' prefix sums
      if (sigma > 0.0 && b - k > 64)
        s1 += ze_t <= ze_u ? Dp.wsum(j, k, b) : Cs.wsum(it, k, b);
      else if (ze_t <= ze_u)
        for (; k < b; ++k) s1 += w0[k] * dcol[k - zs_u];
      else
        for (; k < b; ++k) s1 += csrow[k - zs_t];
      M += s0 + s1;
    }
    const double cx = std::min(1.0, std::max(0.0, cL0i + cP0j - M));  // 1 - Xi0
    // Xi0 = 1 - cx: absolute error ~1e-16 where Xi0 is small, harmless in Xi0^{L-1}.
    const double lx = cx < 0.5 ? std::log1p(-cx) : std::log(1.0 - cx);
    for (std::size_t jl = 0; jl < lengths.size(); ++jl)
      if (lengths[jl] > 1) Bsum[jl] += x1 * powlog(lx, lengths[jl] - 1);
  };
  // One side's rows are stored, the other's are built one at a time in the outer loop: the u side
  // is stored unless it would take more than 16 MB and more than the t side (entries: t side
  // ~ nt x 60/(sqrt(q) hz), u side ~ nu x (60 + 20 sigma)/(nu c hz), both capped by nz).
  const double wt_est = std::min(double(n0), 60.0 / (sq * hz) + 2.0);
  const double wu_est = std::min(double(n0), (60.0 + 20.0 * sigma) / (std::abs(nu * c) * hz + 1e-300) + 2.0);
  const double u_entries = double(nu_) * wu_est;
  if (u_entries * 24.0 <= 16e6 || u_entries <= double(nt) * wt_est) {
    Rows Dp(nu_), K1(nu_), Cs(1), S1(1);
    Dp.wt = w0.data();
    Cs.wt = ones.data();
    std::vector<double> cP0(nu_);
    for (int j = 0; j < nu_; ++j) p_row(Dp, K1, j, ug.at(j), cP0[j]);
    for (int i = 0; i < nt; ++i) {
      double cL0i;
      Cs.clear();
      S1.clear();
      t_row(Cs, S1, 0, tg.at(i), cL0i);
      if (S1.b[0] >= S1.e[0]) continue;
      for (int j = 0; j < nu_; ++j) entry(Cs, S1, 0, cL0i, Dp, K1, j, cP0[j]);
    }
  } else {
    Rows Dp(1), K1(1), Cs(nt), S1(nt);
    Dp.wt = w0.data();
    Cs.wt = ones.data();
    std::vector<double> cL0(nt);
    for (int i = 0; i < nt; ++i) t_row(Cs, S1, i, tg.at(i), cL0[i]);
    for (int j = 0; j < nu_; ++j) {
      double cP0j;
      Dp.clear();
      K1.clear();
      p_row(Dp, K1, 0, ug.at(j), cP0j);
      if (K1.b[0] >= K1.e[0]) continue;
      for (int i = 0; i < nt; ++i)
        if (S1.b[i] < S1.e[i]) entry(Cs, S1, i, cL0[i], Dp, K1, 0, cP0j);
    }
  }
  for (std::size_t jl = 0; jl < lengths.size(); ++jl) {
    const int L = lengths[jl];
    if (one_token_B(L, out[jl])) continue;
    out[jl].B = Bsum[jl] * tg.h * ug.h * L;
    out[jl].cB = 1.0 - out[jl].B;
  }
}

}  // namespace detail
}  // namespace slr
}  // namespace saddle
