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
  d.chis.setZero();  // no teacher fields in the spiked draw (the g.chi* sum stays 0)
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

// The channel sums of one pass (weights included; divided by the number of QMC points at the end),
// by name. Node sums: one term per draw (sampled) or per line-rule node (pre-integrated).
enum Sum : int {
  kMk,     // g^chi . tm_k                     m-hat weights (S21a)
  kGk2,    // |g^chi|^2                         (S19)
  kVk,     // g^chi . tv_k                     Stein weights (S20')
  kMz,     // g^z . tm_z
  kGz2,    // |g^z|^2
  kVz,     // g^z . tv_z
  kJk,     // tr J_cc                           Hessian form (S20)
  kJz,     // tr J_zz
  kJz1,    // (J_zz)_11                         (S21'')
  kGy,     // g^z_1 y                           (S21'')
  kGchis,  // g^chi . chi*  (max)               (S21'')
  kGex,    // (g^chi . e) x  (pre-integrated)   (S20'')
  kJperp,  // tr J_cc - e' J_cc e (pre-integrated)
  kNodeSums,
  // Jump sums (pre-integrated, §4.9): the surface delta of the tie set, density rho per jump.
  kJumpK = kNodeSums,  // rho |[g^chi]|^2        (S20b)
  kJumpV,              // rho |[g^z]|^2
  kJumpZ1,             // rho [g^z_1]^2
  kJumpKe,             // rho (e . [g^chi])^2
  kNumSums
};

struct ChannelSums {
  Eigen::Matrix<double, kNumSums, 1> v = Eigen::Matrix<double, kNumSums, 1>::Zero();
  // With want_jac: d v / d P, P = (m_k, q_k, V_k, m_v, q_v, V_v): per draw the implicit derivative
  // of the prox (dg = -J (d omega + dV g)), the explicit dependence of fields and weights on P,
  // for the J sums the directional derivative of J, and (pre-integrated) the motion of the jump
  // points.
  Eigen::Matrix<double, kNumSums, 6> d = Eigen::Matrix<double, kNumSums, 6>::Zero();
  double S_tr = 0;            // (y - s.z)^2 (§4.6), no derivative
  double S_npd = 0, gmax = 0;
  double S_jumps = 0;         // number of jumps located
  double S_unres = 0;         // lines whose tie search did not converge
  Eigen::Matrix4d gram = Eigen::Matrix4d::Zero();
};

// Everything of one minimiser that the sums need: the prox result and the full blocks of J (S20)
// (node_eval: both from one phi_derivs; the sampled channel fills jb only when it needs it).
template <int L>
struct NodeEval {
  ProxResult<L> pr;
  JacobianBlocks<L> jb;
};

template <int L>
inline NodeEval<L> node_eval(ProxAct act, const ProxInput<L>& in, const VecL<L>& chi, double F) {
  NodeEval<L> ne;
  PhiDerivs<L> dv;
  phi_derivs<L>(act, in, chi, dv);
  ne.pr = prox_result_from<L>(in, dv, chi, F, &ne.jb);
  return ne;
}

// Where the line-rule quantities enter (pre-integrated channel): the line direction e and the
// node's coordinate x along it. Sampled: none.
template <int L>
struct LineTerms {
  bool on = false;
  VecL<L> e = VecL<L>::Zero();
  double x = 0.0;
};

// The node summands of one draw at its minimiser (rows kMk .. kJperp); k_active false (softmax
// with L = 1) leaves the key rows 0. The J rows from the diagonal of J (pr.J_chi, pr.J_z), and
// kJperp (pre-integrated only) from the full block ne.jb.cc.
template <int L>
inline void node_summands(bool k_active, const Draw<L>& dr, const VecL<L>& gk, const VecL<L>& gz,
                          const NodeEval<L>& ne, const LineTerms<L>& lt, double* G) {
  for (int r = 0; r < kNodeSums; ++r) G[r] = 0.0;
  if (k_active) {
    G[kMk] = gk.dot(dr.tm_k);
    G[kGk2] = gk.squaredNorm();
    G[kVk] = gk.dot(dr.tv_k);
    G[kJk] = ne.pr.J_chi.sum();
    G[kGchis] = gk.dot(dr.chis);
    if (lt.on) {
      G[kGex] = gk.dot(lt.e) * lt.x;
      G[kJperp] = ne.pr.J_chi.sum() - lt.e.dot(ne.jb.cc * lt.e);
    }
  }
  G[kMz] = gz.dot(dr.tm_z);
  G[kGz2] = gz.squaredNorm();
  G[kVz] = gz.dot(dr.tv_z);
  G[kJz] = ne.pr.J_z.sum();
  G[kJz1] = ne.pr.J_z(0);
  G[kGy] = gz(0) * dr.in.y;
}

// The J rows of node_summands (kJk, kJz, kJz1, kJperp) as functions of (chi, input).
template <int L>
inline void j_rows(const JacobianBlocks<L>& jb, bool k_active, const LineTerms<L>& lt, double* J4) {
  J4[0] = k_active ? jb.cc.trace() : 0.0;
  J4[1] = jb.zz.trace();
  J4[2] = jb.zz(0, 0);
  J4[3] = k_active && lt.on ? jb.cc.trace() - lt.e.dot(jb.cc * lt.e) : 0.0;
}

