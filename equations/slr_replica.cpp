// SLR replica-symmetric fixed point for ridge ERM (docs/equations/slr_replica.md §4) with randomly shifted QMC
// channel expectations (§7b). See slr_replica.hpp for the sampling scheme; the proximal problem is
// in slr_replica_prox.hpp.
#include "equations/slr_replica.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace saddle {
namespace slr {

using replica::ProxAct;
using replica::ProxInput;
using replica::ProxResult;
using replica::VecL;

std::string to_string(VhatForm f) { return f == VhatForm::Stein ? "stein" : "hessian"; }

VhatForm parse_vhat_form(const std::string& s) {
  if (s == "stein") return VhatForm::Stein;
  if (s == "hessian") return VhatForm::Hessian;
  throw std::invalid_argument("unknown V-hat form '" + s + "' (expected stein or hessian)");
}

std::string to_string(ReplicaInit i) {
  return i == ReplicaInit::Informed ? "informed" : "uninformed";
}

std::vector<int> replica_lengths(const ReplicaSetting& set) {
  return set.lengths.empty() ? std::vector<int>{set.L} : set.lengths;
}

bool replica_k_inactive(const ReplicaSetting& set) {
  if (set.activation != Activation::Softmax) return false;
  for (int L : replica_lengths(set))
    if (L != 1) return false;
  return true;
}

void validate(const ReplicaSetting& set) {
  for (int L : replica_lengths(set))
    if (L < 1 || L > replica::kMaxL)
      throw std::invalid_argument("L must be in 1.." + std::to_string(replica::kMaxL) +
                                  " for the replica equations");
  if (set.activation != Activation::Softmax && set.activation != Activation::Linear)
    throw std::invalid_argument("the replica equations support softmax and linear activations");
  if (!(set.nu >= 0.0) || (std::isinf(set.nu) && set.task != Task::Max))
    throw std::invalid_argument("nu must be >= 0 (inf only for max-SLR)");
  if (!(set.lambda >= 0.0) || !std::isfinite(set.lambda))
    throw std::invalid_argument("lambda must be finite and >= 0");
  if (!(set.delta >= 0.0) || !std::isfinite(set.delta))
    throw std::invalid_argument("delta must be finite and >= 0");
  if (set.n_points < 16) throw std::invalid_argument("need at least 16 QMC points");
  if (set.replicates < 2) throw std::invalid_argument("need at least 2 QMC replicates");
  if (set.prox.grid1 < 3 || set.prox.grid2 < 3 || set.prox.n_starts < 1)
    throw std::invalid_argument("prox grid needs >= 3 points and >= 1 start");
}

int replica_qmc_dim(const ReplicaSetting& set) {
  const auto Ls = replica_lengths(set);
  const int L = *std::max_element(Ls.begin(), Ls.end());
  return set.task == Task::Spiked ? 2 * L + 1 : 3 * L + 1;
}

std::shared_ptr<const SobolGaussian> make_replica_points(const ReplicaSetting& set) {
  return std::make_shared<const SobolGaussian>(replica_qmc_dim(set), set.n_points, set.replicates,
                                               set.seed);
}

double replicon_eigenvalue(const Eigen::Matrix4d& gram, double alpha, double V_k, double V_v) {
  // Linear response of the replica overlap fluctuation dQ (2 x 2 over {k, v}) through one channel
  // pass and one prior pass: dQhat_ab = alpha sum_cd E[<𝒥_ac, 𝒥_bd>_F] dQ_cd (the fields of one
  // weight vector on different tokens are independent, so dC = dQ (x) I_L), then
  // dQ_ab = V_a V_b dQhat_ab (ridge prior, separately for k and v). RS is locally stable when the
  // largest |eigenvalue| on symmetric dQ is < 1; for L = 1 this is alpha V^2/(1+V)^2 < 1 (ridge).
  const double V[2] = {V_k, V_v};
  auto blk = [](int a, int c) { return 2 * a + c; };  // (k,k)=0 (k,v)=1 (v,k)=2 (v,v)=3
  Eigen::Matrix4d T;
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 2; ++b)
      for (int c = 0; c < 2; ++c)
        for (int d = 0; d < 2; ++d)
          T(blk(a, b), blk(c, d)) = V[a] * V[b] * alpha * gram(blk(a, c), blk(b, d));
  // Orthonormal basis of symmetric 2 x 2 matrices: E_kk, E_vv, (E_kv + E_vk)/sqrt 2.
  Eigen::Matrix<double, 4, 3> S = Eigen::Matrix<double, 4, 3>::Zero();
  S(0, 0) = 1.0;
  S(3, 1) = 1.0;
  S(1, 2) = S(2, 2) = std::sqrt(0.5);
  const Eigen::Matrix3d Ts = S.transpose() * T * S;
  const Eigen::EigenSolver<Eigen::Matrix3d> es(Ts, false);
  double rho = 0.0;
  for (int i = 0; i < 3; ++i) rho = std::max(rho, std::abs(es.eigenvalues()(i)));
  return rho;
}

