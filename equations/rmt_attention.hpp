// Deterministic equivalent (DE) of the nonlinear-attention interpolation error, docs/equations/rmt.md §6:
//   bulk fixed point (R1)-(R2) for (delta, delta_tilde) by the solver module (solver/fixed_point.hpp):
//   Newton in the chart (log(1+delta), log delta_tilde) with the exact Jacobian of §6.4, then the
//   damped iteration as the fallback; spike step (R3)-(R4) for q(gamma); E_A = -gamma^2 dq/dgamma (R5) with the
//   exact total derivative (R6) propagated through (R3)-(R4) by a complex step (§6.4 item 3).
// The model never prints; it reports converged/iterations/residual honestly.
#pragma once
#include <Eigen/Dense>

#include <complex>

#include <string>
#include <vector>

#include "equations/rmt_hermite.hpp"
#include "equations/rmt_mp.hpp"
#include "solver/fixed_point.hpp"
#include "solver/system.hpp"

namespace saddle {
namespace rmt {

// Coordinates of mu, w_K, w_Q on an orthonormal basis of (a space containing) their span
// (docs/equations/rmt.md §6.3 step 1; padding to k = 3 leaves q unchanged). For the CLI: mu = sqrt(snr) e1.
struct Geometry {
  Eigen::Vector3d mu = Eigen::Vector3d::Zero();
  Eigen::Vector3d wk = Eigen::Vector3d::Zero();
  Eigen::Vector3d wq = Eigen::Vector3d::Zero();
};

struct AttentionParams {
  double c = 0.5;        // p / n
  double gamma = 1e-2;   // ridge, > 0
  double a1 = 0.0;       // Hermite data of the centred f (§3)
  double sigma2 = 0.0;   // nu - a1^2
  double kappa_d = 0.0;  // 0 when the diagonal is removed (§2)
  Geometry geo;
};

// Parameters from the Hermite data; kappa_d = h.kappa_d if keep_diagonal (must be finite), else
// 0. Throws std::invalid_argument on bad input (c <= 0, gamma <= 0, infinite kappa_d kept, NaN).
AttentionParams make_params(double c, double gamma, const HermiteData& h, bool keep_diagonal,
                            const Geometry& geo);

struct AttentionOptions {
  int nodes_per_side = 48;  // mp_split_rule resolution (n per half-piece)
  double tol = 1e-13;       // on the relative residual max(|F1|/delta_tilde, |F2|/(1+delta))
  int max_iter = 50000;     // Newton steps of both passes and the damped fallback, together
};

// The solver settings of one bulk solve (solver/fixed_point.hpp) with `max_iter` iterations left:
// Newton (Method::Newton) in BulkSystem's chart, up to 60 steps of up to 40 trial points
// (halvings), then the damped iteration (mix 1/2) as the fallback; tolerance opt.tol on the
// relative residual; no GSL polish.
SolverOptions bulk_solver_options(const AttentionOptions& opt, int max_iter);

struct AttentionResult {
  double delta = 0.0, delta_tilde = 0.0;
  double q = 0.0;                        // (R4)
  double error = 0.0;                    // (R5) E_A = -gamma^2 dq/dgamma
  double ddelta = 0.0, ddelta_tilde = 0.0;  // (R6): d delta/d gamma, d delta_tilde/d gamma
  double dq = 0.0;                       // total dq/dgamma
  bool converged = false;
  int iterations = 0;                    // Newton steps + damped iterations (SolveSummary::steps)
  double residual = 0.0;                 // relative residual at the result
  Termination reason = Termination::MaxIter;  // the solver's (non_finite also for the spike step)
  Method path = Method::Newton;          // newton, or damped (the fallback)
};

// Bulk residual F = (F1, F2) of §6.4 at (delta, delta_tilde), its Jacobian J (rows F1, F2;
// columns delta, delta_tilde) and dF/dgamma, all on one quadrature pass.
struct BulkEval {
  double F1 = 0.0, F2 = 0.0;
  Eigen::Matrix2d J = Eigen::Matrix2d::Zero();
  Eigen::Vector2d dF_dgamma = Eigen::Vector2d::Zero();
  double map_delta = 0.0, map_delta_tilde = 0.0;  // right-hand sides of (R2), (R1)
};
BulkEval bulk_eval(const AttentionParams& p, const MPRule& rule, double delta, double delta_tilde);

// Full DE at p.gamma with the production rule: solve on mp_split_rule(c, gamma, a1, kappa_d,
// nodes); if sigma^2 > 0, rebuild the rule at integrand_poles() of that solution and re-solve.
AttentionResult solve_attention(const AttentionParams& p, const AttentionOptions& opt = {});
// The same with a given MP rule (for convergence studies and the theta-midpoint reference).
AttentionResult solve_attention(const AttentionParams& p, const MPRule& rule,
                                const AttentionOptions& opt);

// Complex poles of the integrands of (R1), (R2), G at a bulk state: the roots of
// D(s) = gamma(1+delta)(1+kappa s) + s d(s)^2 and s = -1/kappa (used to cluster the MP rule).
std::vector<std::complex<double>> integrand_poles(const AttentionParams& p, double delta,
                                                   double delta_tilde);

// (R4) q at a given bulk state (no solve), with the same rule: for tests and finite differences.
double spike_q(const AttentionParams& p, const MPRule& rule, double delta, double delta_tilde);

// The bulk equations (R1)-(R2) as a FixedPointSystem: x = (delta, delta_tilde), map = the
// right-hand sides of (R2), (R1); convergence judged by the relative residual
// max(|F1|/delta_tilde, |F2|/(1+delta)); Newton steps in the chart z = (log(1+delta),
// log delta_tilde) on R = (F1/delta_tilde, F2/(1+delta)) with the exact Jacobian of §6.4 (the
// logarithms keep every trial point admissible and make Newton converge from (0, 1/gamma) in
// <= ~10 steps over the whole parameter range; plain Newton in (delta, delta_tilde) diverges e.g.
// for cos at c = 1, gamma = 1e-6).
class BulkSystem : public FixedPointSystem {
 public:
  BulkSystem(AttentionParams p, MPRule rule) : p_(std::move(p)), own_(std::move(rule)), rule_(&own_) {}
  // Without a copy of the rule, which must outlive the system (the production solve).
  BulkSystem(AttentionParams p, const MPRule* rule) : p_(std::move(p)), rule_(rule) {}
  BulkSystem(const BulkSystem&) = delete;
  BulkSystem& operator=(const BulkSystem&) = delete;
  int dim() const override { return 2; }
  std::vector<std::string> names() const override { return {"delta", "delta_tilde"}; }
  Vec map(const Vec& x) const override;
  void project(Vec& x) const override;
  double residual_norm(const Vec& x, const Vec& fx) const override;
  bool chart_residual(const Vec& x, Vec& R, Eigen::MatrixXd& dR_dz, double& norm) const override;
  void to_chart(const Vec& x, Vec& z) const override;
  void from_chart(const Vec& z, Vec& x) const override;
  // The bulk evaluation of the last point map() or chart_residual() evaluated, if it was
  // (delta, delta_tilde) exactly (the spike step needs it at the solution, where the solve
  // ended); false otherwise. One object per thread (the record is not synchronised).
  bool last_eval(double delta, double delta_tilde, BulkEval& e) const;

 private:
  const BulkEval& eval(double delta, double delta_tilde) const;  // bulk_eval, recorded
  AttentionParams p_;
  MPRule own_;
  const MPRule* rule_;
  mutable BulkEval last_;
  mutable double last_delta_ = 0, last_dtilde_ = 0;
  mutable bool has_last_ = false;
};

}  // namespace rmt
}  // namespace saddle
