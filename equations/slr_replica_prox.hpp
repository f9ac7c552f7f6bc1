// SLR replica channel, inner problem: the L-token proximal problem (S16) of docs/equations/slr_replica.md §4.4 for
// softmax and linear attention, solved globally (grid over the reduced objective (S17), then
// multi-start Newton on the full 2L variables with the loss Hessian (S22)), and the quantities of
// §4.5 at the minimiser: channel functions (S18) and the diagonal of the Jacobian
// 𝒥 = V^-1 - V^-1 (V^-1 + H)^-1 V^-1 of the Hessian form (S20).
//
// Header-only templates on the number of tokens L (fixed-size Eigen, no allocation: this is the
// hot loop of the replica fixed point). Reductions used:
//  - z is eliminated exactly: r = (y - s.w^z)/(1 + V_v|s|^2), z = w^z + V_v r s (§4.4).
//  - softmax: shift invariance, chi = mean(w^chi) 1 + B t with B an orthonormal basis of 1^perp,
//    so the search is (L-1)-dimensional (§4.4).
//  - linear: the loss depends on u = 1 + chi only through (u.w^z, |u|^2), so the minimiser lies in
//    span(1 + w^chi, w^z); the search is 2-dimensional for every L (this file's own reduction:
//    for fixed u.w^z and |u|^2 the prox term |u - u0|^2 is minimal when u has no component
//    orthogonal to that span).
// The search region is the ball |chi - w^chi| <= R = sqrt(2 V_k Phi(w^chi)) (§4.4).
#pragma once
#include <Eigen/Dense>
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