namespace {

template <int L>
ChannelStats channel_impl(const ReplicaSetting& set, double alpha, const double* P,
                          const SobolGaussian& pts, int rep, bool want_at, bool want_jac) {
  const ProxAct act = set.activation == Activation::Softmax ? ProxAct::Softmax : ProxAct::Linear;
  const bool k_active = !(act == ProxAct::Softmax && L == 1);  // L = 1 softmax: sigma == 1
  const double m_k = P[0], q_k = P[1], V_k = P[2], m_v = P[3], q_v = P[4], V_v = P[5];
  const double s_k = std::sqrt(std::max(q_k - m_k * m_k, 0.0));
  const double sq_k = std::sqrt(std::max(q_k, 0.0));
  const double sq_v = std::sqrt(std::max(q_v, 0.0));
  const double D1 = 1.0 + set.delta;
  const double det_v = q_v * D1 - m_v * m_v;  // det of Cov(w^z_1, y)
  const double c_yw = m_v / D1;
  const double s_w1 = std::sqrt(std::max(q_v - m_v * m_v / D1, 0.0));
  const double sqrt_nu = std::sqrt(set.nu);
  const bool max_inf = set.task == Task::Max && std::isinf(set.nu);
  const int n = pts.points();

  double S_gk2 = 0, S_gz2 = 0, S_mk = 0, S_mz = 0, S_vk = 0, S_vz = 0, S_Jk = 0, S_Jz = 0;
  double S_tr = 0, S_npd = 0, gmax = 0;
  // Replicon (AT) check: Frobenius Gram matrix E[<B_i, B_j>] of the four blocks of 𝒥,
  // B_0 = 𝒥_kk (chi-chi), B_1 = 𝒥_kv, B_2 = 𝒥_vk = B_1^T, B_3 = 𝒥_vv.
  Eigen::Matrix4d gram = Eigen::Matrix4d::Zero();
  // want_jac: dS(row, j) = d/dP_j of the sums S_mk, S_gk2, S_vk, S_mz, S_gz2, S_vz.
  Eigen::Matrix<double, 6, 6> dS = Eigen::Matrix<double, 6, 6>::Zero();
  ProxInput<L> in;
  in.V_k = V_k;
  in.V_v = V_v;
  VecL<L> tm_k, tv_k, tm_z, tv_z;
  for (int i = 0; i < n; ++i) {
    const double* u = pts.point(rep, i);
    double wgt = 1.0;
    int off;
    if (set.task == Task::Spiked) {
      // eps* = 1; w^chi_l = m_k sqrt(nu) delta_l1 + sqrt(q_k) u_l (S15 after conditioning).
      for (int l = 0; l < L; ++l) {
        in.omega_chi(l) = sq_k * u[l] + (l == 0 ? m_k * sqrt_nu : 0.0);
        tm_k(l) = l == 0 ? sqrt_nu : 0.0;
        tv_k(l) = q_k > 0 ? u[l] / sq_k : 0.0;
      }
      off = L;
    } else {
      VecL<L> chis, xi;
      for (int l = 0; l < L; ++l) {
        chis(l) = u[l];
        xi(l) = u[L + l];
      }
      if (max_inf) {
        int am;
        chis.maxCoeff(&am);
        std::swap(chis(0), chis(am));
      } else if (L > 1) {
        // weight L p_1(chi*), p = softmax(nu chi*) (§1.5)
        const double mx = (set.nu * chis).maxCoeff();
        double den = 0.0;
        for (int l = 0; l < L; ++l) den += std::exp(set.nu * chis(l) - mx);
        wgt = L * std::exp(set.nu * chis(0) - mx) / den;
      }
      for (int l = 0; l < L; ++l) {
        in.omega_chi(l) = m_k * chis(l) + s_k * xi(l);  // (S15)
        tm_k(l) = s_k > 0 ? chis(l) - m_k * xi(l) / s_k : chis(l);
        tv_k(l) = s_k > 0 ? xi(l) / s_k : 0.0;
      }
      off = 2 * L;
    }
    // z side: y = sqrt(1+Delta) a, w^z_1 = (m_v/(1+Delta)) y + sqrt(q_v - m_v^2/(1+Delta)) b,
    // w^z_l = sqrt(q_v) u_l (l >= 2).
    const double y = std::sqrt(D1) * u[off + L - 1];
    in.y = y;
    in.omega_z(0) = c_yw * y + s_w1 * u[off + L];
    tm_z(0) = (q_v * y - m_v * in.omega_z(0)) / det_v;
    tv_z(0) = (D1 * in.omega_z(0) - m_v * y) / det_v;
    for (int l = 1; l < L; ++l) {
      in.omega_z(l) = sq_v * u[off + l - 1];
      tm_z(l) = 0.0;
      tv_z(l) = q_v > 0 ? u[off + l - 1] / sq_v : 0.0;
    }
    if (wgt == 0.0) continue;

    const ProxResult<L> pr = replica::solve_prox<L>(act, in, set.prox);
    const VecL<L> gk = (pr.chi - in.omega_chi) / V_k;  // (S18)
    const VecL<L> gz = (pr.z - in.omega_z) / V_v;
    if (k_active) {
      S_gk2 += wgt * gk.squaredNorm();
      S_mk += wgt * gk.dot(tm_k);
      S_vk += wgt * gk.dot(tv_k);
      S_Jk += wgt * pr.J_chi.sum();
    }
    S_gz2 += wgt * gz.squaredNorm();
    S_mz += wgt * gz.dot(tm_z);
    S_vz += wgt * gz.dot(tv_z);
    S_Jz += wgt * pr.J_z.sum();
    S_tr += wgt * pr.residual * pr.residual;
    if (!pr.hessian_ok) S_npd += 1.0;
    gmax = std::max(gmax, pr.grad_inf);
    if (want_jac) {
      // Derivatives of the fields omega, of the Stein weights tm, tv (explicit in P for this
      // draw) and of g = (prox - omega)/V (implicit: dg = -𝒥 (d omega + dV g)).
      const replica::JacobianBlocks<L> jb = replica::jacobian_blocks<L>(act, in, pr.chi);
      VecL<L> dwc[6], dwz[6], dtmk[6], dtvk[6], dtmz[6], dtvz[6];
      for (int j = 0; j < 6; ++j) {
        dwc[j].setZero();
        dwz[j].setZero();
        dtmk[j].setZero();
        dtvk[j].setZero();
        dtmz[j].setZero();
        dtvz[j].setZero();
      }
      if (set.task == Task::Spiked) {
        dwc[0](0) = sqrt_nu;
        if (sq_k > 0)
          for (int l = 0; l < L; ++l) {
            dwc[1](l) = u[l] / (2.0 * sq_k);
            dtvk[1](l) = -tv_k(l) / (2.0 * q_k);
          }
      } else if (s_k > 0) {
        const double s3 = s_k * s_k * s_k;
        for (int l = 0; l < L; ++l) {
          // xi_l = (omega_l - m_k chi*_l)/s_k, chi*_l = tm_k(l) + m_k xi_l/s_k
          const double xi = tv_k(l) * s_k;
          const double ch = tm_k(l) + m_k * xi / s_k;
          dwc[0](l) = ch - m_k * xi / s_k;
          dwc[1](l) = xi / (2.0 * s_k);
          dtmk[0](l) = -xi * q_k / s3;
          dtmk[1](l) = m_k * xi / (2.0 * s3);
          dtvk[0](l) = xi * m_k / s3;
          dtvk[1](l) = -xi / (2.0 * s3);
        }
      }
      if (s_w1 > 0 && det_v > 0) {
        const double b = (in.omega_z(0) - c_yw * y) / s_w1;
        const double dw_m = y / D1 - (m_v / D1) * b / s_w1, dw_q = b / (2.0 * s_w1);
        dwz[3](0) = dw_m;
        dwz[4](0) = dw_q;
        const double w0 = in.omega_z(0);
        // tm = (q_v y - m_v w0)/det, tv = (D1 w0 - m_v y)/det, det = q_v D1 - m_v^2
        dtmz[3](0) = ((-w0 - m_v * dw_m) - tm_z(0) * (-2.0 * m_v)) / det_v;
        dtmz[4](0) = ((y - m_v * dw_q) - tm_z(0) * D1) / det_v;
        dtvz[3](0) = ((D1 * dw_m - y) - tv_z(0) * (-2.0 * m_v)) / det_v;
        dtvz[4](0) = (D1 * dw_q - tv_z(0) * D1) / det_v;
      }
      if (sq_v > 0)
        for (int l = 1; l < L; ++l) {
          dwz[4](l) = in.omega_z(l) / (2.0 * q_v);
          dtvz[4](l) = -tv_z(l) / (2.0 * q_v);
        }
      for (int j = 0; j < 6; ++j) {
        const VecL<L> ac = dwc[j] + (j == 2 ? 1.0 : 0.0) * gk;
        const VecL<L> az = dwz[j] + (j == 5 ? 1.0 : 0.0) * gz;
        const VecL<L> dgz = -(jb.cz.transpose() * ac + jb.zz * az);
        if (k_active) {
          const VecL<L> dgk = -(jb.cc * ac + jb.cz * az);
          dS(0, j) += wgt * (dgk.dot(tm_k) + gk.dot(dtmk[j]));
          dS(1, j) += wgt * 2.0 * gk.dot(dgk);
          dS(2, j) += wgt * (dgk.dot(tv_k) + gk.dot(dtvk[j]));
        }
        dS(3, j) += wgt * (dgz.dot(tm_z) + gz.dot(dtmz[j]));
        dS(4, j) += wgt * 2.0 * gz.dot(dgz);
        dS(5, j) += wgt * (dgz.dot(tv_z) + gz.dot(dtvz[j]));
      }
    }
    if (want_at) {
      const replica::JacobianBlocks<L> jb = replica::jacobian_blocks<L>(act, in, pr.chi);
      const Eigen::Matrix<double, L, L> kv = jb.cz, vk = jb.cz.transpose();
      const Eigen::Matrix<double, L, L> kk = k_active ? jb.cc : Eigen::Matrix<double, L, L>::Zero();
      const Eigen::Matrix<double, L, L>* B[4] = {&kk, &kv, &vk, &jb.zz};
      for (int a = 0; a < 4; ++a)
        for (int b = a; b < 4; ++b) gram(a, b) += wgt * B[a]->cwiseProduct(*B[b]).sum();
    }
  }
  const double a_n = alpha / n;
  ChannelStats c;
  c.qhat_k = a_n * S_gk2;  // (S19)
  c.qhat_v = a_n * S_gz2;
  c.Vhat_k_stein = -a_n * S_vk;  // (S20'), with E[xi | fields] in place of xi
  c.Vhat_v_stein = -a_n * S_vz;
  c.Vhat_k_hessian = a_n * S_Jk;  // (S20)
  c.Vhat_v_hessian = a_n * S_Jz;
  // (S21): mhat = alpha E[sum g h*] + Vhat m, with E[sum g h*] = <g.tm> + m <g.tv>.
  const double Ek = a_n * S_mk, Ez = a_n * S_mz;
  if (set.vhat == VhatForm::Stein) {
    c.Vhat_k = c.Vhat_k_stein;
    c.Vhat_v = c.Vhat_v_stein;
    c.mhat_k = Ek;
    c.mhat_v = Ez;
  } else {
    c.Vhat_k = c.Vhat_k_hessian;
    c.Vhat_v = c.Vhat_v_hessian;
    c.mhat_k = Ek + m_k * (c.Vhat_k_hessian - c.Vhat_k_stein);
    c.mhat_v = Ez + m_v * (c.Vhat_v_hessian - c.Vhat_v_stein);
  }
  c.train_mse = S_tr / n;
  c.not_pd = S_npd / n;
  c.max_grad = gmax;
  if (want_at) {
    gram /= n;
    for (int a = 0; a < 4; ++a)
      for (int b = 0; b < a; ++b) gram(a, b) = gram(b, a);
    c.at_gram = gram;
  }
  if (want_jac) {
    // Stein form: mhat = a_n S_m, qhat = a_n S_g2, Vhat = -a_n S_v.
    const double sign[6] = {1.0, 1.0, -1.0, 1.0, 1.0, -1.0};
    for (int row = 0; row < 6; ++row) c.dhat.row(row) = sign[row] * a_n * dS.row(row);
  }
  return c;
}

}  // namespace

