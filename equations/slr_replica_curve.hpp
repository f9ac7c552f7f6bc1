// Curves of the SLR replica fixed point in alpha (docs/equations/slr_replica.md §4.7): every start,
// every replicate, continuation with warm starts, mean +- s.e., refinement, preferred branch and
// RS stability (replicon and jumps), through the curve driver of solver/curve.hpp.
#pragma once
#include <string>
#include <vector>

#include "equations/slr_replica.hpp"
#include "solver/curve.hpp"
#include "solver/model_card.hpp"

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

// The RS fixed point as a model of the generic subcommand (solver/model_card.hpp): `saddle slr
// erm`. Parameters task, L, nu, lambda, delta, alpha (continuation, solved ascending), activation,
// vhat, channel, replicates, line_nodes, grid1, grid2, starts; settings seed, L_dist (stands in
// for L), points (base QMC points per replicate; default 4096 sampled, 1024 pre-integrated lines)
// and symmetry (rs; 1rsb is `slr erm-1rsb`). Starts informed (backward from the largest alpha,
// the default) and uninformed (forward), warm; refinement 4x points on test_error; stability =
// rs_verdict() (column rs_stability, its reason rs_reason); the training loss as free energy;
// coexistence by the test error; notes rs_reason and points (after refinement).
class ReplicaModel : public CurveModel {
 public:
  static ModelCard card();
  explicit ReplicaModel(const ParamValues& p);
  explicit ReplicaModel(const ReplicaSetting& set);
  static std::vector<CurveStart> starts(const ParamValues& p);
  static void check(const ParamValues& p);  // throws std::invalid_argument
  static CurveOptions curve_options() { return ReplicaCurveOptions(); }
  static ReplicaSetting setting_of(const ParamValues& p);

  int replicates() const override { return set_.replicates; }
  bool prepare_level(int level) override;
  std::unique_ptr<FixedPointSystem> system(double alpha, int r, int level) const override;
  std::unique_ptr<FixedPointSystem> fallback_system(double alpha, int r, int level) const override;
  std::unique_ptr<FixedPointSystem> redraw_system(double alpha, int r, int level, int attempt) const override;
  int refine_on() const override;
  Stability stability(const CurvePoint& p) const override { return verdict(p).stability; }
  double free_energy(const CurvePoint& p) const override;
  bool distinct(const CurvePoint& a, const CurvePoint& b) const override;
  std::vector<std::string> note_names() const override { return {"rs_reason", "points"}; }
  std::vector<std::string> notes(const CurvePoint& p) const override;
  // The one RS verdict (rs_verdict): the replicon and the jump term with its error bar.
  RsVerdict verdict(const CurvePoint& p) const;
  int n_points(int level) const { return settings_[level].n_points; }

 private:
  ReplicaSetting set_;
  std::vector<ReplicaSetting> settings_;
  std::vector<std::shared_ptr<const SobolGaussian>> pts_;
  std::vector<std::shared_ptr<const SobolGaussian>> jump_pts_;  // sampled: the jump-term pass
  std::vector<ReplicaSetting> fallback_settings_;  // sampled: the pre-integrated fallback
  std::vector<std::shared_ptr<const SobolGaussian>> fallback_pts_;
};

// The card entries `slr erm` and `slr erm-1rsb` share (task .. delta, alpha, activation,
// replicates, grid1, grid2, starts; seed, L_dist, points) and the reading of their values into
// a setting (vhat, channel, line nodes and points left at the setting's defaults).
std::vector<ModelParam> replica_card_params();
std::vector<ModelSetting> replica_card_settings(const std::string& points_help);
ReplicaSetting replica_common_setting(const ParamValues& p);
// --points when given (an integer in [16, 4194304]; std::invalid_argument else), or `fallback`.
int replica_points_of(const ParamValues& p, int fallback);

}  // namespace slr
}  // namespace saddle
