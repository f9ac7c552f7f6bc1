// SLR ridge ERM at sample ratio alpha beyond replica symmetry: the one-step replica-symmetry-broken
// (1RSB) fixed point at zero temperature of docs/equations/slr_rsb.md.
//  - Order parameters per weight vector a in {k, v}: the overlap m_a, the self-overlap q_a (= q1,
//    the overlap inside a state), the intra-state susceptibility V_a and the gap dq_a = q1 - q0
//    between the intra- and inter-state overlaps; one Parisi parameter x (rescaled with the
//    inverse temperature, x = beta x_beta) shared by k and v.
//  - Energy (R1): ridge prior in closed form (R3) plus the nested channel (R2)
//    -(1/x) E_outer log E_inner exp(-x M), M the Moreau envelope of the L-token proximal problem
//    (S16) of docs/equations/slr_replica.md, solved by replica::solve_prox (global minimum).
//  - Quadrature: the outer level (teacher and the inter-state field, variance q0) exactly as the
//    RS channel (randomly shifted Sobol, Gaussian conditioning of the teacher, (S15a)); the inner
//    level (the intra-state field, variance dq) by antithetic pairs of a randomly shifted Sobol
//    set, one shift per outer point (RsbInnerPoints).
//  - The fixed-point map (R4) is the exact stationarity of the SAMPLED energy (pathwise
//    derivatives, which count the jumps of the proximal minimiser); x is the ninth unknown,
//    updated by the extremum condition (R5) written as a balance that stays put where dq -> 0
//    (there every x gives the RS energy).
//  - Every QMC replicate gives its own fixed point; values are mean +- s.e. over replicates.
// Interfaces used from the RS model: ReplicaSetting (task, lengths, nu, lambda, delta,
// activation, prox options, QMC), make_replica_points (the outer point set), replica_test_error
// (S7), replicon_eigenvalue (S22a) and replica::solve_prox / jacobian_blocks.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "equations/slr_replica.hpp"
#include "integrators/qmc.hpp"
#include "solver/curve.hpp"
#include "solver/model_card.hpp"
#include "solver/system.hpp"

namespace saddle {
namespace slr {

struct RsbSetting {
  ReplicaSetting rs;  // model and outer QMC (n_points, replicates, seed); rs.vhat is not used
  int n_inner = 32;   // inner points per outer point: antithetic pairs (even, >= 2)
  // Range of the Parisi parameter x (R5); x is projected into it (x_edge = -1 / +1 at its ends:
  // both limits are RS, x -> 0 at q = q1, x -> inf at V = V + x dq).
  double x_min = 1e-3;
  double x_max = 1e3;
  // Floor of dq in the projection (the inner Stein weight is xi / sqrt(dq)); dq at the floor is RS.
  double dq_floor = 1e-12;
  // Inner points of each of the two sets of the stability pass (R7) at the fixed point.
  int n_inner_stability = 64;
};

// Throws std::invalid_argument outside what is implemented (that of the RS setting, n_inner even
// in 2..4096, 0 < x_min < x_max).
void validate(const RsbSetting& set);

// Inner QMC points (R2): for replicate r and outer point i, n_inner points of N(0, I_dim): n/2
// points of a Sobol set (dim <= 40) shifted by a uniform vector drawn from (seed, r, i), mapped by
// the inverse normal cdf, and their negatives (antithetic pairs: the inner mean of xi is exactly
// 0). Deterministic in (seed, r, i); nothing is stored per outer point.
class RsbInnerPoints {
 public:
  RsbInnerPoints(int dim, int n_inner, std::uint64_t seed);
  int dim() const { return d_; }
  int points() const { return n_; }
  // Writes n_inner x dim values, point-major, into out.
  void fill(int r, int i, double* out) const;