namespace {
ChannelStats channel_for_length(int L, const ReplicaSetting& set, double alpha, const double* P,
                                const SobolGaussian& pts, int replicate, bool want_at,
                                bool want_jac) {
  switch (L) {
    case 1: return channel_impl<1>(set, alpha, P, pts, replicate, want_at, want_jac);
    case 2: return channel_impl<2>(set, alpha, P, pts, replicate, want_at, want_jac);
    case 3: return channel_impl<3>(set, alpha, P, pts, replicate, want_at, want_jac);
    case 4: return channel_impl<4>(set, alpha, P, pts, replicate, want_at, want_jac);
    default: throw std::invalid_argument("L out of range for the replica channel");
  }
}
}  // namespace

ChannelStats replica_channel(const ReplicaSetting& set, double alpha, const double* P,
                             const SobolGaussian& pts, int replicate, bool want_at,
                             bool want_jacobian) {
  // Every channel quantity is an average over samples, hence over their lengths (§4.6): the
  // hats, the training MSE and the replicon Gram matrix are averaged with weight 1/|set|; the
  // replicon eigenvalue is taken of the averaged Gram matrix.
  const auto Ls = replica_lengths(set);
  ChannelStats c;
  const double w = 1.0 / static_cast<double>(Ls.size());
  for (int L : Ls) {
    const ChannelStats s =
        channel_for_length(L, set, alpha, P, pts, replicate, want_at, want_jacobian);
    c.mhat_k += w * s.mhat_k;
    c.qhat_k += w * s.qhat_k;
    c.Vhat_k += w * s.Vhat_k;
    c.mhat_v += w * s.mhat_v;
    c.qhat_v += w * s.qhat_v;
    c.Vhat_v += w * s.Vhat_v;
    c.Vhat_k_stein += w * s.Vhat_k_stein;
    c.Vhat_v_stein += w * s.Vhat_v_stein;
    c.Vhat_k_hessian += w * s.Vhat_k_hessian;
    c.Vhat_v_hessian += w * s.Vhat_v_hessian;
    c.train_mse += w * s.train_mse;
    c.not_pd += w * s.not_pd;
    c.max_grad = std::max(c.max_grad, s.max_grad);
    c.at_gram += w * s.at_gram;
    if (want_jacobian) c.dhat += w * s.dhat;
  }
  if (want_at) c.at_eigenvalue = replicon_eigenvalue(c.at_gram, alpha, P[2], P[5]);
  return c;
}

