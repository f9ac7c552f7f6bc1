// SLR replica-symmetric fixed point for ridge ERM (spec slr.md §4) with randomly shifted QMC
// channel expectations (§7b). See slr_replica.hpp for the sampling scheme; the proximal problem is
// in slr_replica_prox.hpp.
#include "equations/slr_replica.hpp"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "solver/interrupt.hpp"

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
                          const SobolGaussian& pts, int rep, bool want_at) {
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
  return c;
}

}  // namespace

namespace {
ChannelStats channel_for_length(int L, const ReplicaSetting& set, double alpha, const double* P,
                                const SobolGaussian& pts, int replicate, bool want_at) {
  switch (L) {
    case 1: return channel_impl<1>(set, alpha, P, pts, replicate, want_at);
    case 2: return channel_impl<2>(set, alpha, P, pts, replicate, want_at);
    case 3: return channel_impl<3>(set, alpha, P, pts, replicate, want_at);
    case 4: return channel_impl<4>(set, alpha, P, pts, replicate, want_at);
    default: throw std::invalid_argument("L out of range for the replica channel");
  }
}
}  // namespace

ChannelStats replica_channel(const ReplicaSetting& set, double alpha, const double* P,
                             const SobolGaussian& pts, int replicate, bool want_at) {
  // Every channel quantity is an average over samples, hence over their lengths (§4.6): the
  // hats, the training MSE and the replicon Gram matrix are averaged with weight 1/|set|; the
  // replicon eigenvalue is taken of the averaged Gram matrix.
  const auto Ls = replica_lengths(set);
  ChannelStats c;
  const double w = 1.0 / static_cast<double>(Ls.size());
  for (int L : Ls) {
    const ChannelStats s = channel_for_length(L, set, alpha, P, pts, replicate, want_at);
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
  return {"m_k", "q_k", "V_k", "m_v", "q_v", "V_v"};
}

Vec ReplicaSystem::residual(const Vec& x) const {
  if (cache_x_.size() == x.size() && cache_x_ == x) return cache_f_ - x;
  return map(x) - x;
}

Vec ReplicaSystem::map(const Vec& x) const {
  if (cache_x_.size() == x.size() && cache_x_ == x) return cache_f_;
  Vec xp = x;
  project(xp);
  const ChannelStats c = replica_channel(set_, alpha_, xp.data(), *pts_, r_);
  Vec out(6);
  replica_prior(set_.lambda, c, out.data());
  if (replica_k_inactive(set_)) out(0) = out(1) = 0.0;
  cache_x_ = x;
  cache_f_ = out;
  return out;
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
  return {"mhat_k",      "qhat_k",        "Vhat_k",        "mhat_v",     "qhat_v",
          "Vhat_v",      "Vhat_k_stein",  "Vhat_v_stein",  "Vhat_k_hessian",
          "Vhat_v_hessian", "test_error", "train_error",   "train_loss", "at_eigenvalue", "jump_share"};
}

Vec ReplicaSystem::observables(const Vec& x) const {
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
  const double jump = replica_k_inactive(set_)
                          ? share(c.Vhat_v_hessian, c.Vhat_v_stein)
                          : std::max(share(c.Vhat_k_hessian, c.Vhat_k_stein),
                                     share(c.Vhat_v_hessian, c.Vhat_v_stein));
  Vec o(kReplicaObservables);
  o << c.mhat_k, c.qhat_k, c.Vhat_k, c.mhat_v, c.qhat_v, c.Vhat_v, c.Vhat_k_stein, c.Vhat_v_stein,
      c.Vhat_k_hessian, c.Vhat_v_hessian, replica_test_error(set_, xp.data()), c.train_mse,
      0.5 * c.train_mse + set_.lambda * (xp(1) + xp(4)) / (2.0 * alpha_), c.at_eigenvalue, jump;
  return o;
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
  solver.method = Method::Anderson;
  solver.mix = 0.5;
  solver.tol = 1e-5;
  solver.max_iter = 300;
  solver.newton_polish = false;
  solver.stall_window = 20;
}

RsStability rs_stability(double at, double se) {
  if (at + 2.0 * se < 1.0) return RsStability::Stable;
  if (at - 2.0 * se > 1.0) return RsStability::Unstable;
  return RsStability::Marginal;
}

std::string to_string(RsStability s) {
  switch (s) {
    case RsStability::Stable: return "stable";
    case RsStability::Unstable: return "unstable";
    default: return "marginal";
  }
}

std::vector<std::string> replica_value_names() {
  ReplicaSetting s;
  ReplicaSystem sys(s, 1.0, nullptr, 0);
  std::vector<std::string> v = sys.names();
  for (auto& o : sys.observable_names()) v.push_back(o);
  return v;
}

namespace {
bool accepted(const SolveSummary& sm, const ReplicaCurveOptions& opt) {
  return sm.converged || (sm.stalled && sm.residual <= opt.stall_accept);
}

// One solve from `start`; a replicate that is not accepted is retried with a slow damped
// iteration (an unstable direction of the plain or accelerated iteration near the interpolation
// peak of linear attention), keeping the better of the two.
SolveResult solve_with_retry(const FixedPointSystem& sys, const Vec& start,
                             const ReplicaCurveOptions& opt) {
  SolveResult sr = solve(sys, start, opt.solver);
  if (opt.retry && !accepted(sr.summary, opt)) {
    SolverOptions slow = opt.solver;
    slow.method = Method::Damped;
    slow.mix = opt.retry_mix;
    slow.max_iter = opt.retry_max_iter;
    slow.stall_window = std::max(opt.solver.stall_window, 100);
    SolveResult again = solve(sys, start, slow);
    again.summary.iterations += sr.summary.iterations;
    if (accepted(again.summary, opt) || again.summary.residual < sr.summary.residual)
      return again;
  }
  return sr;
}
}  // namespace

std::vector<ReplicaPoint> replica_curve(const ReplicaSetting& set, const std::vector<double>& alphas_in,
                                        const std::vector<ReplicaInit>& inits,
                                        const ReplicaCurveOptions& opt) {
  validate(set);
  std::vector<double> alphas = alphas_in;
  std::sort(alphas.begin(), alphas.end());
  const auto pts = make_replica_points(set);
  const int R = set.replicates;
  const int n_tasks = static_cast<int>(inits.size()) * R;
  const int n_alpha = static_cast<int>(alphas.size());
  // Per task: solve results and observables per alpha.
  std::vector<std::vector<SolveResult>> res(n_tasks);
  std::vector<std::vector<Vec>> obs(n_tasks);

#pragma omp parallel for schedule(dynamic, 1)
  for (int t = 0; t < n_tasks; ++t) {
    const ReplicaInit init = inits[t / R];
    const int r = t % R;
    SystemFactory make = [&](double a) -> std::unique_ptr<FixedPointSystem> {
      return std::make_unique<ReplicaSystem>(set, a, pts, r);
    };
    const Vec x0 = init == ReplicaInit::Informed ? replica_informed_start(set)
                                                 : replica_uninformed_start(set);
    const Direction dir = init == ReplicaInit::Informed ? Direction::Backward : Direction::Forward;
    // Continuation with warm starts (as solver/continuation.hpp, but a stalled replicate whose
    // limit cycle is small, diff <= stall_accept, is also a valid warm start: with jumping
    // proximal minimisers that is the normal end of a fixed-draw iteration, §4.5).
    res[t].resize(n_alpha);
    Vec start = x0;
    for (int k = 0; k < n_alpha; ++k) {
      const int i = dir == Direction::Forward ? k : n_alpha - 1 - k;
      std::unique_ptr<FixedPointSystem> sys = make(alphas[i]);
      res[t][i] = solve_with_retry(*sys, start, opt);
      const SolveSummary& sm = res[t][i].summary;
      if (sm.converged || (sm.stalled && sm.residual <= opt.stall_accept)) start = res[t][i].x;
    }
    obs[t].resize(n_alpha);
    for (int i = 0; i < n_alpha; ++i) {
      if (interrupt_requested()) { obs[t][i] = Vec::Zero(kReplicaObservables); continue; }  // dropped
      ReplicaSystem sys(set, alphas[i], pts, r);
      Vec x = res[t][i].x;
      sys.project(x);
      res[t][i].x = x;
      obs[t][i] = sys.observables(x);
    }
  }

  // Aggregation over replicates of the point (init k, alpha i).
  const int nv = 6 + kReplicaObservables;
  auto aggregate = [&](std::size_t k, int i, int n_points) {
    ReplicaPoint p;
    p.alpha = alphas[i];
    p.init = inits[k];
    p.n_points = n_points;
    std::vector<std::vector<double>> vals(nv, std::vector<double>(R));
    for (int r = 0; r < R; ++r) {
      const int t = static_cast<int>(k) * R + r;
      const SolveResult& sr = res[t][i];
      for (int j = 0; j < 6; ++j) vals[j][r] = sr.x(j);
      for (int j = 0; j < kReplicaObservables; ++j) vals[6 + j][r] = obs[t][i](j);
      const bool ok_tol = sr.summary.converged && !sr.summary.stalled;
      const bool ok_stall = sr.summary.stalled && sr.summary.residual <= opt.stall_accept;
      if (ok_tol) ++p.n_converged;
      else if (sr.summary.stalled) ++p.n_stalled;
      if (!ok_tol && !ok_stall) ++p.n_failed;
      p.iterations = std::max(p.iterations, sr.summary.iterations);
      p.residual = std::max(p.residual, sr.summary.residual);
    }
    p.mean.resize(nv);
    p.se.resize(nv);
    for (int j = 0; j < nv; ++j) {
      const Estimate e = summarize(vals[j]);
      p.mean[j] = e.mean;
      p.se[j] = e.se;
    }
    p.converged = p.n_failed == 0;
    return p;
  };
  std::vector<ReplicaPoint> out;
  for (std::size_t k = 0; k < inits.size(); ++k)
    for (int i = 0; i < n_alpha; ++i) out.push_back(aggregate(k, i, set.n_points));

  // Error-bar refinement (see ReplicaCurveOptions::target_se).
  const int i_test = 6 + 10, i_at = 6 + 13;
  ReplicaSetting fine = set;
  for (int level = 1; opt.target_se > 0.0 && level <= opt.max_refine && !interrupt_requested(); ++level) {
    std::vector<int> todo;  // indices into out
    for (int j = 0; j < static_cast<int>(out.size()); ++j) {
      const ReplicaPoint& p = out[j];
      if (p.converged && p.se[i_test] > opt.target_se &&
          (opt.refine_unstable || rs_stability(p.mean[i_at], p.se[i_at]) != RsStability::Unstable))
        todo.push_back(j);
    }
    if (todo.empty()) break;
    if (fine.n_points > std::numeric_limits<int>::max() / 4) break;
    fine.n_points *= 4;
    const auto fpts = make_replica_points(fine);
    std::vector<SolveResult> fres(todo.size() * R);
    std::vector<Vec> fobs(todo.size() * R);
#pragma omp parallel for schedule(dynamic, 1)
    for (int u = 0; u < static_cast<int>(fres.size()); ++u) {
      const int j = todo[u / R], r = u % R;
      const int k = j / n_alpha, i = j % n_alpha;
      ReplicaSystem sys(fine, alphas[i], fpts, r);
      SolveResult sr = solve_with_retry(sys, res[k * R + r][i].x, opt);
      sys.project(sr.x);
      fobs[u] = sys.observables(sr.x);
      fres[u] = std::move(sr);
    }
    for (std::size_t v = 0; v < todo.size(); ++v) {
      const int j = todo[v], k = j / n_alpha, i = j % n_alpha;
      // Keep the refined solve only if every replicate was accepted (else the coarse point,
      // which converged, stays).
      bool all_ok = true;
      for (int r = 0; r < R; ++r) all_ok = all_ok && accepted(fres[v * R + r].summary, opt);
      if (!all_ok) continue;
      for (int r = 0; r < R; ++r) {
        res[k * R + r][i] = fres[v * R + r];
        obs[k * R + r][i] = fobs[v * R + r];
      }
      out[j] = aggregate(static_cast<std::size_t>(k), i, fine.n_points);
    }
  }
  return out;
}

}  // namespace slr
}  // namespace saddle