 private:
  int d_, n_;
  std::uint64_t seed_;
  std::vector<double> base_;  // (n/2) x d Sobol uniforms
};

// The inner point set of a setting: dimension 2 L_max (the intra-state fields of chi and z).
std::shared_ptr<const RsbInnerPoints> make_rsb_inner_points(const RsbSetting& set);

// State layout: (m_k, q_k, V_k, dq_k, m_v, q_v, V_v, dq_v, log x), q = q1 the self-overlap; the
// Parisi parameter enters as log x, so that its residual is a relative change.
constexpr int kRsbDim = 9;

// Channel averages at the state P (x = exp P[8]), one replicate (R2, R4, R5).
// Derivative-type hats (the exact pathwise derivatives of the sampled channel energy C):
//   mhat_a  = -alpha dC/dm_a,   Vhat0_a = 2 alpha dC/dq0_a (dq held),
//   Vhat1_a = 2 alpha dC/ddq_a (q0 held),   qhat1_a = -2 alpha dC/dV_a = alpha E<|g_a|^2>,
// and qhat0_a = alpha E|<g_a>|^2 (used by the map (R4) through the inner Stein identity
// Vhat0 = Vhat1 + x qhat0), Vhat_hessian_a = alpha E<tr 𝒥_aa> (diagnostic). Vhat1 enters only the
// diagnostic stein_gap.
struct RsbChannel {
  double x = 0;        // the Parisi parameter used
  double mhat[2] = {0, 0}, Vhat0[2] = {0, 0}, Vhat1[2] = {0, 0}, qhat1[2] = {0, 0};
  double qhat0[2] = {0, 0}, Vhat_hessian[2] = {0, 0};
  double channel_energy = 0;  // C = -(1/x) E log E_inner exp(-x M) (per sample)
  double prior_complexity = 0;  // prior part Pc of x^2 de/dx (R5), e per D
  double kl = 0;                // alpha E[KL(tilted inner measure | Gaussian)]: x^2 de/dx = Pc - kl
  double gap = 0;               // max_a dq_a / q_a at the state
  double dG_dlogx = 0;          // d(Pc - kl)/d log x at fixed order parameters (same prox values)
  double train_mse = 0;       // E<(y - s.z)^2> with the tilted inner measure, includes Delta
  double ess = 0;             // mean over outer points of the inner effective sample share
  double max_grad = 0;        // worst |grad|_inf of the prox solutions
};
RsbChannel rsb_channel(const RsbSetting& set, double alpha, const double* P,
                       const SobolGaussian& outer, const RsbInnerPoints& inner, int replicate);

// Replicons of the 1RSB point (R7): at1 = intra-state (Hessian-form 𝒥 (S20) under the tilted
// inner measure, with V; misses the jumps), at0 = inter-state (𝒥0 = -d<g>/d omega0 by the inner
// Stein identity, jumps included, with A = V + x dq). Computed with two independent inner point
// sets of n_inner points (their own streams), at0 from their cross product (unbiased by the
// inner noise).
struct RsbStability {
  double at1 = 0, at0 = 0;
};
RsbStability rsb_stability(const RsbSetting& set, double alpha, const double* P,
                           const SobolGaussian& outer, int replicate, int n_inner);

// Prior part (R3) of the energy per sample at P (x = exp P[8]): sum_a [-(1/(2x)) log(1 + x dq/V)
// - (q0 - m^2)/(2(V + x dq)) + lambda q1/2] / alpha.
double rsb_prior_energy(double lambda, double alpha, const double* P);

// The map (R4), (R5): the state from the hats at the state's x. Writes P_out (9 values).
void rsb_prior_update(double lambda, const RsbChannel& c, double* P_out);

// The named values of the 1RSB model (T = double per replicate, Estimate per curve point), in the
// order of the unknowns then the observables.
template <class T>
struct RsbValues {
  T m_k{}, q_k{}, V_k{}, dq_k{}, m_v{}, q_v{}, V_v{}, dq_v{};  // state
  T log_x{};      // log of the Parisi parameter x (R5), the ninth unknown
  T x_parisi{};   // x = exp(log_x)
  T mhat_k{}, qhat_k{}, Vhat_k{}, mhat_v{}, qhat_v{}, Vhat_v{};  // qhat = qhat1, Vhat intra (R4)
  T Vhat_k_hessian{}, Vhat_v_hessian{};  // alpha E<tr 𝒥> (misses the jumps)
  T test_error{};   // (S7) at (m_k, q_k, m_v, q_v)
  T train_error{};  // E<(y - f)^2> incl. Delta (R6)
  T train_loss{};   // train_error/2 + lambda (q_k + q_v)/(2 alpha) (R6)
  T free_energy{};  // the 1RSB ground-state energy per sample (R1) at the fixed point
  T at_eigenvalue{};   // intra-state replicon (R7)
  T at0_eigenvalue{};  // inter-state replicon (R7)
  T jump_share{};      // max_a |Vhat_H - Vhat_S|/(lambda + |Vhat_H|), as in RS (S20a)
  T inner_ess{};       // inner effective sample share (1 = untilted)
  T stein_gap{};       // max_a |Vhat0 - Vhat1 - x qhat0|/(lambda + |Vhat0|): inner Stein identity
  T x_balance{};       // (Pc - K)/(Pc + K) of (R5): 0 at the fixed point
  T x_edge{};          // 0 inside [x_min, x_max], -1 / +1 at its ends

