// The channel part of the SLR replica fixed point (docs/equations/slr_replica.md §4.4-§4.5, §4.9):
// the averages over the channel draw of the proximal step's outputs at a state
// P = (m_k, q_k, V_k, m_v, q_v, V_v), for one QMC replicate, integrated either by pre-integration
// along a line of the key noise (default) or by plain QMC sampling (`ChannelKind`).
#pragma once
#include <Eigen/Dense>

#include "equations/slr_replica_setting.hpp"

namespace saddle {
namespace slr {

struct ChannelStats {
  double mhat_k = 0, qhat_k = 0, Vhat_k = 0;     // Vhat by the form chosen in the setting
  double mhat_v = 0, qhat_v = 0, Vhat_v = 0;
  double Vhat_k_stein = 0, Vhat_v_stein = 0;     // (S20'); pre-integrated: (S20'')
  double Vhat_k_stein_direct = 0, Vhat_v_stein_direct = 0;  // (S20') by its weights (a check)
  double Vhat_k_hessian = 0, Vhat_v_hessian = 0; // (S20)
  // Jump terms (S20b), pre-integrated channel only: alpha E[delta(D) |Delta g^a|^2], the part of
  // the Stein form that the Hessian form misses, Vhat_stein = Vhat_hessian - Vhat_jump.
  double Vhat_k_jump = 0, Vhat_v_jump = 0;
  double jump_lines = 0;  // pre-integrated: jumps per line (mean)
  double unresolved = 0;  // pre-integrated: share of lines whose tie search did not converge
  double train_mse = 0;                          // E[(y - s.z)^2] (§4.6), includes Delta
  double not_pd = 0;     // fraction of draws where V^-1 + H was not positive definite
  double max_grad = 0;   // worst |grad|_inf of the prox solutions
  // Replicon (de Almeida-Thouless) eigenvalue from the Hessian-form 𝒥, computed only when asked
  // (want_at): RS is locally unstable when it exceeds 1. It does not contain the jumps of the
  // proximal minimiser (they make the true zero-temperature replicon infinite, see
  // Vhat_*_jump and rs_stability).
  double at_eigenvalue = 0;
  Eigen::Matrix4d at_gram = Eigen::Matrix4d::Zero();  // E[<B_i, B_j>] behind at_eigenvalue
  // With want_jacobian (Stein form only): d(mhat_k, qhat_k, Vhat_k, mhat_v, qhat_v, Vhat_v) /
  // d(m_k, q_k, V_k, m_v, q_v, V_v) of the channel, from the same pass: per draw,
  // dg = -𝒥 (d omega + dV g) (implicit differentiation of the prox, 𝒥 of (S20)) and the explicit
  // dependence of the fields and of the Stein weights on P; pre-integrated, also the motion of
  // the jump points (§4.9). The sampled map is piecewise smooth: its jumps are not in it.
  Eigen::Matrix<double, 6, 6> dhat = Eigen::Matrix<double, 6, 6>::Zero();
};

ChannelStats replica_channel(const ReplicaSetting& set, double alpha, const double* P,
                             const SobolGaussian& pts, int replicate, bool want_at = false,
                             bool want_jacobian = false);

namespace replica {
// The two integrations for one length L (1..kMaxL); sums over the points of one replicate.
struct ChannelSums;
ChannelSums channel_sums_sampled(int L, const ReplicaSetting& set, const double* P,
                                 const SobolGaussian& pts, int rep, bool want_at, bool want_jac);
ChannelSums channel_sums_preint(int L, const ReplicaSetting& set, const double* P,
                                const SobolGaussian& pts, int rep, bool want_at, bool want_jac);
}  // namespace replica

}  // namespace slr
}  // namespace saddle