void replica_prior(double lambda, const ChannelStats& c, double* P) {
  // (S14): V = 1/(lambda + Vhat), m = mhat V, q = (mhat^2 + qhat) V^2.
  const double hk[3] = {c.mhat_k, c.qhat_k, c.Vhat_k};
  const double hv[3] = {c.mhat_v, c.qhat_v, c.Vhat_v};
  const double* h[2] = {hk, hv};
  for (int a = 0; a < 2; ++a) {
    const double V = 1.0 / (lambda + h[a][2]);
    P[3 * a + 0] = h[a][0] * V;
    P[3 * a + 1] = (h[a][0] * h[a][0] + h[a][1]) * V * V;
    P[3 * a + 2] = V;
  }
}

double replica_test_error(const ReplicaSetting& set, const double* P) {
  PopulationSetting ps;
  ps.task = set.task;
  ps.lengths = replica_lengths(set);
  ps.nu = set.nu;
  ps.activation = set.activation;
  if (replica_k_inactive(set)) return 1.0 - 2.0 * P[3] + P[4];
  return population_risk(ps, P[0], P[1], P[3], P[4]);  // (S7)
}

ReplicaSystem::ReplicaSystem(ReplicaSetting set, double alpha,
                             std::shared_ptr<const SobolGaussian> pts, int replicate)
    : set_(std::move(set)), alpha_(alpha), pts_(std::move(pts)), r_(replicate) {}

