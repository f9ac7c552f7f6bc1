// Max-SLR B of a normalised activation at nu = inf (docs/equations/slr_population.md §7a): the
// X-representation with the cumulative C(t, x) (Gauss-Legendre cells), and (S30b), the
// Y-representation for large key noise.
#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "equations/slr_laplace_lognormal.hpp"
#include "equations/slr_population_internal.hpp"
#include "integrators/quadrature.hpp"

namespace saddle {
namespace slr {
namespace detail {

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
  // l(t, x), l1(t, x) vary on the scale max(1, r)/m in x (softmax: Lambda_{r^2} smooths the cut;
  // softplus keeps the unsmoothed step)
  const double xscale = act == Activation::Softmax ? std::max(1.0, r) : 1.0;
  const double hx = std::min(acc.h_x, acc.steep * xscale / std::max(am, 1e-300));
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
  // (softmax with key noise: l(t, x) is smooth on the scale max(1, r) in log t as well)
  Grid tg = make_grid(t_lo, t_hi, ridge_tau_step(act, std::max(am, act == Activation::Softmax ? r : 0.0), Lmax, acc));
  // xi-smoothing
  std::unique_ptr<LogLaplaceTable> lam;
  Grid xig;
  std::vector<double> xiw;
  if (r > 0 && act == Activation::Softmax) {
    lam.reset(new LogLaplaceTable(r, acc));
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
      double lf0, lc0, lf1;  // F_0, 1 - F_0, F_1 at s = tau + m x, spread r
      lam->eval(tau + m * x, lf0, lc0, lf1);
      l0 = std::exp(lf0);
      cl0 = std::exp(lc0);
      l1 = std::exp(lf1);
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
    if (one_token_B(L, out[jl])) continue;
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

}  // namespace detail
}  // namespace slr
}  // namespace saddle
