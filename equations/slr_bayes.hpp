// SLR Bayes-optimal state evolution (docs/equations/slr_bayes.md §5): output function (S23), channel functions,
// state evolution (S24) Qhat_a = alpha E[sum_l (g^a_l)^2], Q_a = Qhat_a/(1 + Qhat_a), and the BO
// test error ((S25) in spiked-SLR; 1 - 2 Q_v Bhat + Q_v Ahat in general, with the Nishimori
// identity Ahat = Bhat as a check).
// Channel expectations by randomly shifted QMC (§7b) with the symmetry reduction of §1.5 and the
// same Gaussian conditioning as the replica module (2L+1 dimensions spiked, 3L+1 max); every
// replicate gives its own fixed point and the results are mean +- s.e. over replicates.
// G_eps (S23): spiked closed form; max nu = inf by a 1-D Gauss-Hermite integral of
// prod Phi(t + (w_eps - w_j)/sqrt(V)); max finite nu by a tensor Gauss-Hermite rule over the L-1
// coordinates of 1^perp (softmax is shift invariant).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "equations/slr_model.hpp"
#include "integrators/qmc.hpp"
#include "integrators/quadrature.hpp"
#include "solver/curve.hpp"
#include "solver/model_card.hpp"
#include "solver/system.hpp"

namespace saddle {
namespace slr {

struct BayesSetting {
  Task task = Task::Spiked;
  int L = 2;
  // Variable length (docs/equations/slr_population.md §1.4): when non-empty, each sample's L is uniform on this set (the BO
  // predictor observes L) and every channel expectation is averaged over it; L is ignored.
  std::vector<int> lengths;
  double nu = 2.0;      // +inf allowed for max
  double delta = 0.0;   // noise variance; Delta + V_v is clamped at >= 1e-12 (§5)
  int n_points = 8192;  // QMC points per replicate
  int replicates = 8;
  std::uint64_t seed = 1;
  int inner_nodes = 0;  // GH nodes per axis for G_eps in max-SLR (0: automatic)
};

void validate(const BayesSetting& set);  // throws std::invalid_argument
std::vector<int> bayes_lengths(const BayesSetting& set);  // {L} or the variable-length set
// The largest length's dimension; shorter lengths use the leading coordinates of the points.
int bayes_qmc_dim(const BayesSetting& set);

// The output function (S23): G_eps(w^chi; V_k) up to a common positive factor, and its gradient
// dG[eps*L + l] = dG_eps/dw_l (L <= 8). V_k = 1 - Q_k.
class BayesOutput {
 public:
  BayesOutput(const BayesSetting& set, double Q_k);
  void eval(const double* wchi, double* G, double* dG) const;

 private:
  Task task_;
  int L_;
  double nu_, V_k_;
  const Rule1D* gh_ = nullptr;
  std::vector<double> node_off_, node_w_;
};

struct BayesChannelStats {
  double Qhat_k = 0, Qhat_v = 0;
  double A_hat = 0, B_hat = 0;  // E sum pihat^2, E pihat_{eps*}, pihat = G/sum G
};
BayesChannelStats bayes_channel(const BayesSetting& set, double alpha, double Q_k, double Q_v,
                                const SobolGaussian& pts, int replicate);

// The values of the Bayes-optimal state evolution, with names: the state (Q_k, Q_v) and the
// observables. T = double for one replicate, T = Estimate for a point aggregated over
// replicates; visit() fixes the order (state, then observables) in one place.
template <class T>
struct BayesValues {
  T Q_k{}, Q_v{};                          // state
  T Qhat_k{}, Qhat_v{};                    // (S24)
  T A_hat{}, B_hat{};                      // E sum pihat^2, E pihat_{eps*}; Nishimori: equal
  T test_error{};  // (S25) for spiked; 1 - 2 Q_v Bhat + Q_v Ahat for max
  T e_bayes{};     // population Bayes risk (S9): the alpha -> inf limit of test_error

