// SLR ridge ERM at sample ratio alpha: the replica-symmetric fixed point of docs/equations/slr_replica.md §4, with
// the channel expectations by randomly shifted quasi-Monte Carlo (§7b).
//  - Prior part (S14) in closed form; channel part (S15)-(S21) through the proximal problem of
//    equations/slr_replica_prox.hpp; test error (S7) by population_risk(); training MSE (§4.6).
//  - V-hats by the Stein form (S20') (default) or the Hessian form (S20) (diagnostic); both are
//    computed at every point.
//  - Every replicate r = 1..R of the QMC point set gives its own fixed point (common random
//    numbers within a replicate); the reported values are the mean and standard error over the R
//    fixed points (§7b.3).
// Sampling (§1.5 symmetry reduction, plus exact Gaussian conditioning that removes the teacher
// coordinates that the channel sees only through Gaussian combinations; see docs/slr_replica.md):
//  - spiked: eps* = 1; w^chi_l ~ N(m_k sqrt(nu) delta_l1, q_k) independent; the Stein and m-hat
//    weights become E[xi_l | w^chi] and E[chi*_l - m_k xi_l/s_k | w^chi] = sqrt(nu) delta_l1.
//  - max, finite nu: chi* ~ N(0, I), eps* = 1 with weight L softmax(nu chi*)_1; max nu = inf:
//    the argmax of chi* is moved to position 1.
//  - z side (both tasks): (y, w^z_1) bivariate Gaussian, w^z_l ~ N(0, q_v) for l >= 2, and the
//    conditional means of z*_l and xi'_l given (y, w^z) replace z*_l, xi'_l.
// Dimension of the QMC points: 2L+1 (spiked), 3L+1 (max).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "equations/slr_model.hpp"
#include "equations/slr_replica_prox.hpp"
#include "integrators/qmc.hpp"
#include "solver/curve.hpp"
#include "solver/system.hpp"

