// SLR ridge ERM at sample ratio alpha: the replica-symmetric fixed point of
// docs/equations/slr_replica.md §4 (the map and its system; this header also brings in the
// setting, the channel, the stability verdict and the curves, so one include gives the model).
//  - Prior part (S14) in closed form; channel part (S15)-(S21) through the proximal problem of
//    equations/slr_replica_prox.hpp (equations/slr_replica_channel.hpp: pre-integrated along a
//    line of the key noise, §4.9, or sampled, §7b); test error (S7) by population_risk();
//    training MSE (§4.6).
//  - V-hats by the Stein form (S20') (default) or the Hessian form (S20) (diagnostic); both are
//    computed at every point, and the jump terms (S20b) that separate them.
//  - Every replicate r = 1..R of the QMC point set gives its own fixed point (common random
//    numbers within a replicate); the reported values are the mean and standard error over the R
//    fixed points (§7b.3).
// Sampling (§1.5 symmetry reduction, plus exact Gaussian conditioning (S15a)): see
// equations/slr_replica_draw.hpp.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "equations/slr_model.hpp"
#include "equations/slr_replica_channel.hpp"
#include "equations/slr_replica_prox.hpp"
#include "equations/slr_replica_setting.hpp"
#include "equations/slr_replica_stability.hpp"
#include "integrators/qmc.hpp"
#include "solver/system.hpp"

namespace saddle {
namespace slr {

// Prior part (S14): order parameters from the hats.
void replica_prior(double lambda, const ChannelStats& c, double* P);

// The values of the replica model, with names: the state (the unknowns of the fixed point) and
// the observables reported beside it. T = double for one replicate, T = Estimate for a curve
// point aggregated over replicates. visit() lists every field once, in the order of the
// unknowns then the observables: the one place that order is written.
template <class T>
struct ReplicaValues {
  T m_k{}, q_k{}, V_k{}, m_v{}, q_v{}, V_v{};  // state
  T mhat_k{}, qhat_k{}, Vhat_k{}, mhat_v{}, qhat_v{}, Vhat_v{};  // hats driving the iteration
  T Vhat_k_stein{}, Vhat_v_stein{};      // (S20')
  T Vhat_k_hessian{}, Vhat_v_hessian{};  // (S20)
  T test_error{};   // (S7)
  T train_error{};  // E(y - f)^2 incl. Delta (§4.6)
  T train_loss{};   // training objective per sample R/N at the RS minimiser (zero temperature)
  T at_eigenvalue{};  // replicon (de Almeida-Thouless) eigenvalue; RS unstable above 1
  // Jump terms (S20b): Vhat_a_jump = alpha E[delta(D) |Delta g^a|^2], what the jumps of the
  // proximal minimiser add to the Stein form (pre-integrated channel; sampled: Vhat_H - Vhat_S).
  T Vhat_k_jump{}, Vhat_v_jump{};
  // max over k, v of Vhat_a_jump/(lambda + |Vhat_a_H|): the relative change of V due to the jumps
  T jump_share{};

  template <class F> void visit_state(F&& f) {
    f("m_k", m_k); f("q_k", q_k); f("V_k", V_k); f("m_v", m_v); f("q_v", q_v); f("V_v", V_v);
  }
  template <class F> void visit_observables(F&& f) {
    f("mhat_k", mhat_k); f("qhat_k", qhat_k); f("Vhat_k", Vhat_k);
    f("mhat_v", mhat_v); f("qhat_v", qhat_v); f("Vhat_v", Vhat_v);
    f("Vhat_k_stein", Vhat_k_stein); f("Vhat_v_stein", Vhat_v_stein);
    f("Vhat_k_hessian", Vhat_k_hessian); f("Vhat_v_hessian", Vhat_v_hessian);
    f("test_error", test_error); f("train_error", train_error); f("train_loss", train_loss);
    f("at_eigenvalue", at_eigenvalue); f("Vhat_k_jump", Vhat_k_jump);
    f("Vhat_v_jump", Vhat_v_jump); f("jump_share", jump_share);
  }
  template <class F> void visit(F&& f) {
    visit_state(f);
    visit_observables(f);
  }
};

// The fixed-point system of one replicate at one alpha. Unknowns (m_k, q_k, V_k, m_v, q_v, V_v);
// observables: the non-state fields of ReplicaValues, in its order.
// Free energy: the training objective per sample R/N = train_mse/2 + lambda (q_k + q_v)/(2 alpha)
// at the RS minimiser (zero temperature), used to prefer a branch.
class ReplicaSystem : public FixedPointSystem {
 public:
  // jump_pts (sampled channel only): the point set of a pre-integrated pass (make_jump_points)
  // that measures the jump terms (S20b) at a solution (evaluate()); without it they are the
  // difference of the two V-hat forms.
  ReplicaSystem(ReplicaSetting set, double alpha, std::shared_ptr<const SobolGaussian> pts,
                int replicate, std::shared_ptr<const SobolGaussian> jump_pts = nullptr);
  int dim() const override { return 6; }
  std::vector<std::string> names() const override;
  Vec map(const Vec& x) const override;
  // F and dF/dx from one channel pass (Stein form; false for the Hessian form).
  bool map_jacobian(const Vec& x, Vec& fx, Eigen::MatrixXd& J) const override;
  void project(Vec& x) const override;
  std::vector<std::string> observable_names() const override;
  Vec observables(const Vec& x) const override;
  double free_energy(const Vec& x) const override;
  // Every value at the state x (projected first), named.
  ReplicaValues<double> evaluate(const Vec& x) const;

 private:
  ReplicaSetting set_;
  double alpha_;
  std::shared_ptr<const SobolGaussian> pts_;
  int r_;
  std::shared_ptr<const SobolGaussian> jump_pts_;
};

// Initial states (§4.7).
Vec replica_informed_start(const ReplicaSetting& set);
Vec replica_uninformed_start(const ReplicaSetting& set);

enum class ReplicaInit { Informed, Uninformed };
std::string to_string(ReplicaInit i);

// Names of the values of a replica point (state names then observable names).
std::vector<std::string> replica_value_names();

// Test error (S7) of a state P via population_risk().
double replica_test_error(const ReplicaSetting& set, const double* P);

}  // namespace slr
}  // namespace saddle

