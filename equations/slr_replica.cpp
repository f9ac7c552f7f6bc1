// SLR replica-symmetric fixed point for ridge ERM (docs/equations/slr_replica.md §4) with randomly shifted QMC
// channel expectations (§7b). See slr_replica.hpp for the sampling scheme; the proximal problem is
// in slr_replica_prox.hpp.
#include "equations/slr_replica.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace saddle {
namespace slr {

std::string to_string(ReplicaInit i) {
  return i == ReplicaInit::Informed ? "informed" : "uninformed";
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
                             std::shared_ptr<const SobolGaussian> pts, int replicate,
                             std::shared_ptr<const SobolGaussian> jump_pts)
    : set_(std::move(set)), alpha_(alpha), pts_(std::move(pts)), r_(replicate), jump_pts_(std::move(jump_pts)) {}

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

std::vector<std::string> ReplicaSystem::observable_names() const { return observable_names_of<ReplicaValues<double>>(); }

ReplicaValues<double> ReplicaSystem::evaluate(const Vec& x) const {
  Vec xp = x;
  project(xp);
  const ChannelStats c = replica_channel(set_, alpha_, xp.data(), *pts_, r_, true);
  // Jump share (S20b): the relative change of V = 1/(lambda + Vhat) that the jumps of the
  // proximal minimiser cause, max over k, v of Vhat_jump / (lambda + |Vhat_H|), always from the
  // exact jump term of a pre-integrated pass: the map's own (preint) or, for the sampled channel,
  // one pass at the solution on jump_pts (without them: the difference of the two sampled
  // forms, |Vhat_H - Vhat_S|, noise floor 0.015-0.03).
  const bool sampled = set_.channel == ChannelKind::Sampled;
  double jk = c.Vhat_k_jump, jv = c.Vhat_v_jump, hk = c.Vhat_k_hessian, hv = c.Vhat_v_hessian;
  if (sampled && jump_pts_) {
    ReplicaSetting js = jump_setting(set_, jump_pts_->points());
    const ChannelStats cj = replica_channel(js, alpha_, xp.data(), *jump_pts_, r_);
    jk = cj.Vhat_k_jump;
    jv = cj.Vhat_v_jump;
    hk = cj.Vhat_k_hessian;
    hv = cj.Vhat_v_hessian;
  } else if (sampled) {
    jk = c.Vhat_k_hessian - c.Vhat_k_stein;
    jv = c.Vhat_v_hessian - c.Vhat_v_stein;
  }
  auto share = [&](double h, double j) {
    const double d = set_.lambda + std::abs(h);
    return d > 0.0 ? std::abs(j) / d : 0.0;
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
  v.Vhat_k_jump = jk;
  v.Vhat_v_jump = jv;
  v.jump_share = replica_k_inactive(set_) ? share(hv, jv) : std::max(share(hk, jk), share(hv, jv));
  return v;
}

Vec ReplicaSystem::observables(const Vec& x) const { return observables_of(evaluate(x)); }

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

std::vector<std::string> replica_value_names() {
  std::vector<std::string> n;
  ReplicaValues<double>().visit([&](const char* name, double) { n.push_back(name); });
  return n;
}

}  // namespace slr
}  // namespace saddle
