// Curves of the SLR replica fixed point in alpha (docs/equations/slr_replica.md §4.7): every start,
// every replicate, continuation with warm starts, mean +- s.e., refinement, preferred branch and
// RS stability (replicon and jumps), through the curve driver of solver/curve.hpp.
#pragma once
#include <string>
#include <vector>

#include "equations/slr_replica.hpp"
#include "solver/curve.hpp"

namespace saddle {
namespace slr {

// A curve point for one start, every value as mean +- s.e. over the R replicates, with the
// driver's bookkeeping (CurveStatus: converged = every replicate met the tolerance, or the noise
// rule of solver/curve.hpp; a stall never counts; n_stalled, amplitude; preferred = lowest train_loss among the converged starts;
// coexist = another start converged to a test error more than 4 s.e. + 1e-3 away; stability
// from the replicon eigenvalue and the jumps, rs_verdict(), with its reason).
struct ReplicaPoint : CurveStatus, ReplicaValues<Estimate> {
  double alpha = 0;
  ReplicaInit init = ReplicaInit::Informed;
  int n_points = 0;  // QMC points per replicate behind this point (after refinement)
  RsReason rs_reason = RsReason::None;
};

// Newton steps on the 6 unknowns with the map's Jacobian from the same channel pass
// (Method::Newton, at most 8 passes), then the Anderson-accelerated (depth 5) iteration with mix
// 0.5 as the fallback; tol 1e-5, max_iter 300, stall_window 20, no Newton polish. The sampled
// map is piecewise constant in the jumps, where Anderson can end in its small limit cycle; the
// pre-integrated map is continuous (measured on the softmax L = 2 curve: Newton in 4-8 passes at
// most points, fallbacks at a few, as with the sampled map).
// A stalled replicate is never converged (below warm_accept = 1e-2 it still carries the
// continuation); failed replicates are retried (damped, mix 0.2, at most 1500 iterations). Refinement (target_se > 0) raises the QMC
// points 4x per level; points whose RS fixed point is unstable are refined only with
// refine_unstable: there the RS value is not the ERM answer.
struct ReplicaCurveOptions : CurveOptions {
  ReplicaCurveOptions();
};

// The starts of `inits` (§4.7), for the RS and the 1RSB curves: informed from x0 `informed`,
// walking backward from the largest alpha; uninformed from `uninformed`, forward from the smallest.
std::vector<CurveStart> replica_starts(const std::vector<ReplicaInit>& inits, const Vec& informed,
                                       const Vec& uninformed);

// Continuation in alpha (sorted ascending inside) for every start in `inits`: informed runs
// backward from the largest alpha, uninformed forward from the smallest, each with warm starts;
// through the curve driver (solver/curve.hpp). The result does not depend on the number of
// threads. Output: start-major, alphas ascending.
std::vector<ReplicaPoint> replica_curve(const ReplicaSetting& set, const std::vector<double>& alphas,
                                        const std::vector<ReplicaInit>& inits,
                                        const ReplicaCurveOptions& opt);

}  // namespace slr
}  // namespace saddle
