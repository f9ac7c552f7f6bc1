// The replica channel: from the sums of one integration (sampled or pre-integrated) to the hats
// (S19)-(S21), and the average over the lengths of a variable-length setting (S19a)
// (docs/equations/slr_replica.md §4.5, §4.9).
#include "equations/slr_replica_channel.hpp"

#include <cmath>
#include <stdexcept>

#include "equations/slr_replica_draw.hpp"
#include "equations/slr_replica_stability.hpp"
#include "integrators/dual.hpp"

namespace saddle {
namespace slr {

namespace {

bool replica_k_inactive_for(const ReplicaSetting& set, int L) {
  return set.activation == Activation::Softmax && L == 1;
}

ChannelStats finish(const ReplicaSetting& set, int L, double alpha, const double* P,
                    const replica::ChannelSums& S, int n, bool want_at, bool want_jac) {
  using namespace replica;
  using D = Dual<6>;
  // Every sum with its derivative in P, and the order parameters as variables: the hats come out
  // with their derivative dhat/dP (the map's Jacobian before the prior).
  auto sum = [&](int r) { return D(S.v(r), S.d.row(r)); };
  const D m_k = D::variable(P[0], 0), q_k = D::variable(P[1], 1), m_v = D::variable(P[3], 3);
  const double a_n = alpha / n;
  ChannelStats c;
  const D qhat_k = a_n * sum(kGk2);  // (S19)
  const D qhat_v = a_n * sum(kGz2);
  c.Vhat_k_hessian = a_n * S.v(kJk);  // (S20)
  c.Vhat_v_hessian = a_n * S.v(kJz);
  c.Vhat_k_jump = a_n * S.v(kJumpK);  // (S20b)
  c.Vhat_v_jump = a_n * S.v(kJumpV);
  c.jump_lines = S.S_jumps / n;
  c.unresolved = S.S_unres / n;
  const D Ek = a_n * sum(kMk), Ez = a_n * sum(kMz);
  D mhat_k, Vhat_k, mhat_v, Vhat_v;
  const bool stein = set.vhat == VhatForm::Stein;
  if (set.channel == ChannelKind::Sampled) {
    const D Vk_s = -a_n * sum(kVk), Vv_s = -a_n * sum(kVz);  // (S20'), E[xi | fields] for xi
    c.Vhat_k_stein = c.Vhat_k_stein_direct = Vk_s.v;
    c.Vhat_v_stein = c.Vhat_v_stein_direct = Vv_s.v;
    // (S21): mhat = alpha E[sum g h*] + Vhat m, with E[sum g h*] = <g.tm> + m <g.tv>.
    if (stein) {
      Vhat_k = Vk_s;
      Vhat_v = Vv_s;
      mhat_k = Ek;
      mhat_v = Ez;
    } else {
      Vhat_k = a_n * sum(kJk);
      Vhat_v = a_n * sum(kJz);
      mhat_k = Ek + m_k * (Vhat_k - Vk_s);
      mhat_v = Ez + m_v * (Vhat_v - Vv_s);
    }
  } else {
    // Pre-integrated: the Stein form with its Gaussian integration by parts done exactly
    // (S20''): Vhat = Vhat_hessian - Vhat_jump; the weighted estimate (S20') is kept as a check.
    c.Vhat_k_stein_direct = -a_n * S.v(kVk);
    c.Vhat_v_stein_direct = -a_n * S.v(kVz);
    // Key side: along the line direction e the Stein weight x is integrated by the line rule
    // itself (no J, no jump term needed there); the other directions by parts.
    const D ck = set.task == Task::Spiked ? sqrt(q_k) : sqrt(q_k - m_k * m_k);
    const D Vk_H = a_n * sum(kJk), Vv_H = a_n * sum(kJz);
    const D Vk_S = ck.v > 0 && !replica_k_inactive_for(set, L)
                       ? -a_n * sum(kGex) / ck + a_n * sum(kJperp) - a_n * (sum(kJumpK) - sum(kJumpKe))
                       : Vk_H - a_n * sum(kJumpK);
    const D Vv_S = Vv_H - a_n * sum(kJumpV);
    c.Vhat_k_stein = Vk_S.v;
    c.Vhat_v_stein = Vv_S.v;
    Vhat_k = stein ? Vk_S : Vk_H;
    Vhat_v = stein ? Vv_S : Vv_H;
    // (S21''): every Stein weight xi/s inside the m-hat weights integrated by parts as well:
    // spiked k: tm_k = sqrt(nu) e_1 has none; max k: tm_k = chi* - m_k xi/s_k; z side:
    // tm_z,1 = y/(1+Delta) - (m_v/(1+Delta)) xi'_1/s_v (as conditional means), tm_z,l = 0.
    const double D1 = 1.0 + set.delta;
    const D Vz1 = a_n * sum(kJz1) - (stein ? a_n * sum(kJumpZ1) : D(0.0));  // token-1 part of Vhat_v
    mhat_k = set.task == Task::Spiked ? Ek : a_n * sum(kGchis) + m_k * Vhat_k;
    mhat_v = a_n * sum(kGy) / D1 + (m_v / D1) * Vz1;
  }
  c.mhat_k = mhat_k.v;
  c.qhat_k = qhat_k.v;
  c.Vhat_k = Vhat_k.v;
  c.mhat_v = mhat_v.v;
  c.qhat_v = qhat_v.v;
  c.Vhat_v = Vhat_v.v;
  c.train_mse = S.S_tr / n;
  c.not_pd = S.S_npd / n;
  c.max_grad = S.gmax;
  if (want_at) {
    Eigen::Matrix4d gram = S.gram / n;
    for (int a = 0; a < 4; ++a)
      for (int b = 0; b < a; ++b) gram(a, b) = gram(b, a);
    c.at_gram = gram;
  }
  if (want_jac && set.channel == ChannelKind::Preintegrated && !set.line.exact_jacobian && stein) {
    // the weighted forms' derivatives in place of the parts forms' (LineOptions::exact_jacobian)
    mhat_k = Ek;
    Vhat_k = -a_n * sum(kVk);
    Vhat_v = -a_n * sum(kVz);
    mhat_v = Ez;
  }
  if (want_jac) {
    const D* h[6] = {&mhat_k, &qhat_k, &Vhat_k, &mhat_v, &qhat_v, &Vhat_v};
    for (int row = 0; row < 6; ++row) c.dhat.row(row) = h[row]->d;
    if (replica_k_inactive_for(set, L)) c.dhat.topRows<3>().setZero();
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