  template <class F> void visit_state(F&& f) {
    f("Q_k", Q_k);
    f("Q_v", Q_v);
  }
  template <class F> void visit_observables(F&& f) {
    f("test_error", test_error);
    f("Qhat_k", Qhat_k); f("Qhat_v", Qhat_v); f("A_hat", A_hat); f("B_hat", B_hat);
    f("e_bayes", e_bayes);
  }
  template <class F> void visit(F&& f) {
    visit_state(f);
    visit_observables(f);
  }
};

// One replicate at one alpha. Unknowns (Q_k, Q_v); observables: the non-state fields of
// BayesValues in its order.
class BayesSystem : public FixedPointSystem {
 public:
  // e_bayes: bayes_risk() of the setting, reported as an observable (computed once per curve).
  BayesSystem(BayesSetting set, double alpha, std::shared_ptr<const SobolGaussian> pts,
              int replicate, double e_bayes);
  int dim() const override { return 2; }
  std::vector<std::string> names() const override { return {"Q_k", "Q_v"}; }
  Vec map(const Vec& x) const override;
  void project(Vec& x) const override;
  std::vector<std::string> observable_names() const override;
  Vec observables(const Vec& x) const override;
  // Every value at the state x (projected first), named.
  BayesValues<double> evaluate(const Vec& x) const;

 private:
  BayesSetting set_;
  double alpha_;
  std::shared_ptr<const SobolGaussian> pts_;
  int r_;
  double e_bayes_;
};

// BO test error at (Q_k, Q_v) in spiked-SLR, (S25), via population_risk().
double bayes_spiked_test_error(const BayesSetting& set, double Q_k, double Q_v);

enum class BayesInit { Informed, Uninformed };
std::string to_string(BayesInit i);

// A curve point for one start: every value as mean +- s.e. over replicates, with the driver's
// bookkeeping (CurveStatus: converged = every replicate converged; coexist = the other start
// converged to a Q_k or Q_v more than 4 s.e. + 1e-3 away, i.e. two fixed points: the hard phase).
struct BayesPoint : CurveStatus, BayesValues<Estimate> {
  double alpha = 0;
  BayesInit init = BayesInit::Informed;
};

// Damped, mix 0.5, tol 1e-7 (docs/equations/slr_bayes.md §5), max_iter 1000, no retry.
struct BayesCurveOptions : CurveOptions {
  BayesCurveOptions();
};

// The state evolution as a model of the generic subcommand (solver/model_card.hpp): `saddle slr
// bayes`. Parameters task, L, nu, delta, alpha (continuation), points, replicates, inner_nodes;
// settings seed (64 bits) and L_dist (stands in for L); starts informed Q = (0.999, 0.999) and uninformed
// Q = (1e-3, 1e-3), fresh at every alpha (no warm starts: see slr_bayes.cpp); coexistence of
// the two (the hard phase) by Q_k or Q_v more than 4 s.e. + 1e-3 apart.
class BayesModel : public CurveModel {
 public:
  static ModelCard card();
  explicit BayesModel(const ParamValues& p);
  explicit BayesModel(const BayesSetting& set);
  static std::vector<CurveStart> starts(const ParamValues& p);
  static void check(const ParamValues& p);  // throws std::invalid_argument
  static CurveOptions curve_options() { return BayesCurveOptions(); }
  static BayesSetting setting_of(const ParamValues& p);

  int replicates() const override { return set_.replicates; }
  std::unique_ptr<FixedPointSystem> system(double alpha, int r, int level) const override;
  bool distinct(const CurvePoint& a, const CurvePoint& b) const override;

 private:
  BayesSetting set_;
  std::shared_ptr<const SobolGaussian> pts_;
  double e_bayes_;
};

// Informed start Q = (0.999, 0.999) and uninformed Q = (1e-3, 1e-3) (§5 scheme), a fresh start
// at every alpha (no warm starts: see slr_bayes.cpp), through the curve driver
// (solver/curve.hpp); independent of the number of threads. Output: start-major, alphas
// ascending.
std::vector<BayesPoint> bayes_curve(const BayesSetting& set, const std::vector<double>& alphas,
                                    const std::vector<BayesInit>& inits,
                                    const BayesCurveOptions& opt);

}  // namespace slr
}  // namespace saddle