namespace saddle {
namespace slr {

enum class VhatForm { Stein, Hessian };
std::string to_string(VhatForm f);
VhatForm parse_vhat_form(const std::string& s);  // "stein" | "hessian"; throws invalid_argument

struct ReplicaSetting {
  Task task = Task::Spiked;
  int L = 2;
  // Variable length (docs/equations/slr_population.md §1.4, docs/equations/slr_replica.md §4.6):
  // when non-empty, each sample's L is drawn uniformly from this set and every channel expectation is averaged over it (one shared k, v); L is ignored.
  std::vector<int> lengths;
  double nu = 2.0;          // signal; +inf allowed for max
  double lambda = 0.1;      // ridge, lambda_k = lambda_v (S13)
  double delta = 0.0;       // noise variance Delta (S4)
  Activation activation = Activation::Softmax;  // softmax or linear
  VhatForm vhat = VhatForm::Stein;
  replica::ProxOptions prox;
  // QMC (§7b): n points per replicate, R replicates, seed of the random shifts.
  int n_points = 4096;
  int replicates = 8;
  std::uint64_t seed = 1;
};

// Throws std::invalid_argument when the setting is outside what is implemented (L range,
// activation, negative lambda/delta/nu, n_points, replicates).
void validate(const ReplicaSetting& set);

// The lengths of a setting: {L}, or the variable-length set.
std::vector<int> replica_lengths(const ReplicaSetting& set);

// True when the k channel is empty: softmax with every length 1 (sigma == 1, §4.8).
bool replica_k_inactive(const ReplicaSetting& set);

// QMC point dimension for a setting (2L+1 spiked, 3L+1 max; the largest L of a variable-length
// set: shorter lengths use the leading coordinates of the same points).
int replica_qmc_dim(const ReplicaSetting& set);

// The QMC point set of a setting (all replicates).
std::shared_ptr<const SobolGaussian> make_replica_points(const ReplicaSetting& set);

// Channel averages at the state P = (m_k, q_k, V_k, m_v, q_v, V_v), for one replicate.
struct ChannelStats {
  double mhat_k = 0, qhat_k = 0, Vhat_k = 0;     // Vhat by the form chosen in the setting
  double mhat_v = 0, qhat_v = 0, Vhat_v = 0;
  double Vhat_k_stein = 0, Vhat_v_stein = 0;     // (S20')
  double Vhat_k_hessian = 0, Vhat_v_hessian = 0; // (S20)
  double train_mse = 0;                          // E[(y - s.z)^2] (§4.6), includes Delta
  double not_pd = 0;     // fraction of draws where V^-1 + H was not positive definite
  double max_grad = 0;   // worst |grad|_inf of the prox solutions
  // Replicon (de Almeida-Thouless) eigenvalue from the Hessian-form 𝒥, computed only when asked
  // (want_at): RS is locally unstable when it exceeds 1. Where the proximal minimiser jumps the
  // jumps add to the true replicon, so a value > 1 is conclusive and a value < 1 is not.
  double at_eigenvalue = 0;
  Eigen::Matrix4d at_gram = Eigen::Matrix4d::Zero();  // E[<B_i, B_j>] behind at_eigenvalue
  // With want_jacobian (Stein form only): d(mhat_k, qhat_k, Vhat_k, mhat_v, qhat_v, Vhat_v) /
  // d(m_k, q_k, V_k, m_v, q_v, V_v) of the sampled channel, from the same pass: per draw,
  // dg = -𝒥 (d omega + dV g) (implicit differentiation of the prox, 𝒥 of (S20)) and the explicit
  // dependence of the fields and of the Stein weights on P. Jumps of the proximal minimiser
  // between local minima are not in it (the sampled map is piecewise smooth).
  Eigen::Matrix<double, 6, 6> dhat = Eigen::Matrix<double, 6, 6>::Zero();
};
ChannelStats replica_channel(const ReplicaSetting& set, double alpha, const double* P,
                             const SobolGaussian& pts, int replicate, bool want_at = false,
                             bool want_jacobian = false);

// The replicon eigenvalue from the Frobenius Gram matrix gram(i, j) = E[<B_i, B_j>] of the blocks
// B = (𝒥_kk, 𝒥_kv, 𝒥_vk, 𝒥_vv) of 𝒥 (S20): the spectral radius, on symmetric 2 x 2 dQ, of
// dQ_ab -> V_a V_b alpha sum_cd E[<𝒥_ac, 𝒥_bd>] dQ_cd.
double replicon_eigenvalue(const Eigen::Matrix4d& gram, double alpha, double V_k, double V_v);

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
  // max over k, v of |Vhat_H - Vhat_S|/(lambda + |Vhat_H|): the relative change of V due to
  // jumps of the proximal minimiser between local minima
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
    f("at_eigenvalue", at_eigenvalue); f("jump_share", jump_share);
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
  ReplicaSystem(ReplicaSetting set, double alpha, std::shared_ptr<const SobolGaussian> pts,
                int replicate);
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
};

// Initial states (§4.7).
Vec replica_informed_start(const ReplicaSetting& set);
Vec replica_uninformed_start(const ReplicaSetting& set);

enum class ReplicaInit { Informed, Uninformed };
std::string to_string(ReplicaInit i);

// Local stability of the RS fixed point from the replicon eigenvalue and its standard error:
// stable when at + 2 se < 1, unstable when at - 2 se > 1, marginal otherwise. The estimate is
// heavy-tailed (draws where V^-1 + H is nearly singular), so its s.e. is itself rough.
using RsStability = Stability;
Stability rs_stability(double at_eigenvalue, double at_se);

// A curve point for one start, every value as mean +- s.e. over the R replicates, with the
// driver's bookkeeping (CurveStatus: converged = every replicate converged, or stalled with
// residual <= stall_accept; n_stalled; preferred = lowest train_loss among the converged starts;
// coexist = another start converged to a test error more than 4 s.e. + 1e-3 away; stability
// from the replicon eigenvalue).
struct ReplicaPoint : CurveStatus, ReplicaValues<Estimate> {
  double alpha = 0;
  ReplicaInit init = ReplicaInit::Informed;
  int n_points = 0;  // QMC points per replicate behind this point (after refinement)
};

// Newton steps on the 6 unknowns with the map's Jacobian from the same channel pass
// (Method::Newton, at most 8 passes), then the Anderson-accelerated (depth 5) iteration with mix
// 0.5 as the fallback; tol 1e-5, max_iter 300, stall_window 20, no Newton polish. Where the map
// is smooth Newton converges in 3-5 passes against 10-20 Anderson iterations; where the proximal
// minimiser jumps (a discontinuous sampled map) Anderson ends in its small limit cycle as before.
// Anderson reaches the same fixed points as the spec's damped iteration (§4.7; differences
// ~1e-5, measured); Method::Anderson and Method::Damped are available.
// A stalled replicate counts as converged below stall_accept = 1e-2; failed replicates are
// retried (damped, mix 0.2, at most 1500 iterations). Refinement (target_se > 0) raises the QMC
// points 4x per level; points whose RS fixed point is locally unstable are refined only with
// refine_unstable: there the RS value is not the ERM answer, and its s.e. is large because the
// fixed point is ill-conditioned.
struct ReplicaCurveOptions : CurveOptions {
  ReplicaCurveOptions();
};

// Names of the values of a replica point (state names then observable names).
std::vector<std::string> replica_value_names();

// Continuation in alpha (sorted ascending inside) for every start in `inits`: informed runs
// backward from the largest alpha, uninformed forward from the smallest, each with warm starts;
// through the curve driver (solver/curve.hpp). The result does not depend on the number of
// threads. Output: start-major, alphas ascending.
std::vector<ReplicaPoint> replica_curve(const ReplicaSetting& set, const std::vector<double>& alphas,
                                        const std::vector<ReplicaInit>& inits,
                                        const ReplicaCurveOptions& opt);

// Test error (S7) of a state P via population_risk().
double replica_test_error(const ReplicaSetting& set, const double* P);

}  // namespace slr
}  // namespace saddle