std::vector<std::string> ReplicaSystem::names() const {
  std::vector<std::string> n;
  ReplicaValues<double>().visit_state([&](const char* name, double) { n.push_back(name); });
  return n;
}

Vec ReplicaSystem::map(const Vec& x) const {
  Vec xp = x;
  project(xp);
  const ChannelStats c = replica_channel(set_, alpha_, xp.data(), *pts_, r_);
  Vec out(6);
  replica_prior(set_.lambda, c, out.data());
  if (replica_k_inactive(set_)) out(0) = out(1) = 0.0;
  return out;
}

bool ReplicaSystem::map_jacobian(const Vec& x, Vec& fx, Eigen::MatrixXd& J) const {
  if (set_.vhat != VhatForm::Stein) return false;
  Vec xp = x;
  project(xp);
  const ChannelStats c = replica_channel(set_, alpha_, xp.data(), *pts_, r_, false, true);
  fx.resize(6);
  replica_prior(set_.lambda, c, fx.data());
  // Chain rule through the prior (S14): V = 1/(lambda + Vhat), m = mhat V,
  // q = (mhat^2 + qhat) V^2.
  Eigen::Matrix<double, 6, 6> dP = Eigen::Matrix<double, 6, 6>::Zero();
  const double h[2][3] = {{c.mhat_k, c.qhat_k, c.Vhat_k}, {c.mhat_v, c.qhat_v, c.Vhat_v}};
  for (int a = 0; a < 2; ++a) {
    const double mh = h[a][0], qh = h[a][1], V = 1.0 / (set_.lambda + h[a][2]);
    const int o = 3 * a;
    const double dV = -V * V;  // dV/dVhat
    dP(o + 2, o + 2) = dV;
    dP(o + 0, o + 0) = V;
    dP(o + 0, o + 2) = mh * dV;
    dP(o + 1, o + 0) = 2.0 * mh * V * V;
    dP(o + 1, o + 1) = V * V;
    dP(o + 1, o + 2) = 2.0 * (mh * mh + qh) * V * dV;
  }
  J = dP * c.dhat;
  if (replica_k_inactive(set_)) {
    fx(0) = fx(1) = 0.0;
    J.row(0).setZero();
    J.row(1).setZero();
  }
  return true;
}

