// Local stability of the SLR replica-symmetric fixed point (docs/equations/slr_replica.md (S22a),
// (S20b)): the replicon (de Almeida-Thouless) eigenvalue of the Hessian-form Jacobian, and the
// jumps of the proximal minimiser, which make the zero-temperature replicon infinite.
#pragma once
#include <Eigen/Dense>
#include <string>

#include "solver/curve.hpp"

namespace saddle {
namespace slr {

// The replicon eigenvalue from the Frobenius Gram matrix gram(i, j) = E[<B_i, B_j>] of the blocks
// B = (𝒥_kk, 𝒥_kv, 𝒥_vk, 𝒥_vv) of 𝒥 (S20): the spectral radius, on symmetric 2 x 2 dQ, of
// dQ_ab -> V_a V_b alpha sum_cd E[<𝒥_ac, 𝒥_bd>] dQ_cd.
double replicon_eigenvalue(const Eigen::Matrix4d& gram, double alpha, double V_k, double V_v);

// Local stability from the replicon eigenvalue and its standard error alone: stable when
// at + 2 se < 1, unstable when at - 2 se > 1, marginal otherwise. The estimate is heavy-tailed
// (draws where V^-1 + H is nearly singular), so its s.e. is itself rough.
using RsStability = Stability;
Stability rs_stability(double at_eigenvalue, double at_se);

// Why a point is not RS-stable: the replicon eigenvalue (above 1, or not clearly below), or the
// jumps of the proximal minimiser (jump_share significantly above kJumpFloor).
enum class RsReason { None, Replicon, Jumps };
std::string to_string(RsReason r);  // "", "replicon", "jumps"

// The jump rule: a point whose jump_share - 2 s.e. exceeds this is RS-unstable (reason jumps).
// A jump of the global minimiser makes the zero-temperature replicon infinite; below the floor
// the jumps move V by less than 3% (docs/equations/slr_replica.md §4.9). The same floor as the
// Fig. 3 rule of `saddle figures` (tools/figures/figures_panels.cpp). The pre-integrated jump share is
// far less noisy (s.e. ~1e-4) than the sampled one this floor was chosen for; it reads 0.004 to
// 0.015 on the softmax L = 2 curve (alpha 2..8), so a floor of 0.01 would flag alpha >= 6.5 there.
constexpr double kJumpFloor = 0.03;

struct RsVerdict {
  Stability stability = Stability::Unknown;
  RsReason reason = RsReason::None;
};
// The replicon rule, with the jumps folded in: unstable (jumps) when jump_share - 2 se >
// kJumpFloor and the replicon alone does not already say unstable; otherwise the replicon's
// verdict, with reason replicon when it is not stable.
RsVerdict rs_verdict(double at_eigenvalue, double at_se, double jump_share, double jump_share_se);

}  // namespace slr
}  // namespace saddle