namespace saddle {
namespace slr {
namespace replica {

enum class ProxAct { Softmax, Linear };

constexpr int kMaxL = 4;  // largest number of tokens compiled (L = 1..kMaxL)

struct ProxOptions {
  int grid1 = 41;        // grid points for a 1-D search (softmax L = 2)
  int grid2 = 13;        // grid points per axis for a 2-D search (softmax L = 3, linear)
  int n_starts = 3;      // Newton polishes from the best grid local minima
  int newton_max = 30;   // Newton steps (§4.4)
  double grad_tol = 1e-10;
};

template <int L>
using VecL = Eigen::Matrix<double, L, 1>;

template <int L>
struct ProxInput {
  VecL<L> omega_chi, omega_z;
  double y = 0.0;
  double V_k = 1.0, V_v = 1.0;
};

template <int L>
struct ProxResult {
  VecL<L> chi, z;      // the global minimiser (chi_hat, z_hat) of (S16)
  VecL<L> s;           // sigma(chi_hat)
  double objective = 0.0;  // (S16) at the minimiser
  double residual = 0.0;   // y - s.z at the minimiser
  VecL<L> J_chi, J_z;  // diagonal of 𝒥 (S20), blocks chi and z
  double grad_inf = 0.0;   // |gradient of (S16)|_inf at the minimiser
  bool hessian_ok = true;  // V^-1 + H positive definite at the minimiser
};

// ---- activation: s = sigma(chi), J = ds/dchi, w = J^T z, T_z = sum_i z_i Hess(s_i) (§2) ----
template <int L>
inline void act_sigma(ProxAct act, const VecL<L>& chi, VecL<L>& s) {
  if (act == ProxAct::Linear) {
    s = chi.array() + 1.0;
  } else if constexpr (L == 2) {
    // one scalar exp: the larger entry 1/(1 + e), the other e/(1 + e), e = exp(-|chi_1 - chi_2|)
    const double e = std::exp(-std::abs(chi(0) - chi(1))), den = 1.0 + e;
    const int hi = chi(0) >= chi(1) ? 0 : 1;
    s(hi) = 1.0 / den;
    s(1 - hi) = e / den;
  } else {
    const double mx = chi.maxCoeff();
    s = (chi.array() - mx).exp();
    s /= s.sum();
  }
}

// With s = sigma(chi) already in s (act_sigma).
template <int L>
inline void act_derivs_at(ProxAct act, const VecL<L>& z, const VecL<L>& s,
                          Eigen::Matrix<double, L, L>& J, VecL<L>& w,
                          Eigen::Matrix<double, L, L>& Tz) {
  if (act == ProxAct::Linear) {
    J.setIdentity();
    w = z;
    Tz.setZero();
    return;
  }
  // Softmax: J = diag(s) - s s^T, w = s .* (z - zbar), u = s .* z,
  // T_z = diag(u) - zbar diag(s) - u s^T - s u^T + 2 zbar s s^T.
  const double zbar = s.dot(z);
  J = -s * s.transpose();
  J.diagonal() += s;
  w = s.cwiseProduct(z.array().matrix() - VecL<L>::Constant(zbar));
  const VecL<L> u = s.cwiseProduct(z);
  Tz = -u * s.transpose() - s * u.transpose() + 2.0 * zbar * s * s.transpose();
  Tz.diagonal() += u - zbar * s;
}

// Full objective (S16) at h = (chi, z).
template <int L>
inline double full_objective(ProxAct act, const ProxInput<L>& in, const VecL<L>& chi,
                             const VecL<L>& z) {
  VecL<L> s;
  act_sigma<L>(act, chi, s);
  const double r = in.y - s.dot(z);
  return (chi - in.omega_chi).squaredNorm() / (2.0 * in.V_k) +
         (z - in.omega_z).squaredNorm() / (2.0 * in.V_v) + 0.5 * r * r;
}

// Reduced objective (S17): loss part only, given s; the prox part is added by the caller.
template <int L>
inline double reduced_loss(const ProxInput<L>& in, const VecL<L>& s) {
  const double a = in.y - s.dot(in.omega_z);
  return a * a / (2.0 * (1.0 + in.V_v * s.squaredNorm()));
}

// z_hat(chi) = w^z + V_v r s, r = (y - s.w^z)/(1 + V_v |s|^2) (exact elimination, §4.4).
template <int L>
inline VecL<L> z_of_chi(const ProxInput<L>& in, const VecL<L>& s) {
  const double r = (in.y - s.dot(in.omega_z)) / (1.0 + in.V_v * s.squaredNorm());
  return in.omega_z + in.V_v * r * s;
}

// Reduced objective Phi(chi) (S17) and, when wanted, its gradient and Hessian. By the envelope
// theorem grad Phi = d_chi F at z_hat(chi), and Hess Phi is the Schur complement
//   F_chichi - F_chiz F_zz^-1 F_zchi,  F_zz^-1 = V_v (I - V_v s s^T / (1 + V_v |s|^2)),
// with F = (S16) and the blocks of the loss Hessian (S22). Newton on Phi is Newton on (S16) with
// z eliminated exactly (the spec's 2L-variable polish, §4.4, reaches the same point).
template <int L>
inline double reduced_phi(ProxAct act, const ProxInput<L>& in, const VecL<L>& chi) {
  VecL<L> s;
  act_sigma<L>(act, chi, s);
  return (chi - in.omega_chi).squaredNorm() / (2.0 * in.V_k) + reduced_loss<L>(in, s);
}

template <int L>
struct PhiDerivs {
  VecL<L> s, z, w, grad;
  Eigen::Matrix<double, L, L> J, Tz, Hphi, Hzc;  // Hzc = F_zz^-1 F_zchi
  Eigen::Matrix<double, L, L> Fzz_inv;
  double r = 0.0;  // y - s.z_hat
};

template <int L>
inline void phi_derivs(ProxAct act, const ProxInput<L>& in, const VecL<L>& chi, PhiDerivs<L>& d) {
  act_sigma<L>(act, chi, d.s);
  d.z = z_of_chi<L>(in, d.s);
  act_derivs_at<L>(act, d.z, d.s, d.J, d.w, d.Tz);
  d.r = in.y - d.s.dot(d.z);
  d.grad = (chi - in.omega_chi) / in.V_k - d.r * d.w;
  const double ss = d.s.squaredNorm();
  d.Fzz_inv = -(in.V_v * in.V_v / (1.0 + in.V_v * ss)) * d.s * d.s.transpose();
  d.Fzz_inv.diagonal().array() += in.V_v;
  const Eigen::Matrix<double, L, L> Hcz = d.w * d.s.transpose() - d.r * d.J.transpose();
  d.Hzc = d.Fzz_inv * Hcz.transpose();
  d.Hphi = d.w * d.w.transpose() - d.r * d.Tz - Hcz * d.Hzc;
  d.Hphi.diagonal().array() += 1.0 / in.V_k;
}

// Damped Newton on Phi from chi (in place): Newton step when it is a descent direction, else
// the gradient step V_k grad; backtracking by halving (20 times) until Phi does not increase.
template <int L>
inline double newton_polish(ProxAct act, const ProxInput<L>& in, const ProxOptions& opt,
                            VecL<L>& chi) {
  PhiDerivs<L> d;
  double F = reduced_phi<L>(act, in, chi);
  for (int it = 0; it < opt.newton_max; ++it) {
    phi_derivs<L>(act, in, chi, d);
    if (d.grad.cwiseAbs().maxCoeff() < opt.grad_tol) break;
    VecL<L> dx = d.Hphi.partialPivLu().solve(d.grad);
    if (!(dx.dot(d.grad) > 0.0) || !dx.allFinite()) dx = in.V_k * d.grad;
    double step = 1.0;
    bool moved = false;
    for (int b = 0; b <= 20; ++b) {
      const VecL<L> c2 = chi - step * dx;
      const double F2 = reduced_phi<L>(act, in, c2);
      if (F2 <= F + 1e-14 * std::max(1.0, std::abs(F))) {
        moved = F2 < F || b == 0;
        chi = c2;
        F = F2;
        break;
      }
      step *= 0.5;
    }
    if (!moved || (step * dx).cwiseAbs().maxCoeff() < 1e-14 * (1.0 + chi.cwiseAbs().maxCoeff()))
      break;
  }
  return F;
}

// Softmax with L = 2 in its Helmert coordinate t (chi = mean(omega_chi) 1 + t h, h = (1, -1)/sqrt 2,
// so chi_1 - chi_2 = sqrt 2 t and s_1 = sigmoid(sqrt 2 t)): the reduced objective (S17) is
//   Phi(t) = (t - t0)^2/(2 V_k) + A^2/(2 B),  A = y - w_2 - s_1 (w_1 - w_2),
//   B = 1 + V_v (s_1^2 + (1 - s_1)^2),  t0 = h.omega_chi, w = omega_z,
// with closed-form derivatives in t: the same minimiser as the generic Newton on chi (the mean of
// chi does not enter), at a fraction of the cost (no L x L algebra).
struct Softmax2 {
  double t0, inv_vk, y2, dz, vv;
  template <int L>
  explicit Softmax2(const ProxInput<L>& in)
      : t0((in.omega_chi(0) - in.omega_chi(L - 1)) * 0.7071067811865476),
        inv_vk(1.0 / in.V_k),
        y2(in.y - in.omega_z(L - 1)),
        dz(in.omega_z(0) - in.omega_z(L - 1)),
        vv(in.V_v) {}
  double value(double t) const {
    const double x = 1.4142135623730951 * t;
    const double s = x >= 0 ? 1.0 / (1.0 + std::exp(-x)) : 1.0 - 1.0 / (1.0 + std::exp(x));
    const double A = y2 - s * dz, B = 1.0 + vv * (s * s + (1.0 - s) * (1.0 - s));
    return 0.5 * (t - t0) * (t - t0) * inv_vk + 0.5 * A * A / B;
  }
  // Phi, dPhi/dt, d2Phi/dt2 at t (and s_1 there, when asked).
  void derivs(double t, double& F, double& F1, double& F2, double* s_out = nullptr) const {
    const double x = 1.4142135623730951 * t;
    const double s = x >= 0 ? 1.0 / (1.0 + std::exp(-x)) : 1.0 - 1.0 / (1.0 + std::exp(x));
    if (s_out) *s_out = s;
    const double p = 1.4142135623730951 * s * (1.0 - s), p2 = 1.4142135623730951 * p * (1.0 - 2.0 * s);
    const double A = y2 - s * dz, A1 = -p * dz, A2 = -p2 * dz;
    const double Q1 = (4.0 * s - 2.0) * p, Q2 = 4.0 * p * p + (4.0 * s - 2.0) * p2;
    const double B = 1.0 + vv * (s * s + (1.0 - s) * (1.0 - s)), B1 = vv * Q1, B2 = vv * Q2;
    const double dt = t - t0;
    F = 0.5 * dt * dt * inv_vk + 0.5 * A * A / B;
    F1 = dt * inv_vk + A * A1 / B - 0.5 * A * A * B1 / (B * B);
    F2 = inv_vk + (A1 * A1 + A * A2) / B - 2.0 * A * A1 * B1 / (B * B) - 0.5 * A * A * B2 / (B * B) +
         A * A * B1 * B1 / (B * B * B);
  }
};

// The J sums of (S20) for softmax L = 2 in closed form at the minimiser chi (the full blocks are
// rank one in the Helmert direction h: with F2 = Phi''(t), J_cc = (1/V_k - 1/(F2 V_k^2)) h h', and
// with u = 2 s_1 s_2 ((h.z) s - r h), v = F_zz^-1 u, J_zz = I/V_v - (F_zz^-1 + v v'/F2)/V_v^2):
// tr J_cc, tr J_zz and (J_zz)_11 without L x L algebra (for derivatives by differences).
template <int L>
inline void softmax2_j(const ProxInput<L>& in, const VecL<L>& chi, double& tr_cc, double& tr_zz,
                       double& zz11) {
  static_assert(L == 2, "softmax2_j is for L = 2");
  const Softmax2 f(in);
  const double t = (chi(0) - chi(1)) * 0.7071067811865476;
  double F, F1, F2, s1;
  f.derivs(t, F, F1, F2, &s1);
  const double s2 = 1.0 - s1, ss = s1 * s1 + s2 * s2, vv = in.V_v;
  const double den = 1.0 + vv * ss;
  const double r = (in.y - s1 * in.omega_z(0) - s2 * in.omega_z(1)) / den;
  const double z1 = in.omega_z(0) + vv * r * s1, z2 = in.omega_z(1) + vv * r * s2;
  const double hz = (z1 - z2) * 0.7071067811865476, h1 = 0.7071067811865476;
  const double u1 = 2.0 * s1 * s2 * (hz * s1 - r * h1), u2 = 2.0 * s1 * s2 * (hz * s2 + r * h1);
  // F_zz^-1 = V_v (I - V_v s s'/den)
  const double su = s1 * u1 + s2 * u2;
  const double v1 = vv * (u1 - vv * s1 * su / den), v2 = vv * (u2 - vv * s2 * su / den);
  tr_cc = 1.0 / in.V_k - 1.0 / (F2 * in.V_k * in.V_k);
  const double trF = vv * (2.0 - vv * ss / den);
  tr_zz = 2.0 / vv - (trF + (v1 * v1 + v2 * v2) / F2) / (vv * vv);
  zz11 = 1.0 / vv - (vv * (1.0 - vv * s1 * s1 / den) + v1 * v1 / F2) / (vv * vv);
}

// Damped Newton on Softmax2's Phi(t) from t (in place), as newton_polish on chi: Newton step
// where Phi'' > 0, else the gradient step V_k Phi'; backtracking by halving (20 times) until Phi
// does not increase; stops when |grad_chi Phi|_inf = |Phi'|/sqrt 2 < grad_tol.
inline double softmax2_polish(const Softmax2& f, const ProxOptions& opt, double& t) {
  double F, F1, F2;
  f.derivs(t, F, F1, F2);
  for (int it = 0; it < opt.newton_max; ++it) {
    if (std::abs(F1) * 0.7071067811865476 < opt.grad_tol) break;
    double dx = F2 > 0.0 ? F1 / F2 : F1 / f.inv_vk;
    if (!std::isfinite(dx)) dx = F1 / f.inv_vk;
    double step = 1.0;
    bool moved = false;
    double Fn, F1n, F2n;  // derivs at the trial point (its value is value()'s; one exp for both)
    for (int b = 0; b <= 20; ++b) {
      f.derivs(t - step * dx, Fn, F1n, F2n);
      if (Fn <= F + 1e-14 * std::max(1.0, std::abs(F))) {
        moved = Fn < F || b == 0;
        t -= step * dx;
        break;
      }
      step *= 0.5;
    }
    if (!moved || std::abs(step * dx) < 1e-14 * (1.0 + std::abs(t))) break;
    F = Fn;
    F1 = F1n;
    F2 = F2n;
  }
  return F;
}

// Orthonormal basis of 1^perp (Helmert), columns b_1..b_{L-1}.
template <int L>
inline Eigen::Matrix<double, L, (L > 1 ? L - 1 : 1)> helmert_basis() {
  Eigen::Matrix<double, L, (L > 1 ? L - 1 : 1)> B;
  B.setZero();
  for (int j = 1; j < L; ++j) {
    const double nrm = std::sqrt(static_cast<double>(j * (j + 1)));
    for (int i = 0; i < j; ++i) B(i, j - 1) = 1.0 / nrm;
    B(j, j - 1) = -static_cast<double>(j) / nrm;
  }
  return B;
}

namespace detail {
struct Cand {
  double phi;
  double t[2];
};

// Keeps the k best candidates (smallest phi) in a sorted array.
inline void keep_best(Cand* best, int& nb, int kmax, const Cand& c) {
  int pos = nb;
  while (pos > 0 && best[pos - 1].phi > c.phi) --pos;
  if (pos >= kmax) return;
  const int last = std::min(nb, kmax - 1);
  for (int k = last; k > pos; --k) best[k] = best[k - 1];
  best[pos] = c;
  if (nb < kmax) ++nb;
}

// Local minima (4-neighbourhood) of an n1 x n2 grid of values, best kmax kept.
inline void grid_minima(const double* val, int n1, int n2, double a0, double h1, double b0,
                        double h2, Cand* best, int& nb, int kmax) {
  for (int i = 0; i < n1; ++i)
    for (int j = 0; j < n2; ++j) {
      const double v = val[i * n2 + j];
      if (i > 0 && val[(i - 1) * n2 + j] < v) continue;
      if (i < n1 - 1 && val[(i + 1) * n2 + j] < v) continue;
      if (j > 0 && val[i * n2 + j - 1] < v) continue;
      if (j < n2 - 1 && val[i * n2 + j + 1] < v) continue;
      keep_best(best, nb, kmax, Cand{v, {a0 + h1 * i, b0 + h2 * j}});
    }
}
}  // namespace detail

// Full 𝒥 = V^-1 - V^-1 (V^-1 + H)^-1 V^-1 (S20) at a minimiser chi of (S17), as its three L x L
// blocks (𝒥 is symmetric): chi-chi, chi-z and z-z. Used by the replicon (AT) check at the fixed
// point and, per node, in the pre-integrated channel.
template <int L>
struct JacobianBlocks {
  Eigen::Matrix<double, L, L> cc, cz, zz;
};

// From the derivatives of Phi at chi (phi_derivs).
template <int L>
inline JacobianBlocks<L> jacobian_blocks_from(const ProxInput<L>& in, const PhiDerivs<L>& dv) {
  // Block inverse of V^-1 + H: chi-chi = Hphi^-1, chi-z = -Hphi^-1 Hzc^T,
  // z-z = F_zz^-1 + Hzc Hphi^-1 Hzc^T.
  const Eigen::Matrix<double, L, L> Hinv = dv.Hphi.inverse();
  JacobianBlocks<L> b;
  b.cc = -Hinv / (in.V_k * in.V_k);
  b.cc.diagonal().array() += 1.0 / in.V_k;
  b.cz = Hinv * dv.Hzc.transpose() / (in.V_k * in.V_v);
  b.zz = -(dv.Fzz_inv + dv.Hzc * Hinv * dv.Hzc.transpose()) / (in.V_v * in.V_v);
  b.zz.diagonal().array() += 1.0 / in.V_v;
  return b;
}

template <int L>
inline JacobianBlocks<L> jacobian_blocks(ProxAct act, const ProxInput<L>& in, const VecL<L>& chi) {
  PhiDerivs<L> dv;
  phi_derivs<L>(act, in, chi, dv);
  return jacobian_blocks_from<L>(in, dv);
}

// Channel quantities at a minimiser chi of (S17) with objective F, from the derivatives of Phi
// there (phi_derivs): z_hat, residual, and the diagonal of 𝒥 = V^-1 - V^-1 (V^-1 + H)^-1 V^-1
// (S20) from its blocks (jacobian_blocks_from), which go to *blocks when asked.
template <int L>
inline ProxResult<L> prox_result_from(const ProxInput<L>& in, const PhiDerivs<L>& dv, const VecL<L>& chi,
                                      double F, JacobianBlocks<L>* blocks = nullptr) {
  ProxResult<L> out;
  out.chi = chi;
  out.z = dv.z;
  out.s = dv.s;
  out.residual = dv.r;
  out.objective = F;
  out.grad_inf = dv.grad.cwiseAbs().maxCoeff();
  Eigen::LLT<Eigen::Matrix<double, L, L>> llt(dv.Hphi);
  out.hessian_ok = llt.info() == Eigen::Success;
  const JacobianBlocks<L> jb = jacobian_blocks_from<L>(in, dv);
  out.J_chi = jb.cc.diagonal();
  out.J_z = jb.zz.diagonal();
  if (blocks) *blocks = jb;
  return out;
}

template <int L>
inline ProxResult<L> prox_result(ProxAct act, const ProxInput<L>& in, const VecL<L>& chi, double F) {
  PhiDerivs<L> dv;
  phi_derivs<L>(act, in, chi, dv);
  return prox_result_from<L>(in, dv, chi, F);
}

// The global proximal step: solve_prox_min finds the minimiser of (S16) (chi and the value of
// (S17)), solve_prox adds its channel quantities (prox_result). Search: a grid over the reduced objective in the search coordinates t (chi = base + M t) on the
// cube t0 + R[-1, 1]^d, then Newton on Phi from the best grid local minima (a second and third
// minimum is polished only when its grid value is within the grid's resolution of the best
// polished value). Softmax L >= 4 (d >= 3): multi-start Newton (§4.4, unvalidated).
template <int L>
inline void solve_prox_min(ProxAct act, const ProxInput<L>& in, const ProxOptions& opt, VecL<L>& chi_out,
                           double& F_out) {
  static_assert(L >= 1 && L <= kMaxL, "L out of range");
  VecL<L> s;
  // Search coordinates.
  int d = 0;
  VecL<L> base;
  Eigen::Matrix<double, L, 2> M;
  M.setZero();
  double t0[2] = {0.0, 0.0};
  double wz_norm = 0.0, b_y = 0.0;
  if (act == ProxAct::Softmax) {
    base.setConstant(in.omega_chi.mean());
    d = L - 1;
    if (L >= 2) {
      const auto B = helmert_basis<L>();
      for (int j = 0; j < std::min(2, L - 1); ++j) {
        M.col(j) = B.col(j);
        t0[j] = B.col(j).dot(in.omega_chi);
      }
    }
  } else {
    // Linear: u = 1 + chi in span(w^z, u0), u0 = 1 + w^chi; coordinates along f1 = w^z/|w^z|
    // and f2 (the rest of u0). Then u.w^z = t_1 |w^z| and |u|^2 = |t|^2.
    const VecL<L> u0 = in.omega_chi.array() + 1.0;
    base.setConstant(-1.0);
    wz_norm = in.omega_z.norm();
    VecL<L> rest = u0;
    if (wz_norm > 1e-300) {
      M.col(0) = in.omega_z / wz_norm;
      d = 1;
      rest -= M.col(0).dot(u0) * M.col(0);
    }
    const double nr = rest.norm();
    if (d < L && nr > 1e-12 * std::max(1.0, u0.norm())) {
      M.col(d) = rest / nr;
      ++d;
    }
    for (int j = 0; j < d; ++j) t0[j] = M.col(j).dot(u0);
    b_y = in.y;
  }

  act_sigma<L>(act, in.omega_chi, s);
  const double phi0 = reduced_loss<L>(in, s);
  const double R = std::sqrt(2.0 * in.V_k * phi0);  // search radius (§4.4)
  const double inv2Vk = 1.0 / (2.0 * in.V_k);

  constexpr int kMaxStarts = 8;
  detail::Cand best[kMaxStarts];
  int nb = 0;
  const int kstarts = std::max(1, std::min(opt.n_starts, kMaxStarts));
  double h = 0.0;  // grid spacing
  auto chi_of = [&](const double* t) -> VecL<L> {
    VecL<L> c = base;
    for (int j = 0; j < std::min(d, 2); ++j) c += t[j] * M.col(j);
    return c;
  };

  if (d == 0 || !(R > 0.0)) {
    detail::keep_best(best, nb, kstarts, detail::Cand{phi0, {t0[0], t0[1]}});
  } else if (act == ProxAct::Softmax && d == 1) {
    // L = 2: chi_1 - chi_2 = sqrt(2) t, s_1 = sigmoid(sqrt(2) t).
    const int n = std::max(3, std::min(opt.grid1, 513));
    double val[513];
    h = 2.0 * R / (n - 1);
    const double dz = in.omega_z(0) - in.omega_z(1), y2 = in.y - in.omega_z(1);
    // s_1 = 1/(1 + e), e = exp(-x) along the grid by the recurrence e_{i+1} = e_i exp(-sqrt 2 h)
    // (one exp per grid instead of one per node; e decreases along the grid, so an underflow to
    // 0 stays right, and where e overflowed it is evaluated again until finite)
    const double q = std::exp(-1.4142135623730951 * h);
    double e = std::exp(-1.4142135623730951 * (t0[0] - R));
    for (int i = 0; i < n; ++i) {
      const double t = t0[0] - R + h * i;
      if (i > 0) e = std::isfinite(e) ? e * q : std::exp(-1.4142135623730951 * t);
      const double s1 = 1.0 / (1.0 + e);
      const double a = y2 - s1 * dz;
      const double ss = s1 * s1 + (1.0 - s1) * (1.0 - s1);
      val[i] = (t - t0[0]) * (t - t0[0]) * inv2Vk + a * a / (2.0 * (1.0 + in.V_v * ss));
    }
    detail::grid_minima(val, n, 1, t0[0] - R, h, 0.0, 0.0, best, nb, kstarts);
  } else if (d == 2) {
    const int n = std::max(3, std::min(opt.grid2, 41));
    double val[41 * 41];
    h = 2.0 * R / (n - 1);
    if (act == ProxAct::Linear) {
      for (int i = 0; i < n; ++i) {
        const double a = t0[0] - R + h * i;
        const double e = b_y - a * wz_norm;
        for (int j = 0; j < n; ++j) {
          const double b = t0[1] - R + h * j;
          val[i * n + j] = ((a - t0[0]) * (a - t0[0]) + (b - t0[1]) * (b - t0[1])) * inv2Vk +
                           e * e / (2.0 * (1.0 + in.V_v * (a * a + b * b)));
        }
      }
    } else if (R * 2.0 < 600.0) {
      // Softmax L = 3: exp(chi_l - mean) = exp(B_l1 t1) exp(B_l2 t2), separable: tables E1, E2 of
      // the two factors (each up to a common factor, which cancels in the normalisation).
      double E1[L][41], E2[L][41];
      if (R < 100.0) {
        // With c_l = B_l.t0 the logits at the centre and dt = t - t0, each factor is geometric
        // along its axis: E1_l(i) = exp(c_l - c_max - B_l1 R) q1_l^i, q1_l = exp(B_l1 h) (two
        // exp per token and axis instead of one per node). The largest token has |exponent|
        // <= 2 R |B| < 2 R at every node, so with R < 100 the sum T > 0 and every e_l^2 stay
        // inside the double range.
        double cl[L], cmax = -std::numeric_limits<double>::infinity();
        for (int l = 0; l < L; ++l) {
          cl[l] = M(l, 0) * t0[0] + M(l, 1) * t0[1];
          cmax = std::max(cmax, cl[l]);
        }
        for (int l = 0; l < L; ++l) {
          const double q1 = std::exp(M(l, 0) * h), q2 = std::exp(M(l, 1) * h);
          E1[l][0] = std::exp(cl[l] - cmax - M(l, 0) * R);
          E2[l][0] = std::exp(-M(l, 1) * R);
          for (int i = 1; i < n; ++i) {
            E1[l][i] = E1[l][i - 1] * q1;
            E2[l][i] = E2[l][i - 1] * q2;
          }
        }
      } else {
        // Larger balls: a common factor per grid line (the max exponent).
        for (int i = 0; i < n; ++i) {
          const double t1 = t0[0] - R + h * i, t2 = t0[1] - R + h * i;
          double m1 = -1e300, m2 = -1e300;
          for (int l = 0; l < L; ++l) {
            m1 = std::max(m1, M(l, 0) * t1);
            m2 = std::max(m2, M(l, 1) * t2);
          }
          for (int l = 0; l < L; ++l) {
            E1[l][i] = std::exp(M(l, 0) * t1 - m1);
            E2[l][i] = std::exp(M(l, 1) * t2 - m2);
          }
        }
      }
      for (int i = 0; i < n; ++i) {
        const double dt1 = (h * i - R);
        for (int j = 0; j < n; ++j) {
          const double dt2 = (h * j - R);
          double e[L], T = 0.0;
          for (int l = 0; l < L; ++l) {
            e[l] = E1[l][i] * E2[l][j];
            T += e[l];
          }
          double sw = 0.0, ss = 0.0;
          for (int l = 0; l < L; ++l) {
            sw += e[l] * in.omega_z(l);
            ss += e[l] * e[l];
          }
          sw /= T;
          ss /= T * T;
          const double a = in.y - sw;
          val[i * n + j] =
              (dt1 * dt1 + dt2 * dt2) * inv2Vk + a * a / (2.0 * (1.0 + in.V_v * ss));
        }
      }
    } else {
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j) {
          const double t[2] = {t0[0] - R + h * i, t0[1] - R + h * j};
          const VecL<L> c = chi_of(t);
          act_sigma<L>(act, c, s);
          val[i * n + j] = ((t[0] - t0[0]) * (t[0] - t0[0]) + (t[1] - t0[1]) * (t[1] - t0[1])) *
                               inv2Vk + reduced_loss<L>(in, s);
        }
    }
    detail::grid_minima(val, n, n, t0[0] - R, h, t0[1] - R, h, best, nb, kstarts);
  } else if (d == 1) {
    // Linear at L = 1 (or a degenerate span): 1-D grid along M.col(0).
    const int n = std::max(3, std::min(opt.grid1, 513));
    double val[513];
    h = 2.0 * R / (n - 1);
    for (int i = 0; i < n; ++i) {
      const double t[2] = {t0[0] - R + h * i, 0.0};
      const VecL<L> c = chi_of(t);
      act_sigma<L>(act, c, s);
      val[i] = (t[0] - t0[0]) * (t[0] - t0[0]) * inv2Vk + reduced_loss<L>(in, s);
    }
    detail::grid_minima(val, n, 1, t0[0] - R, h, 0.0, 0.0, best, nb, kstarts);
  }