void ReplicaSystem::project(Vec& x) const {
  for (int a = 0; a < 2; ++a) {
    double& m = x(3 * a);
    double& q = x(3 * a + 1);
    double& V = x(3 * a + 2);
    if (!std::isfinite(V) || V < 1e-12) V = std::isfinite(V) && V < 1e-12 ? 1e-12 : 1e8;
    V = std::min(V, 1e8);
    if (!std::isfinite(m)) m = 0.0;
    if (!std::isfinite(q)) q = m * m + 1.0;
    q = std::max(q, m * m * (1.0 + 1e-12) + 1e-12);
  }
  if (replica_k_inactive(set_)) x(0) = x(1) = 0.0;
}

std::vector<std::string> ReplicaSystem::observable_names() const {
  std::vector<std::string> n;
  ReplicaValues<double>().visit_observables([&](const char* name, double) { n.push_back(name); });
  return n;
}

ReplicaValues<double> ReplicaSystem::evaluate(const Vec& x) const {
  Vec xp = x;
  project(xp);
  const ChannelStats c = replica_channel(set_, alpha_, xp.data(), *pts_, r_, true);
  // Jump share: how much the jumps of the proximal minimiser between local minima, which the
  // Stein form (S20') counts and the Hessian form (S20) misses, move the susceptibilities:
  // max over k, v of |Vhat_H - Vhat_S| / (lambda + |Vhat_H|), i.e. the relative change of
  // V = 1/(lambda + Vhat) between the two forms.
  auto share = [&](double h, double st) {
    const double d = set_.lambda + std::abs(h);
    return d > 0.0 ? std::abs(h - st) / d : 0.0;
  };
  ReplicaValues<double> v;
  v.m_k = xp(0);
  v.q_k = xp(1);
  v.V_k = xp(2);
  v.m_v = xp(3);
  v.q_v = xp(4);
  v.V_v = xp(5);
  v.mhat_k = c.mhat_k;
  v.qhat_k = c.qhat_k;
  v.Vhat_k = c.Vhat_k;
  v.mhat_v = c.mhat_v;
  v.qhat_v = c.qhat_v;
  v.Vhat_v = c.Vhat_v;
  v.Vhat_k_stein = c.Vhat_k_stein;
  v.Vhat_v_stein = c.Vhat_v_stein;
  v.Vhat_k_hessian = c.Vhat_k_hessian;
  v.Vhat_v_hessian = c.Vhat_v_hessian;
  v.test_error = replica_test_error(set_, xp.data());
  v.train_error = c.train_mse;
  v.train_loss = 0.5 * c.train_mse + set_.lambda * (xp(1) + xp(4)) / (2.0 * alpha_);
  v.at_eigenvalue = c.at_eigenvalue;
  v.jump_share = replica_k_inactive(set_)
                     ? share(c.Vhat_v_hessian, c.Vhat_v_stein)
                     : std::max(share(c.Vhat_k_hessian, c.Vhat_k_stein),
                                share(c.Vhat_v_hessian, c.Vhat_v_stein));
  return v;
}

