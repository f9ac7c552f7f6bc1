// The nested channel of the 1RSB fixed point (docs/equations/slr_rsb.md (R2), (R4), (R5), (R7)):
// outer QMC over the teacher and the inter-state field omega0 (variance q0), inner antithetic QMC
// over the intra-state field (variance dq), the Moreau envelope M of (S16) at every nested point,
// the Parisi parameter x from the extremum condition (R5), and the hats as exact pathwise
// derivatives of the sampled channel energy C = -(1/x) E_outer log E_inner exp(-x M).
#include <gsl/gsl_qrng.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "equations/slr_rsb.hpp"
#include "integrators/seeds.hpp"
#include "integrators/special.hpp"
#include "solver/interrupt.hpp"

namespace saddle {
namespace slr {

using replica::ProxAct;
using replica::ProxInput;
using replica::ProxResult;
using replica::VecL;

// ---- inner points (R2) ----------------------------------------------------------------------

RsbInnerPoints::RsbInnerPoints(int dim, int n_inner, std::uint64_t seed)
    : d_(dim), n_(n_inner), seed_(seed) {
  if (dim < 1 || dim > 40) throw std::invalid_argument("inner Sobol dimension must be in 1..40");
  if (n_inner < 2 || n_inner % 2 != 0) throw std::invalid_argument("inner points must be even, >= 2");
  const int h = n_ / 2;
  base_.resize(static_cast<std::size_t>(h) * d_);
  gsl_qrng* q = gsl_qrng_alloc(gsl_qrng_sobol, d_);
  std::vector<double> u(d_);
  gsl_qrng_get(q, u.data());  // skip the origin
  for (int j = 0; j < h; ++j) gsl_qrng_get(q, base_.data() + static_cast<std::size_t>(j) * d_);
  gsl_qrng_free(q);
}

void RsbInnerPoints::fill(int r, int i, double* out) const {
  // One uniform shift per (seed, r, i) (Cranley-Patterson rotation), from a counter-based stream.
  std::uint64_t s = seed_ * 0xD1B54A32D192ED03ULL + static_cast<std::uint64_t>(r) * 0x8CB92BA72F3D8DD7ULL +
                    static_cast<std::uint64_t>(i) * 0xABC98388FB8FAC03ULL + 0x243F6A8885A308D3ULL;
  double shift[40];
  for (int k = 0; k < d_; ++k) shift[k] = (splitmix64(s) >> 11) * 0x1.0p-53;
  const int h = n_ / 2;
  for (int j = 0; j < h; ++j)
    for (int k = 0; k < d_; ++k) {
      double v = base_[static_cast<std::size_t>(j) * d_ + k] + shift[k];
      v -= std::floor(v);
      v = std::min(std::max(v, 1e-12), 1.0 - 1e-12);
      out[static_cast<std::size_t>(j) * d_ + k] = norm_quantile(v);
    }
  if (h >= 2 * d_) {
    // Second-moment matching: z <- L^-1 z with (2/n) sum z z^T = L L^T, so that the antithetic
    // set has mean 0 and covariance I exactly (exact for polynomials of degree <= 3).
    Eigen::Map<Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> Z(out, h, d_);
    const Eigen::MatrixXd S = (Z.transpose() * Z) / h;
    const Eigen::LLT<Eigen::MatrixXd> llt(S);
    if (llt.info() == Eigen::Success) {
      const Eigen::MatrixXd Zt = llt.matrixL().solve(Z.transpose());
      Z = Zt.transpose();
    }
  }
  for (int j = 0; j < h; ++j)
    for (int k = 0; k < d_; ++k)
      out[static_cast<std::size_t>(j + h) * d_ + k] = -out[static_cast<std::size_t>(j) * d_ + k];
}

std::shared_ptr<const RsbInnerPoints> make_rsb_inner_points(const RsbSetting& set) {
  const auto Ls = replica_lengths(set.rs);
  const int Lmax = *std::max_element(Ls.begin(), Ls.end());
  // A different stream from the outer shifts of the same seed.
  return std::make_shared<const RsbInnerPoints>(2 * Lmax, set.n_inner, set.rs.seed ^ 0x5DEECE66DULL);
}

// ---- nested channel ------------------------------------------------------------------------

namespace {

constexpr double kLogStep = 0.05;  // step in log x of the slope of (R5)

struct State {
  double m[2], q1[2], V[2], dq[2], q0[2];
  double x;
};

State unpack(const double* P) {
  State s;
  for (int a = 0; a < 2; ++a) {
    s.m[a] = P[4 * a];
    s.q1[a] = P[4 * a + 1];
    s.V[a] = P[4 * a + 2];
    s.dq[a] = P[4 * a + 3];
    s.q0[a] = s.q1[a] - s.dq[a];
  }
  s.x = std::exp(P[8]);
  return s;
}

// Sums over outer points i of W_i (.)_i, W_i = length share x outer weight / n_out, where (.)_i
// is an average over the inner points j with the tilted weights p_ij ∝ exp(-x M_ij) (R2).
struct Acc {
  double dm[2] = {0, 0}, dq0[2] = {0, 0}, ddq[2] = {0, 0}, g2[2] = {0, 0}, J[2] = {0, 0};
  double q0h[2] = {0, 0};  // W |<g_a>|^2
  double tr = 0, kl = 0, ess = 0, w = 0, C = 0, max_grad = 0;
  double kl_up = 0, kl_dn = 0;  // W KL at x e^{+-kLogStep} (the slope of (R5) in log x)
  Eigen::Matrix4d G1 = Eigen::Matrix4d::Zero();  // intra-state Gram (upper triangle)
  std::vector<Eigen::MatrixXd> J0;                // per outer point: 𝒥0 = -sym(d<g>/d omega0)
  std::vector<double> W0;                         // and its weight W
};

// One nested point (outer i, inner j): the Moreau envelope and the dot products of g with the
// derivatives of the fields (pathwise derivatives of M: dM = -g . d omega - |g_a|^2 dV_a / 2).
struct Rec {
  double M;
  double dm[2], dq0[2], ddq[2], g2[2], J[2];  // [0] = k (chi fields), [1] = v (z fields)
  double r2;
  double g[2 * replica::kMaxL];   // (g^chi, g^z)
  double frob[10];                // want_stability: <B_a, B_b>_F, a <= b, blocks kk, kv, vk, vv
};

template <int L>
void accumulate(const RsbSetting& set, const State& S, double share, const SobolGaussian& outer,
                const RsbInnerPoints& inner, int rep, bool want_stab, Acc& acc) {
  const ReplicaSetting& rs = set.rs;
  const ProxAct act = rs.activation == Activation::Softmax ? ProxAct::Softmax : ProxAct::Linear;
  const double m_k = S.m[0], q0_k = S.q0[0], m_v = S.m[1], q0_v = S.q0[1], x = S.x;
  const double s_k = std::sqrt(std::max(q0_k - m_k * m_k, 0.0));
  const double sq_k = std::sqrt(std::max(q0_k, 0.0));
  const double sq_v = std::sqrt(std::max(q0_v, 0.0));
  const double D1 = 1.0 + rs.delta;
  const double c_yw = m_v / D1;
  const double s_w1 = std::sqrt(std::max(q0_v - m_v * m_v / D1, 0.0));
  const double sqrt_nu = std::sqrt(rs.nu);
  const double rdq[2] = {std::sqrt(S.dq[0]), std::sqrt(S.dq[1])};
  const bool k_active = !(act == ProxAct::Softmax && L == 1);
  const bool max_inf = rs.task == Task::Max && std::isinf(rs.nu);
  const int n_out = outer.points(), n_in = inner.points(), din = inner.dim();
  const int Lmax = din / 2;
  std::vector<double> xi1(static_cast<std::size_t>(n_in) * din), p(n_in);
  std::vector<Rec> rec(n_in);
  ProxInput<L> in;
  in.V_k = S.V[0];
  in.V_v = S.V[1];
  VecL<L> w0c, w0z, dmc, dqc, dmz, dqz;  // outer fields and their derivatives in (m, q0)
  for (int i = 0; i < n_out; ++i) {
    // An interrupt ends the sum at once (the caller's iteration stops at its next poll and the
    // interrupted curve is dropped; polled, not thrown: this may run inside an OpenMP task).
    if (interrupt_requested()) break;
    const double* u = outer.point(rep, i);
    double wgt = 1.0;
    int off;
    dmc.setZero();
    dqc.setZero();
    dmz.setZero();
    dqz.setZero();
    if (rs.task == Task::Spiked) {
      // (S15a) with q0: omega0_l = m_k sqrt(nu) delta_l1 + sqrt(q0_k) u_l.
      for (int l = 0; l < L; ++l) {
        w0c(l) = sq_k * u[l] + (l == 0 ? m_k * sqrt_nu : 0.0);
        dmc(l) = l == 0 ? sqrt_nu : 0.0;
        dqc(l) = sq_k > 0 ? u[l] / (2.0 * sq_k) : 0.0;
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
        const double mx = (rs.nu * chis).maxCoeff();
        double den = 0.0;
        for (int l = 0; l < L; ++l) den += std::exp(rs.nu * chis(l) - mx);
        wgt = L * std::exp(rs.nu * chis(0) - mx) / den;
      }
      for (int l = 0; l < L; ++l) {
        w0c(l) = m_k * chis(l) + s_k * xi(l);  // (S15) with q0
        dmc(l) = s_k > 0 ? chis(l) - m_k * xi(l) / s_k : chis(l);
        dqc(l) = s_k > 0 ? xi(l) / (2.0 * s_k) : 0.0;
      }
      off = 2 * L;
    }
    // z side: y = sqrt(1+Delta) a, omega0_1 = (m_v/(1+Delta)) y + sqrt(q0_v - m_v^2/(1+Delta)) b,
    // omega0_l = sqrt(q0_v) u_l (l >= 2).
    const double y = std::sqrt(D1) * u[off + L - 1];
    const double b = u[off + L];
    in.y = y;
    w0z(0) = c_yw * y + s_w1 * b;
    if (s_w1 > 0) {
      dmz(0) = y / D1 - (m_v / D1) * b / s_w1;
      dqz(0) = b / (2.0 * s_w1);
    }
    for (int l = 1; l < L; ++l) {
      w0z(l) = sq_v * u[off + l - 1];
      dqz(l) = sq_v > 0 ? u[off + l - 1] / (2.0 * sq_v) : 0.0;
    }
    if (wgt == 0.0) continue;
    const double W = share * wgt / n_out;
    inner.fill(rep, i, xi1.data());
    double Mmin = std::numeric_limits<double>::infinity();
    for (int j = 0; j < n_in; ++j) {
      const double* e = xi1.data() + static_cast<std::size_t>(j) * din;
      VecL<L> ec, ez;
      for (int l = 0; l < L; ++l) {
        ec(l) = e[l];
        ez(l) = e[Lmax + l];
      }
      in.omega_chi = w0c + rdq[0] * ec;  // (R2): omega = omega0 + sqrt(dq) xi1
      in.omega_z = w0z + rdq[1] * ez;
      const ProxResult<L> pr = replica::solve_prox<L>(act, in, rs.prox);
      const VecL<L> gk = (pr.chi - in.omega_chi) / S.V[0];  // (S18)
      const VecL<L> gz = (pr.z - in.omega_z) / S.V[1];
      Rec& R = rec[j];
      R.M = pr.objective;
      Mmin = std::min(Mmin, R.M);
      R.dm[0] = gk.dot(dmc);
      R.dq0[0] = gk.dot(dqc);
      R.ddq[0] = gk.dot(ec);
      R.g2[0] = gk.squaredNorm();
      R.J[0] = pr.J_chi.sum();
      R.dm[1] = gz.dot(dmz);
      R.dq0[1] = gz.dot(dqz);
      R.ddq[1] = gz.dot(ez);
      R.g2[1] = gz.squaredNorm();
      R.J[1] = pr.J_z.sum();
      R.r2 = pr.residual * pr.residual;
      for (int l = 0; l < L; ++l) {
        R.g[l] = gk(l);
        R.g[L + l] = gz(l);
      }
      acc.max_grad = std::max(acc.max_grad, pr.grad_inf);
      if (want_stab) {
        const replica::JacobianBlocks<L> jb = replica::jacobian_blocks<L>(act, in, pr.chi);
        const Eigen::Matrix<double, L, L> vk = jb.cz.transpose();
        const Eigen::Matrix<double, L, L>* Bm[4] = {&jb.cc, &jb.cz, &vk, &jb.zz};
        int t = 0;
        for (int a = 0; a < 4; ++a)
          for (int c = a; c < 4; ++c) R.frob[t++] = Bm[a]->cwiseProduct(*Bm[c]).sum();
      }
    }
    // Tilted inner measure p_j ∝ exp(-x (M_j - Mmin)); log Zhat = -x Mmin + log mean(...).
    double z = 0.0;
    for (int j = 0; j < n_in; ++j) {
      p[j] = std::exp(-x * (rec[j].M - Mmin));
      z += p[j];
    }
    double avg = 0.0, p2 = 0.0;
    for (int j = 0; j < n_in; ++j) {
      p[j] /= z;
      avg += p[j] * (rec[j].M - Mmin);
      p2 += p[j] * p[j];
    }
    const double logz_rel = std::log(z / n_in);
    acc.C += W * (Mmin - logz_rel / x);      // -(1/x) log mean exp(-x M)
    acc.kl += W * (-logz_rel - x * avg);     // KL(p | uniform)
    for (int sgn = -1; sgn <= 1; sgn += 2) {  // KL at x e^{+-kLogStep}, same M values
      const double xs = x * std::exp(sgn * kLogStep);
      double zs = 0.0, as = 0.0;
      for (int j = 0; j < n_in; ++j) {
        const double d = rec[j].M - Mmin, e = std::exp(-xs * d);
        zs += e;
        as += e * d;
      }
      (sgn > 0 ? acc.kl_up : acc.kl_dn) += W * (-std::log(zs / n_in) - xs * as / zs);
    }
    acc.ess += W / (p2 * n_in);
    acc.w += W;
    double gm[2 * replica::kMaxL] = {};
    for (int j = 0; j < n_in; ++j) {
      const Rec& R = rec[j];
      const double w = W * p[j];
      for (int a = 0; a < 2; ++a) {
        acc.dm[a] += w * R.dm[a];
        acc.dq0[a] += w * R.dq0[a];
        acc.ddq[a] += w * R.ddq[a];
        acc.g2[a] += w * R.g2[a];
        acc.J[a] += w * R.J[a];
      }
      acc.tr += w * R.r2;
      for (int l = 0; l < 2 * L; ++l) gm[l] += p[j] * R.g[l];
    }
    for (int l = 0; l < L; ++l) {
      acc.q0h[0] += W * gm[l] * gm[l];
      acc.q0h[1] += W * gm[L + l] * gm[L + l];
    }
    if (want_stab) {
      // Intra-state Gram: <<B_a, B_b>_F> under the tilted inner measure (R7).
      for (int j = 0; j < n_in; ++j) {
        int t = 0;
        for (int a = 0; a < 4; ++a)
          for (int c = a; c < 4; ++c) acc.G1(a, c) += W * p[j] * rec[j].frob[t++];
      }
      // Inter-state: D = d<g>/d omega0 = (<g xi^T> - <g><xi>^T) diag(1/sqrt(dq)) (inner Stein
      // identity, jumps included), 𝒥0 = -sym(D).
      const int n2 = 2 * L;
      Eigen::MatrixXd D = Eigen::MatrixXd::Zero(n2, n2);
      Eigen::VectorXd xm = Eigen::VectorXd::Zero(n2);
      for (int j = 0; j < n_in; ++j) {
        const double* e = xi1.data() + static_cast<std::size_t>(j) * din;
        for (int l2 = 0; l2 < n2; ++l2) {
          const double xv = l2 < L ? e[l2] : e[Lmax + l2 - L];
          xm(l2) += p[j] * xv;
          for (int l = 0; l < n2; ++l) D(l, l2) += p[j] * rec[j].g[l] * xv;
        }
      }
      for (int l2 = 0; l2 < n2; ++l2) {
        for (int l = 0; l < n2; ++l) D(l, l2) -= gm[l] * xm(l2);
        const int a = l2 < L ? 0 : 1;
        if (a == 0 && !k_active) D.col(l2).setZero();  // no chi fields
        else D.col(l2) /= rdq[a];
      }
      acc.J0.push_back(-0.5 * (D + D.transpose()));
      acc.W0.push_back(W);
    }
  }
}

void accumulate_length(int L, const RsbSetting& set, const State& S, double share,
                       const SobolGaussian& outer, const RsbInnerPoints& inner, int rep,
                       bool want_stab, Acc& acc) {
  switch (L) {
    case 1: return accumulate<1>(set, S, share, outer, inner, rep, want_stab, acc);
    case 2: return accumulate<2>(set, S, share, outer, inner, rep, want_stab, acc);
    case 3: return accumulate<3>(set, S, share, outer, inner, rep, want_stab, acc);
    case 4: return accumulate<4>(set, S, share, outer, inner, rep, want_stab, acc);
    default: throw std::invalid_argument("L out of range for the 1RSB channel");
  }
}

// The prior part Pc of x^2 de/dx (R5), e per D.
double prior_complexity(const State& S) {
  const double x = S.x;
  double g = 0.0;
  for (int a = 0; a < 2; ++a) {
    const double eps = x * S.dq[a] / S.V[a], A = S.V[a] + x * S.dq[a];
    const double s2 = S.q0[a] - S.m[a] * S.m[a];
    g += 0.5 * (std::log1p(eps) - eps / (1.0 + eps) + x * x * s2 * S.dq[a] / (A * A));
  }
  return g;
}

}  // namespace

RsbChannel rsb_channel(const RsbSetting& set, double alpha, const double* P,
                       const SobolGaussian& outer, const RsbInnerPoints& inner, int rep) {
  const State S = unpack(P);
  const auto Ls = replica_lengths(set.rs);
  Acc acc;
  for (int L : Ls)
    accumulate_length(L, set, S, 1.0 / static_cast<double>(Ls.size()), outer, inner, rep, false,
                      acc);
  const bool k_active = !replica_k_inactive(set.rs);
  RsbChannel c;
  c.x = S.x;
  c.channel_energy = acc.C;
  c.prior_complexity = prior_complexity(S);
  c.kl = alpha * acc.kl;
  {
    State up = S, dn = S;
    up.x = S.x * std::exp(kLogStep);
    dn.x = S.x * std::exp(-kLogStep);
    c.dG_dlogx = ((prior_complexity(up) - alpha * acc.kl_up) -
                  (prior_complexity(dn) - alpha * acc.kl_dn)) / (2.0 * kLogStep);
  }
  for (int a = 0; a < 2; ++a)
    if (S.q1[a] > 0.0) c.gap = std::max(c.gap, S.dq[a] / S.q1[a]);
  for (int a = 0; a < 2; ++a) {
    if (a == 0 && !k_active) continue;
    c.mhat[a] = alpha * acc.dm[a];                           // -alpha dC/dm
    c.Vhat0[a] = -2.0 * alpha * acc.dq0[a];                  // 2 alpha dC/dq0
    c.Vhat1[a] = -alpha * acc.ddq[a] / std::sqrt(S.dq[a]);   // 2 alpha dC/ddq
    c.qhat1[a] = alpha * acc.g2[a];                          // -2 alpha dC/dV
    c.qhat0[a] = alpha * acc.q0h[a];
    c.Vhat_hessian[a] = alpha * acc.J[a];
  }
  c.train_mse = acc.tr;
  c.ess = acc.w > 0 ? acc.ess / acc.w : 0.0;
  c.max_grad = acc.max_grad;
  return c;
}

RsbStability rsb_stability(const RsbSetting& set, double alpha, const double* P,
                           const SobolGaussian& outer, int rep, int n_inner) {
  // (R7) from two independent inner point sets A, B: the intra-state Gram is a tilted mean of
  // squares (averaged over A and B); the inter-state one is a square of a tilted mean, whose
  // plain estimate is biased upwards by the inner noise (measured: 1.73, 1.23, 1.04, 0.99 at 16,
  // 32, 128, 512 inner points), so it is taken as the cross product <𝒥0_A, 𝒥0_B>.
  const State S = unpack(P);
  const auto Ls = replica_lengths(set.rs);
  const int Lmax = *std::max_element(Ls.begin(), Ls.end());
  const RsbInnerPoints ia(2 * Lmax, n_inner, set.rs.seed ^ 0xA5A5A5A5ULL);
  const RsbInnerPoints ib(2 * Lmax, n_inner, set.rs.seed ^ 0x3C3C3C3C3CULL);
  Acc A, B;
  for (int L : Ls) {
    const double share = 1.0 / static_cast<double>(Ls.size());
    accumulate_length(L, set, S, share, outer, ia, rep, true, A);
    accumulate_length(L, set, S, share, outer, ib, rep, true, B);
  }
  Eigen::Matrix4d G1 = 0.5 * (A.G1 + B.G1), G0 = Eigen::Matrix4d::Zero();
  for (int a = 0; a < 4; ++a)
    for (int b = 0; b < a; ++b) G1(a, b) = G1(b, a);
  for (std::size_t i = 0; i < A.J0.size(); ++i) {
    const Eigen::MatrixXd& X = A.J0[i];
    const Eigen::MatrixXd& Y = B.J0[i];
    const int L = static_cast<int>(X.rows()) / 2;
    const Eigen::MatrixXd bx[4] = {X.block(0, 0, L, L), X.block(0, L, L, L), X.block(L, 0, L, L),
                                   X.block(L, L, L, L)};
    const Eigen::MatrixXd by[4] = {Y.block(0, 0, L, L), Y.block(0, L, L, L), Y.block(L, 0, L, L),
                                   Y.block(L, L, L, L)};
    for (int a = 0; a < 4; ++a)
      for (int b = 0; b < 4; ++b)
        G0(a, b) += 0.5 * A.W0[i] * (bx[a].cwiseProduct(by[b]).sum() + by[a].cwiseProduct(bx[b]).sum());
  }
  if (replica_k_inactive(set.rs)) {  // the chi fields do not exist: no k blocks
    for (int a = 0; a < 3; ++a)
      for (int b = 0; b < 4; ++b) {
        G1(a, b) = G1(b, a) = 0.0;
        G0(a, b) = G0(b, a) = 0.0;
      }
  }
  RsbStability st;
  st.at1 = replicon_eigenvalue(G1, alpha, S.V[0], S.V[1]);
  st.at0 = replicon_eigenvalue(G0, alpha, S.V[0] + S.x * S.dq[0], S.V[1] + S.x * S.dq[1]);
  return st;
}

double rsb_prior_energy(double lambda, double alpha, const double* P) {
  // (R3) per D, divided by alpha (per sample).
  const double x = std::exp(P[8]);
  double e = 0.0;
  for (int a = 0; a < 2; ++a) {
    const double m = P[4 * a], q1 = P[4 * a + 1], V = P[4 * a + 2], dq = P[4 * a + 3];
    const double q0 = q1 - dq, A = V + x * dq;
    e += -std::log1p(x * dq / V) / (2.0 * x) - (q0 - m * m) / (2.0 * A) + 0.5 * lambda * q1;
  }
  return e / alpha;
}

void rsb_prior_update(double lambda, const RsbChannel& c, double* P) {
  // (R4): A = V + x dq = 1/(lambda + Vhat0), m = mhat A, q0 = m^2 + A^2 qhat0,
  // 1/V = 1/A + x (qhat1 - qhat0), dq = A V (qhat1 - qhat0), q1 = q0 + dq.
  // The stationarity of the energy in m, q0 and V is exact for the sampled channel; in dq it
  // reads q0 - m^2 = A^2 (Vhat0 - Vhat1)/x and 1/V = lambda + Vhat1 + x qhat1, which the inner
  // Stein identity Vhat0 - Vhat1 = x qhat0 turns into the forms above (equal for exact
  // integrals): they need no difference of two Stein estimates, keep q0 >= m^2 and dq >= 0, and
  // make dq vanish with the inner variance of g (the RS limit).
  // (R5) as an update of x (Pc the prior complexity, K = alpha E KL): its fixed points with
  // dq > 0 are x^2 de/dx = Pc - K = 0.
  const double x = c.x;
  for (int a = 0; a < 2; ++a) {
    const double A = 1.0 / (lambda + c.Vhat0[a]);
    const double var = std::max(c.qhat1[a] - c.qhat0[a], 0.0);  // alpha E Var_inner(g_a)
    const double V = 1.0 / (1.0 / A + x * var);
    const double dq = A * V * var;
    const double m = c.mhat[a] * A;
    const double q0 = m * m + A * A * c.qhat0[a];
    P[4 * a] = m;
    P[4 * a + 1] = q0 + dq;
    P[4 * a + 2] = V;
    P[4 * a + 3] = dq;
  }
  // A Newton step in log x on G = Pc - K at fixed order parameters, its denominator bounded below
  // by 0.05 (Pc + K): where G decreases (a maximum of f in x) and steeply, Newton; elsewhere a
  // step towards larger f of at most the relative imbalance / 0.05, clipped to +-0.5.
  const double G = c.prior_complexity - c.kl, scale = c.prior_complexity + c.kl;
  const double den = std::max(-c.dG_dlogx, 0.0) + 0.05 * scale;
  double step = den > 0.0 ? G / den : 0.0;
  // x is undetermined in the RS limit dq -> 0, where Pc and K vanish together to first order in
  // dq and their sampled difference is noise: the step is weighted by r/(r + 1e-3), r the
  // largest relative gap dq/q (no effect on the fixed point where dq > 0).
  step *= c.gap / (c.gap + 1e-3);
  if (!std::isfinite(step)) step = 0.0;
  P[8] = std::log(x) + std::max(-0.5, std::min(0.5, step));
}

}  // namespace slr
}  // namespace saddle