  template <class F> void visit_state(F&& f) {
    f("m_k", m_k); f("q_k", q_k); f("V_k", V_k); f("dq_k", dq_k);
    f("m_v", m_v); f("q_v", q_v); f("V_v", V_v); f("dq_v", dq_v); f("log_x", log_x);
  }
  template <class F> void visit_observables(F&& f) {
    f("x_parisi", x_parisi);
    f("mhat_k", mhat_k); f("qhat_k", qhat_k); f("Vhat_k", Vhat_k);
    f("mhat_v", mhat_v); f("qhat_v", qhat_v); f("Vhat_v", Vhat_v);
    f("Vhat_k_hessian", Vhat_k_hessian); f("Vhat_v_hessian", Vhat_v_hessian);
    f("test_error", test_error); f("train_error", train_error); f("train_loss", train_loss);
    f("free_energy", free_energy); f("at_eigenvalue", at_eigenvalue);
    f("at0_eigenvalue", at0_eigenvalue); f("jump_share", jump_share);
    f("inner_ess", inner_ess); f("stein_gap", stein_gap); f("x_balance", x_balance); f("x_edge", x_edge);
  }
  template <class F> void visit(F&& f) {
    visit_state(f);
    visit_observables(f);
  }
};

// The 1RSB fixed-point system of one replicate at one alpha (9 unknowns). Free energy: the 1RSB
// ground-state energy per sample (R1).
class RsbSystem : public FixedPointSystem {
 public:
  RsbSystem(RsbSetting set, double alpha, std::shared_ptr<const SobolGaussian> outer,
            std::shared_ptr<const RsbInnerPoints> inner, int replicate);
  int dim() const override { return kRsbDim; }
  std::vector<std::string> names() const override;
  Vec map(const Vec& x) const override;
  void project(Vec& x) const override;
  std::vector<std::string> observable_names() const override;
  Vec observables(const Vec& x) const override;
  double free_energy(const Vec& x) const override;
  RsbValues<double> evaluate(const Vec& x) const;
  // The sampled energy per sample (R1) at the state x (projected).
  double energy(const Vec& x) const;
  // The channel at the state (projected).
  RsbChannel channel(const Vec& x) const;

 private:
  RsbSetting set_;
  double alpha_;
  std::shared_ptr<const SobolGaussian> outer_;
  std::shared_ptr<const RsbInnerPoints> inner_;
  int r_;
};

// A 1RSB state from an RS state (m_k, q_k, V_k, m_v, q_v, V_v): the same overlaps and
// susceptibilities, with gaps dq_a = frac * (q_a - m_a^2) (frac in (0, 1)) and Parisi x.
Vec rsb_from_rs(const Vec& rs, double frac, double x);

// Starts: the RS starts of §4.7 with gaps 0.3 (q - m^2) and x = 1.
Vec rsb_informed_start(const RsbSetting& set);
Vec rsb_uninformed_start(const RsbSetting& set);

struct RsbPoint : CurveStatus, RsbValues<Estimate> {
  double alpha = 0;
  ReplicaInit init = ReplicaInit::Informed;
  int n_points = 0;  // outer points per replicate behind this point (after refinement)
  int n_inner = 0;
};

// Anderson (depth 3, mix 0.3: with depth 5, mix 0.5 Anderson was seen to end on a second, lower
// fixed point that plain damping does not reach), tol 1e-5, max_iter 300, stall window 20,
// warm_accept 1e-2 (never a convergence rule), damped retry (mix 0.5, at most 400 iterations); refinement 4x outer points
// per level on the test error (off by default).
struct RsbCurveOptions : CurveOptions {
  RsbCurveOptions();
};

std::vector<std::string> rsb_value_names();

// Continuation in alpha (sorted inside) for every start, through the curve driver (as
// replica_curve). Stability hook: the larger replicon of (R7) (stable < 1 - 2 se, unstable
// > 1 + 2 se). Output: start-major, alphas ascending.
std::vector<RsbPoint> rsb_curve(const RsbSetting& set, const std::vector<double>& alphas,
                                const std::vector<ReplicaInit>& inits, const RsbCurveOptions& opt);

// The 1RSB fixed point as a model of the generic subcommand (solver/model_card.hpp): `saddle slr
// erm-1rsb`. The parameters and settings of `slr erm` that the 1RSB channel uses
// (replica_card_params: task .. delta, alpha, activation, replicates, grid1, grid2, starts; seed,
// L_dist, points, default 1024 outer points) and inner_points (even, 2..4096); starts as for RS
// with gaps 0.3 (q - m^2) and x = 1; stability from the larger replicon (R7), column
// rs_stability; free energy (R1) prefers a start; notes points (after refinement).
class RsbModel : public CurveModel {
 public:
  static ModelCard card();
  explicit RsbModel(const ParamValues& p);
  explicit RsbModel(const RsbSetting& set);
  static std::vector<CurveStart> starts(const ParamValues& p);
  static void check(const ParamValues& p);  // throws std::invalid_argument
  static CurveOptions curve_options() { return RsbCurveOptions(); }
  static RsbSetting setting_of(const ParamValues& p);

  int replicates() const override { return set_.rs.replicates; }
  bool prepare_level(int level) override;
  std::unique_ptr<FixedPointSystem> system(double alpha, int r, int level) const override;
  int refine_on() const override;
  Stability stability(const CurvePoint& p) const override;
  double free_energy(const CurvePoint& p) const override;
  bool distinct(const CurvePoint& a, const CurvePoint& b) const override;
  std::vector<std::string> note_names() const override { return {"points"}; }
  std::vector<std::string> notes(const CurvePoint& p) const override;
  int n_points(int level) const { return settings_[level].rs.n_points; }

 private:
  RsbSetting set_;
  std::shared_ptr<const RsbInnerPoints> inner_;
  std::vector<RsbSetting> settings_;
  std::vector<std::shared_ptr<const SobolGaussian>> pts_;
};

}  // namespace slr
}  // namespace saddle