Vec ReplicaSystem::observables(const Vec& x) const {
  ReplicaValues<double> v = evaluate(x);
  std::vector<double> o;
  v.visit_observables([&](const char*, double d) { o.push_back(d); });
  return Eigen::Map<const Vec>(o.data(), static_cast<Eigen::Index>(o.size()));
}

double ReplicaSystem::free_energy(const Vec& x) const {
  Vec xp = x;
  project(xp);
  const ChannelStats c = replica_channel(set_, alpha_, xp.data(), *pts_, r_);
  return 0.5 * c.train_mse + set_.lambda * (xp(1) + xp(4)) / (2.0 * alpha_);
}

Vec replica_informed_start(const ReplicaSetting& set) {
  Vec x(6);
  if (set.activation == Activation::Softmax) {
    const double c0 = set.task == Task::Spiked ? std::sqrt(set.nu) : std::min(set.nu, 3.0);
    x << c0, c0 * c0 + 0.1, 1.0, 1.0, 1.1, 1.0;  // §4.7
  } else {
    x << 0.5, 0.35, 1.0, 1.0, 1.1, 1.0;
  }
  if (replica_k_inactive(set)) x(0) = x(1) = 0.0;
  return x;
}

Vec replica_uninformed_start(const ReplicaSetting& set) {
  Vec x(6);
  x << 0.05, 0.01, 1.0, 0.05, 0.01, 1.0;  // §4.7 suggestion
  if (replica_k_inactive(set)) x(0) = x(1) = 0.0;
  return x;
}

ReplicaCurveOptions::ReplicaCurveOptions() {
  solver.method = Method::Newton;
  solver.newton_steps = 8;
  solver.mix = 0.5;
  solver.tol = 1e-5;
  solver.max_iter = 300;
  solver.newton_polish = false;
  solver.stall_window = 20;
  stall_accept = 1e-2;
  retry = true;
  retry_mix = 0.2;
  retry_max_iter = 1500;
  target_se = 0.0;
  max_refine = 2;
  refine_unstable = false;
}

