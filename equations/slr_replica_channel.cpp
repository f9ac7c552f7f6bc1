// The replica channel: from the sums of one integration (sampled or pre-integrated) to the hats
// (S19)-(S21), and the average over the lengths of a variable-length setting (S19a)
// (docs/equations/slr_replica.md §4.5, §4.9).
#include "equations/slr_replica_channel.hpp"

#include <cmath>
#include <stdexcept>

#include "equations/slr_replica_draw.hpp"
#include "equations/slr_replica_stability.hpp"

namespace saddle {
namespace slr {

namespace {

bool replica_k_inactive_for(const ReplicaSetting& set, int L) {
  return set.activation == Activation::Softmax && L == 1;
}

ChannelStats finish(const ReplicaSetting& set, int L, double alpha, const double* P,
                    const replica::ChannelSums& S, int n, bool want_at, bool want_jac) {
  const double m_k = P[0], m_v = P[3];
  const double a_n = alpha / n;
  ChannelStats c;
  c.qhat_k = a_n * S.S_gk2;  // (S19)
  c.qhat_v = a_n * S.S_gz2;
  c.Vhat_k_hessian = a_n * S.S_Jk;  // (S20)
  c.Vhat_v_hessian = a_n * S.S_Jz;
  c.Vhat_k_jump = a_n * S.S_jk;  // (S20b)
  c.Vhat_v_jump = a_n * S.S_jv;
  c.jump_lines = S.S_jumps / n;
  c.unresolved = S.S_unres / n;
  const double Ek = a_n * S.S_mk, Ez = a_n * S.S_mz;
  if (set.channel == ChannelKind::Sampled) {
    c.Vhat_k_stein = -a_n * S.S_vk;  // (S20'), with E[xi | fields] in place of xi
    c.Vhat_v_stein = -a_n * S.S_vz;
    c.Vhat_k_stein_direct = c.Vhat_k_stein;
    c.Vhat_v_stein_direct = c.Vhat_v_stein;
    // (S21): mhat = alpha E[sum g h*] + Vhat m, with E[sum g h*] = <g.tm> + m <g.tv>.
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
  } else {
    // Pre-integrated: the Stein form with its Gaussian integration by parts done exactly
    // (S20''): Vhat = Vhat_hessian - Vhat_jump; the weighted estimate (S20') is kept as a check.
    c.Vhat_k_stein_direct = -a_n * S.S_vk;
    c.Vhat_v_stein_direct = -a_n * S.S_vz;
    // Key side: along the line direction e the Stein weight x is integrated by the line rule
    // itself (no 𝒥, no jump term needed there); the other directions by parts.
    const double ck = set.task == Task::Spiked ? std::sqrt(std::max(P[1], 0.0))
                                               : std::sqrt(std::max(P[1] - m_k * m_k, 0.0));
    if (ck > 0 && !replica_k_inactive_for(set, L))
      c.Vhat_k_stein = -a_n * S.S_gex / ck + a_n * S.S_Jperp - (c.Vhat_k_jump - a_n * S.S_jke);
    else
      c.Vhat_k_stein = c.Vhat_k_hessian - c.Vhat_k_jump;
    c.Vhat_v_stein = c.Vhat_v_hessian - c.Vhat_v_jump;
    const bool stein = set.vhat == VhatForm::Stein;
    c.Vhat_k = stein ? c.Vhat_k_stein : c.Vhat_k_hessian;
    c.Vhat_v = stein ? c.Vhat_v_stein : c.Vhat_v_hessian;
    // (S21''): every Stein weight xi/s inside the m-hat weights integrated by parts as well:
    // spiked k: tm_k = sqrt(nu) e_1 has none; max k: tm_k = chi* - m_k xi/s_k; z side:
    // tm_z,1 = y/(1+Delta) - (m_v/(1+Delta)) xi'_1/s_v (as conditional means), tm_z,l = 0.
    const double D1 = 1.0 + set.delta;
    const double Vz1 = a_n * S.S_Jz1 - (stein ? a_n * S.S_jz1 : 0.0);  // token-1 part of Vhat_v
    c.mhat_k = set.task == Task::Spiked ? Ek : a_n * S.S_gchis + m_k * c.Vhat_k;
    c.mhat_v = a_n * S.S_gy / D1 + (m_v / D1) * Vz1;
  }
  c.train_mse = S.S_tr / n;
  c.not_pd = S.S_npd / n;
  c.max_grad = S.gmax;
  if (want_at) {
    Eigen::Matrix4d gram = S.gram / n;
    for (int a = 0; a < 4; ++a)
      for (int b = 0; b < a; ++b) gram(a, b) = gram(b, a);
    c.at_gram = gram;
  }
  if (want_jac) {
    // Stein form: mhat = a_n S_m, qhat = a_n S_g2, Vhat = -a_n S_v.
    const double sign[6] = {1.0, 1.0, -1.0, 1.0, 1.0, -1.0};
    for (int row = 0; row < 6; ++row) c.dhat.row(row) = sign[row] * a_n * S.dS.row(row);
  }
  return c;
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
    if (L < 1 || L > replica::kMaxL)
      throw std::invalid_argument("L out of range for the replica channel");
    const replica::ChannelSums S =
        set.channel == ChannelKind::Sampled
            ? replica::channel_sums_sampled(L, set, P, pts, replicate, want_at, want_jacobian)
            : replica::channel_sums_preint(L, set, P, pts, replicate, want_at, want_jacobian);
    const ChannelStats s = finish(set, L, alpha, P, S, pts.points(), want_at, want_jacobian);
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
    c.Vhat_k_stein_direct += w * s.Vhat_k_stein_direct;
    c.Vhat_v_stein_direct += w * s.Vhat_v_stein_direct;
    c.Vhat_k_jump += w * s.Vhat_k_jump;
    c.Vhat_v_jump += w * s.Vhat_v_jump;
    c.jump_lines += w * s.jump_lines;
    c.unresolved += w * s.unresolved;
    c.train_mse += w * s.train_mse;
    c.not_pd += w * s.not_pd;
    c.max_grad = std::max(c.max_grad, s.max_grad);
    c.at_gram += w * s.at_gram;
    if (want_jacobian) c.dhat += w * s.dhat;
  }
  if (want_at) c.at_eigenvalue = replicon_eigenvalue(c.at_gram, alpha, P[2], P[5]);
  return c;
}

}  // namespace slr
}  // namespace saddle