// d/dP_j of the node summands (rows kMk .. kJperp) into dG (kNodeSums x 6). The J rows (want_jd)
// by a forward difference of J along the path (chi(P), input(P)) with a relative step 1e-7
// (J is smooth in both; no prox is solved again).
template <int L>
inline void node_derivs(ProxAct act, bool k_active, const DrawState& st, const Draw<L>& dr,
                        const DrawDerivs<L>& dd, const VecL<L>& gk, const VecL<L>& gz,
                        const JacobianBlocks<L>& jb, const VecL<L>& chi, const LineTerms<L>& lt,
                        bool want_jd, Eigen::Matrix<double, kNodeSums, 6>& dG) {
  dG.setZero();
  double J0[4] = {0.0, 0.0, 0.0, 0.0};  // read only with want_jd
  if (want_jd) j_rows<L>(jb, k_active, lt, J0);
  for (int j = 0; j < 6; ++j) {
    const VecL<L> ac = dd.dwc[j] + (j == 2 ? 1.0 : 0.0) * gk;
    const VecL<L> az = dd.dwz[j] + (j == 5 ? 1.0 : 0.0) * gz;
    const VecL<L> dgz = -(jb.cz.transpose() * ac + jb.zz * az);
    const VecL<L> dgk = -(jb.cc * ac + jb.cz * az);
    if (k_active) {
      dG(kMk, j) = dgk.dot(dr.tm_k) + gk.dot(dd.dtmk[j]);
      dG(kGk2, j) = 2.0 * gk.dot(dgk);
      dG(kVk, j) = dgk.dot(dr.tv_k) + gk.dot(dd.dtvk[j]);
      dG(kGchis, j) = dgk.dot(dr.chis);
      if (lt.on) dG(kGex, j) = dgk.dot(lt.e) * lt.x;
    }
    dG(kMz, j) = dgz.dot(dr.tm_z) + gz.dot(dd.dtmz[j]);
    dG(kGz2, j) = 2.0 * gz.dot(dgz);
    dG(kVz, j) = dgz.dot(dr.tv_z) + gz.dot(dd.dtvz[j]);
    dG(kGy, j) = dgz(0) * dr.in.y;
    if (want_jd) {
      // chi = omega_chi + V_k g^chi: d chi = d omega_chi + dV_k g^chi + V_k d g^chi
      const VecL<L> dchi = dd.dwc[j] + (j == 2 ? 1.0 : 0.0) * gk + st.V_k * dgk;
      double scale = 1.0;
      scale = std::max(scale, dchi.cwiseAbs().maxCoeff());
      scale = std::max(scale, dd.dwz[j].cwiseAbs().maxCoeff());
      const double h = 1e-7 / scale;
      ProxInput<L> in = dr.in;
      in.omega_chi += h * dd.dwc[j];
      in.omega_z += h * dd.dwz[j];
      if (j == 2) in.V_k += h;
      if (j == 5) in.V_v += h;
      double J1[4];
      if constexpr (L == 2) {
        if (act == ProxAct::Softmax) {  // closed form, the same values (softmax2_j)
          double cc, zz, zz11;
          softmax2_j<L>(in, VecL<L>(chi + h * dchi), cc, zz, zz11);
          J1[0] = k_active ? cc : 0.0;
          J1[1] = zz;
          J1[2] = zz11;
          J1[3] = 0.0;  // J_cc is along e = h
        } else {
          j_rows<L>(jacobian_blocks<L>(act, in, VecL<L>(chi + h * dchi)), k_active, lt, J1);
        }
      } else {
        j_rows<L>(jacobian_blocks<L>(act, in, VecL<L>(chi + h * dchi)), k_active, lt, J1);
      }
      dG(kJk, j) = (J1[0] - J0[0]) / h;
      dG(kJz, j) = (J1[1] - J0[1]) / h;
      dG(kJz1, j) = (J1[2] - J0[2]) / h;
      dG(kJperp, j) = (J1[3] - J0[3]) / h;
    }
  }
}

// Adds one draw (or line-rule node) with weight wgt (npd_w: its weight in the
// not-positive-definite count): its node summands, their derivatives (want_jac; want_jd: also
// the J rows), the training MSE and the replicon Gram matrix (want_at).
template <int L>
inline void accumulate(ChannelSums& S, ProxAct act, bool k_active, const DrawState& st,
                       const Draw<L>& dr, const NodeEval<L>& ne, double wgt, double npd_w,
                       const LineTerms<L>& lt, bool want_at, bool want_jac, bool want_jd) {
  const ProxResult<L>& pr = ne.pr;
  const VecL<L> gk = (pr.chi - dr.in.omega_chi) / st.V_k;  // (S18)
  const VecL<L> gz = (pr.z - dr.in.omega_z) / st.V_v;
  double G[kNodeSums];
  node_summands<L>(k_active, dr, gk, gz, ne, lt, G);
  for (int r = 0; r < kNodeSums; ++r) S.v(r) += wgt * G[r];
  S.S_tr += wgt * pr.residual * pr.residual;
  if (!pr.hessian_ok) S.S_npd += npd_w;
  S.gmax = std::max(S.gmax, pr.grad_inf);
  if (want_jac) {
    DrawDerivs<L> dd;
    draw_derivs<L>(st, dr, dd);
    Eigen::Matrix<double, kNodeSums, 6> dG;
    node_derivs<L>(act, k_active, st, dr, dd, gk, gz, ne.jb, pr.chi, lt, want_jd, dG);
    S.d.template topRows<kNodeSums>() += wgt * dG;
  }
  if (want_at) {
    const JacobianBlocks<L>& jb = ne.jb;
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