  double bestF = std::numeric_limits<double>::infinity();
  VecL<L> bchi = in.omega_chi;
  auto polish_from = [&](const VecL<L>& c0) {
    VecL<L> c = c0;
    double F;
    if (L == 2 && act == ProxAct::Softmax) {
      // the 1-D form (Softmax2) of the same Newton iteration
      const Softmax2 f(in);
      double t = M.col(0).dot(c0 - base);
      F = softmax2_polish(f, opt, t);
      c = base + t * M.col(0);
    } else {
      F = newton_polish<L>(act, in, opt, c);
    }
    if (F < bestF) {
      bestF = F;
      bchi = c;
    }
  };
  if (d <= 2) {
    // Grid resolution: within a cell Phi can drop below its grid value by at most about
    // (curvature) h^2 d / 8; curvature bounded by 1/V_k plus the loss curvature scale.
    const double curv = 1.0 / in.V_k + 1.0 + in.y * in.y + in.omega_z.squaredNorm();
    const double slack = 0.25 * curv * h * h * std::max(d, 1);
    for (int k = 0; k < nb; ++k) {
      if (k > 0 && best[k].phi > bestF + slack) break;
      polish_from(chi_of(best[k].t));
    }
  } else {
    polish_from(in.omega_chi);
    for (int l = 0; l < L; ++l) {
      VecL<L> e = VecL<L>::Constant(-1.0 / L);
      e(l) += 1.0;
      e.normalize();
      polish_from(in.omega_chi + R * e);
      polish_from(in.omega_chi + 0.5 * R * e);
    }
  }

  chi_out = bchi;
  F_out = bestF;
}

template <int L>
inline ProxResult<L> solve_prox(ProxAct act, const ProxInput<L>& in, const ProxOptions& opt) {
  VecL<L> chi;
  double F;
  solve_prox_min<L>(act, in, opt, chi, F);
  return prox_result<L>(act, in, chi, F);
}

}  // namespace replica
}  // namespace slr
}  // namespace saddle
