// Replicon eigenvalue and the RS stability verdict (docs/equations/slr_replica.md (S22a), (S20b)).
#include "equations/slr_replica_stability.hpp"

#include <algorithm>
#include <cmath>

namespace saddle {
namespace slr {

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

Stability rs_stability(double at, double se) {
  if (at + 2.0 * se < 1.0) return Stability::Stable;
  if (at - 2.0 * se > 1.0) return Stability::Unstable;
  return Stability::Marginal;
}

std::string to_string(RsReason r) {
  switch (r) {
    case RsReason::Replicon: return "replicon";
    case RsReason::Jumps: return "jumps";
    default: return "";
  }
}

RsVerdict rs_verdict(double at, double at_se, double jump, double jump_se) {
  RsVerdict v;
  v.stability = rs_stability(at, at_se);
  if (v.stability == Stability::Unstable) {
    v.reason = RsReason::Replicon;
  } else if (jump - 2.0 * jump_se > kJumpFloor) {
    v.stability = Stability::Unstable;
    v.reason = RsReason::Jumps;
  } else if (v.stability == Stability::Marginal) {
    v.reason = RsReason::Replicon;
  }
  return v;
}

}  // namespace slr
}  // namespace saddle
