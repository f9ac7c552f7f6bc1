// One draw of the SLR replica channel (docs/equations/slr_replica.md §4.4, (S15), (S15a)): the
// cavity fields and the label from the state P and the draw's Gaussian coordinates, the Stein and
// m-hat weights that multiply g (conditional means, (S15a)), their derivatives in P (for the map's
// Jacobian), and the accumulation of one weighted draw into the channel sums (S18)-(S21), the
// replicon Gram matrix (S22a) and the Jacobian. Shared by the sampled channel
// (equations/slr_replica_sampled.cpp) and the pre-integrated one (equations/slr_replica_preint.cpp).
// Internal header of the replica channel.
#pragma once
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>

#include "equations/slr_replica_prox.hpp"
#include "equations/slr_replica_setting.hpp"

namespace saddle {
namespace slr {
namespace replica {

// The state and the constants every draw of one channel pass needs.
struct DrawState {
  Task task;
  double nu;
  double m_k, q_k, V_k, m_v, q_v, V_v;
  double s_k, sq_k, sq_v, D1, det_v, c_yw, s_w1, sqrt_nu;
  bool max_inf;
  DrawState(const ReplicaSetting& set, const double* P)
      : task(set.task), nu(set.nu), m_k(P[0]), q_k(P[1]), V_k(P[2]), m_v(P[3]), q_v(P[4]), V_v(P[5]) {
    s_k = std::sqrt(std::max(q_k - m_k * m_k, 0.0));
    sq_k = std::sqrt(std::max(q_k, 0.0));
    sq_v = std::sqrt(std::max(q_v, 0.0));
    D1 = 1.0 + set.delta;
    det_v = q_v * D1 - m_v * m_v;  // det of Cov(w^z_1, y)
    c_yw = m_v / D1;
    s_w1 = std::sqrt(std::max(q_v - m_v * m_v / D1, 0.0));
    sqrt_nu = std::sqrt(set.nu);
    max_inf = set.task == Task::Max && std::isinf(set.nu);
  }
};

template <int L>
struct Draw {
  ProxInput<L> in;
  double wgt = 1.0;                // max at finite nu: L p_1(chi*) (§1.5)
  VecL<L> tm_k, tv_k, tm_z, tv_z;  // m-hat and Stein weights of g^chi, g^z (S15a)
  VecL<L> chis, xi;                // max: teacher fields; xi: the key noise (spiked: n)
};

// Key side, spiked: eps* = 1; w^chi_l = m_k sqrt(nu) delta_l1 + sqrt(q_k) n_l (S15 after
// conditioning), n ~ N(0, I_L).
template <int L>
inline void key_spiked(const DrawState& st, const double* n, Draw<L>& d) {
  for (int l = 0; l < L; ++l) {
    d.in.omega_chi(l) = st.sq_k * n[l] + (l == 0 ? st.m_k * st.sqrt_nu : 0.0);
    d.tm_k(l) = l == 0 ? st.sqrt_nu : 0.0;
    d.tv_k(l) = st.q_k > 0 ? n[l] / st.sq_k : 0.0;
    d.xi(l) = n[l];
  }
}

// Key side, max: teacher chi* (argmax moved to token 1 at nu = inf, else the weight
// L p_1(chi*), p = softmax(nu chi*)) and noise xi; omega = m_k chi* + s_k xi (S15).
template <int L>
inline void key_max(const DrawState& st, const double* chis_in, const double* xi_in, Draw<L>& d) {
  for (int l = 0; l < L; ++l) {
    d.chis(l) = chis_in[l];
    d.xi(l) = xi_in[l];
  }
  d.wgt = 1.0;
  if (st.max_inf) {
    int am;
    d.chis.maxCoeff(&am);
    std::swap(d.chis(0), d.chis(am));
  } else if (L > 1) {
    const double mx = (st.nu * d.chis).maxCoeff();
    double den = 0.0;
    for (int l = 0; l < L; ++l) den += std::exp(st.nu * d.chis(l) - mx);
    d.wgt = L * std::exp(st.nu * d.chis(0) - mx) / den;
  }
  for (int l = 0; l < L; ++l) {
    d.in.omega_chi(l) = st.m_k * d.chis(l) + st.s_k * d.xi(l);  // (S15)
    d.tm_k(l) = st.s_k > 0 ? d.chis(l) - st.m_k * d.xi(l) / st.s_k : d.chis(l);
    d.tv_k(l) = st.s_k > 0 ? d.xi(l) / st.s_k : 0.0;
  }
}

// z side (both tasks): y = sqrt(1+Delta) a, w^z_1 = (m_v/(1+Delta)) y + sqrt(q_v - m_v^2/(1+Delta)) b,
// w^z_l = sqrt(q_v) c_l (l >= 2, c = the L - 1 coordinates at `c`).
template <int L>
inline void z_side(const DrawState& st, double a, double b, const double* c, Draw<L>& d) {
  const double y = std::sqrt(st.D1) * a;
  d.in.y = y;
  d.in.omega_z(0) = st.c_yw * y + st.s_w1 * b;
  d.tm_z(0) = (st.q_v * y - st.m_v * d.in.omega_z(0)) / st.det_v;
  d.tv_z(0) = (st.D1 * d.in.omega_z(0) - st.m_v * y) / st.det_v;
  for (int l = 1; l < L; ++l) {
    d.in.omega_z(l) = st.sq_v * c[l - 1];
    d.tm_z(l) = 0.0;
    d.tv_z(l) = st.q_v > 0 ? c[l - 1] / st.sq_v : 0.0;
  }
}

// Derivatives in P = (m_k, q_k, V_k, m_v, q_v, V_v) of the fields omega and of the weights tm, tv
// of one draw (explicit in P for fixed draw coordinates).
template <int L>
struct DrawDerivs {
  VecL<L> dwc[6], dwz[6], dtmk[6], dtvk[6], dtmz[6], dtvz[6];
};

template <int L>
inline void draw_derivs(const DrawState& st, const Draw<L>& dr, DrawDerivs<L>& dd) {
  for (int j = 0; j < 6; ++j) {
    dd.dwc[j].setZero();
    dd.dwz[j].setZero();
    dd.dtmk[j].setZero();
    dd.dtvk[j].setZero();
    dd.dtmz[j].setZero();
    dd.dtvz[j].setZero();
  }
  const double m_k = st.m_k, q_k = st.q_k, m_v = st.m_v, q_v = st.q_v, D1 = st.D1;
  const double s_k = st.s_k, sq_k = st.sq_k, sq_v = st.sq_v, det_v = st.det_v, c_yw = st.c_yw,
               s_w1 = st.s_w1;
  if (st.task == Task::Spiked) {
    dd.dwc[0](0) = st.sqrt_nu;
    if (sq_k > 0)
      for (int l = 0; l < L; ++l) {
        dd.dwc[1](l) = dr.xi(l) / (2.0 * sq_k);
        dd.dtvk[1](l) = -dr.tv_k(l) / (2.0 * q_k);
      }
  } else if (s_k > 0) {
    const double s3 = s_k * s_k * s_k;
    for (int l = 0; l < L; ++l) {
      // xi_l = (omega_l - m_k chi*_l)/s_k, chi*_l = tm_k(l) + m_k xi_l/s_k
      const double xi = dr.tv_k(l) * s_k;
      const double ch = dr.tm_k(l) + m_k * xi / s_k;
      dd.dwc[0](l) = ch - m_k * xi / s_k;
      dd.dwc[1](l) = xi / (2.0 * s_k);
      dd.dtmk[0](l) = -xi * q_k / s3;
      dd.dtmk[1](l) = m_k * xi / (2.0 * s3);
      dd.dtvk[0](l) = xi * m_k / s3;
      dd.dtvk[1](l) = -xi / (2.0 * s3);
    }
  }
  const double y = dr.in.y;
  if (s_w1 > 0 && det_v > 0) {
    const double b = (dr.in.omega_z(0) - c_yw * y) / s_w1;
    const double dw_m = y / D1 - (m_v / D1) * b / s_w1, dw_q = b / (2.0 * s_w1);
    dd.dwz[3](0) = dw_m;
    dd.dwz[4](0) = dw_q;
    const double w0 = dr.in.omega_z(0);
    // tm = (q_v y - m_v w0)/det, tv = (D1 w0 - m_v y)/det, det = q_v D1 - m_v^2
    dd.dtmz[3](0) = ((-w0 - m_v * dw_m) - dr.tm_z(0) * (-2.0 * m_v)) / det_v;
    dd.dtmz[4](0) = ((y - m_v * dw_q) - dr.tm_z(0) * D1) / det_v;
    dd.dtvz[3](0) = ((D1 * dw_m - y) - dr.tv_z(0) * (-2.0 * m_v)) / det_v;
    dd.dtvz[4](0) = (D1 * dw_q - dr.tv_z(0) * D1) / det_v;
  }
  if (sq_v > 0)
    for (int l = 1; l < L; ++l) {
      dd.dwz[4](l) = dr.in.omega_z(l) / (2.0 * q_v);
      dd.dtvz[4](l) = -dr.tv_z(l) / (2.0 * q_v);
    }
}

// Sums of one channel pass (weights included; divided by the number of QMC points at the end).
struct ChannelSums {
  double S_gk2 = 0, S_gz2 = 0, S_mk = 0, S_mz = 0, S_vk = 0, S_vz = 0, S_Jk = 0, S_Jz = 0;
  double S_tr = 0, S_npd = 0, gmax = 0;
  double S_jk = 0, S_jv = 0;  // jump terms E[delta(D) |Delta g|^2] (pre-integrated channel)
  // For the pre-integrated Stein form (S20''), (S21''): E[g^chi.chi*] (max), E[g^z_1 y],
  // E[𝒥^z_11] and the token-1 z jump term E[delta(D) (Delta g^z_1)^2].
  double S_gchis = 0, S_gy = 0, S_Jz1 = 0, S_jz1 = 0;
  // Key side of (S20''), split along the line direction e (Stein weight x, integrated by the line
  // rule) and the rest (integration by parts): E[(g^chi.e) x], E[tr 𝒥_cc - e'𝒥_cc e], and the
  // line-direction part of the jump term E[delta(D) (e.Delta g^chi)^2].
  double S_gex = 0, S_Jperp = 0, S_jke = 0;
  double S_jumps = 0;         // number of jumps located
  double S_unres = 0;         // lines whose tie search did not converge
  Eigen::Matrix4d gram = Eigen::Matrix4d::Zero();
  // dS(row, j) = d/dP_j of S_mk, S_gk2, S_vk, S_mz, S_gz2, S_vz.
  Eigen::Matrix<double, 6, 6> dS = Eigen::Matrix<double, 6, 6>::Zero();
};

// The six summands of the hats for one draw and its minimiser: g.tm_k, |g^chi|^2, g.tv_k,
// g^z.tm_z, |g^z|^2, g^z.tv_z (rows of ChannelSums::dS).
template <int L>
inline void hat_summands(const Draw<L>& dr, const VecL<L>& gk, const VecL<L>& gz, double* G) {
  G[0] = gk.dot(dr.tm_k);
  G[1] = gk.squaredNorm();
  G[2] = gk.dot(dr.tv_k);
  G[3] = gz.dot(dr.tm_z);
  G[4] = gz.squaredNorm();
  G[5] = gz.dot(dr.tv_z);
}

// Adds one draw with weight wgt (npd_w: its weight in the not-positive-definite count).
template <int L>
inline void accumulate(ChannelSums& S, ProxAct act, bool k_active, const DrawState& st,
                       const Draw<L>& dr, const ProxResult<L>& pr, double wgt, double npd_w,
                       bool want_at, bool want_jac) {
  const double V_k = st.V_k, V_v = st.V_v;
  const VecL<L> gk = (pr.chi - dr.in.omega_chi) / V_k;  // (S18)
  const VecL<L> gz = (pr.z - dr.in.omega_z) / V_v;
  if (k_active) {
    S.S_gk2 += wgt * gk.squaredNorm();
    S.S_mk += wgt * gk.dot(dr.tm_k);
    S.S_vk += wgt * gk.dot(dr.tv_k);
    S.S_Jk += wgt * pr.J_chi.sum();
  }
  S.S_gz2 += wgt * gz.squaredNorm();
  S.S_mz += wgt * gz.dot(dr.tm_z);
  S.S_vz += wgt * gz.dot(dr.tv_z);
  S.S_Jz += wgt * pr.J_z.sum();
  S.S_tr += wgt * pr.residual * pr.residual;
  S.S_gy += wgt * gz(0) * dr.in.y;
  S.S_Jz1 += wgt * pr.J_z(0);
  if (k_active && st.task == Task::Max) S.S_gchis += wgt * gk.dot(dr.chis);
  if (!pr.hessian_ok) S.S_npd += npd_w;
  S.gmax = std::max(S.gmax, pr.grad_inf);
  if (want_jac) {
    // Derivatives of the fields omega, of the Stein weights tm, tv (explicit in P for this
    // draw) and of g = (prox - omega)/V (implicit: dg = -𝒥 (d omega + dV g)).
    const JacobianBlocks<L> jb = jacobian_blocks<L>(act, dr.in, pr.chi);
    DrawDerivs<L> dd;
    draw_derivs<L>(st, dr, dd);
    for (int j = 0; j < 6; ++j) {
      const VecL<L> ac = dd.dwc[j] + (j == 2 ? 1.0 : 0.0) * gk;
      const VecL<L> az = dd.dwz[j] + (j == 5 ? 1.0 : 0.0) * gz;
      const VecL<L> dgz = -(jb.cz.transpose() * ac + jb.zz * az);
      if (k_active) {
        const VecL<L> dgk = -(jb.cc * ac + jb.cz * az);
        S.dS(0, j) += wgt * (dgk.dot(dr.tm_k) + gk.dot(dd.dtmk[j]));
        S.dS(1, j) += wgt * 2.0 * gk.dot(dgk);
        S.dS(2, j) += wgt * (dgk.dot(dr.tv_k) + gk.dot(dd.dtvk[j]));
      }
      S.dS(3, j) += wgt * (dgz.dot(dr.tm_z) + gz.dot(dd.dtmz[j]));
      S.dS(4, j) += wgt * 2.0 * gz.dot(dgz);
      S.dS(5, j) += wgt * (dgz.dot(dr.tv_z) + gz.dot(dd.dtvz[j]));
    }
  }
  if (want_at) {
    const JacobianBlocks<L> jb = jacobian_blocks<L>(act, dr.in, pr.chi);
    const Eigen::Matrix<double, L, L> kv = jb.cz, vk = jb.cz.transpose();
    const Eigen::Matrix<double, L, L> kk = k_active ? jb.cc : Eigen::Matrix<double, L, L>::Zero();
    const Eigen::Matrix<double, L, L>* B[4] = {&kk, &kv, &vk, &jb.zz};
    for (int a = 0; a < 4; ++a)
      for (int b = a; b < 4; ++b) S.gram(a, b) += wgt * B[a]->cwiseProduct(*B[b]).sum();
  }
}

}  // namespace replica
}  // namespace slr
}  // namespace saddle