Stability rs_stability(double at, double se) {
  if (at + 2.0 * se < 1.0) return Stability::Stable;
  if (at - 2.0 * se > 1.0) return Stability::Unstable;
  return Stability::Marginal;
}

std::vector<std::string> replica_value_names() {
  std::vector<std::string> n;
  ReplicaValues<double>().visit([&](const char* name, double) { n.push_back(name); });
  return n;
}

namespace {

// The replica model as the curve driver sees it: systems per (alpha, replicate, level), the
// QMC point set of each refinement level (4^level x the points), the replicon stability hook,
// the training loss as free energy and coexistence by the test error.
class ReplicaCurveModel : public CurveModel {
 public:
  explicit ReplicaCurveModel(const ReplicaSetting& set) : set_(set) {}
  int replicates() const override { return set_.replicates; }
  bool prepare_level(int level) override {
    if (level < static_cast<int>(pts_.size())) return true;
    ReplicaSetting s = set_;
    if (level > 0) {
      s = settings_.back();
      if (s.n_points > std::numeric_limits<int>::max() / 4) return false;
      s.n_points *= 4;
    }
    settings_.push_back(s);
    pts_.push_back(make_replica_points(s));
    return true;
  }
  std::unique_ptr<FixedPointSystem> system(double alpha, int r, int level) const override {
    return std::make_unique<ReplicaSystem>(settings_[level], alpha, pts_[level], r);
  }
  int refine_on() const override { return index_of("test_error"); }
  Stability stability(const CurvePoint& p) const override {
    const Estimate& at = p.entry(index_of("at_eigenvalue"));
    return rs_stability(at.mean, at.se);
  }
  double free_energy(const CurvePoint& p) const override {
    return p.entry(index_of("train_loss")).mean;
  }
  bool distinct(const CurvePoint& a, const CurvePoint& b) const override {
    const std::size_t i = index_of("test_error");
    const Estimate &ea = a.entry(i), &eb = b.entry(i);
    return std::abs(eb.mean - ea.mean) > 4.0 * std::hypot(eb.se, ea.se) + 1e-3;
  }
  int n_points(int level) const { return settings_[level].n_points; }

  // Index of a named value in CurvePoint::entry (state then observables).
  static int index_of(const std::string& name) {
    static const std::vector<std::string> names = replica_value_names();
    for (std::size_t i = 0; i < names.size(); ++i)
      if (names[i] == name) return static_cast<int>(i);
    throw std::logic_error("replica value '" + name + "' not found");
  }

 private:
  ReplicaSetting set_;
  std::vector<ReplicaSetting> settings_;
  std::vector<std::shared_ptr<const SobolGaussian>> pts_;
};

}  // namespace

std::vector<ReplicaPoint> replica_curve(const ReplicaSetting& set, const std::vector<double>& alphas_in,
                                        const std::vector<ReplicaInit>& inits,
                                        const ReplicaCurveOptions& opt) {
  validate(set);
  std::vector<double> alphas = alphas_in;
  std::sort(alphas.begin(), alphas.end());
  ReplicaCurveModel model(set);
  std::vector<CurveStart> starts;
  for (ReplicaInit init : inits) {
    CurveStart st;
    st.label = to_string(init);
    st.x0 = init == ReplicaInit::Informed ? replica_informed_start(set)
                                          : replica_uninformed_start(set);
    st.direction = init == ReplicaInit::Informed ? Direction::Backward : Direction::Forward;
    starts.push_back(st);
  }
  const std::vector<CurvePoint> cps = run_curve(model, alphas, starts, opt);
  std::vector<ReplicaPoint> out;
  for (const CurvePoint& c : cps) {
    ReplicaPoint p;
    static_cast<CurveStatus&>(p) = c;
    p.alpha = c.param;
    p.init = inits[c.start];
    p.n_points = model.n_points(c.level);
    std::size_t j = 0;
    p.visit([&](const char*, Estimate& e) { e = c.entry(j++); });
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace slr
}  // namespace saddle
