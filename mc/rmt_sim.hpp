// Monte Carlo of the finite-size RMT model, docs/equations/rmt.md §8: per draw y, Z, X = Z + mu y^T, the true
// nonlinear kernel K = f(X^T W X / sqrt p)/sqrt p (centred f; diagonal removed or kept), the
// Gaussian-equivalent surrogate K~ (§8.2) and the linear-regression baseline Phi = X (§8.1.6);
// E(gamma) for a whole gamma grid from one tridiagonal reduction per draw (§8.1.4-5), and the mu = 0
// trace statistic (§8.1.7). Mean and standard error over draws. Draw d is seeded from
// (seed, d) only, so results do not depend on the number of threads.
#pragma once
#include <Eigen/Dense>

#include <cstdint>
#include <string>
#include <vector>

#include "equations/rmt_hermite.hpp"
#include "integrators/estimate.hpp"

namespace saddle {
namespace rmt {
namespace mc {

enum class Model { True, Surrogate, Ridge };
std::string to_string(Model m);
// "true", "surrogate" or "ridge"; throws std::invalid_argument otherwise.
Model parse_model(const std::string& s);

struct SimSetting {
  int n = 1024;                // tokens
  double c = 0.25;             // p = round(c n)
  double snr = 1.0;            // |mu|^2, mu = sqrt(snr) e1
  Activation act;              // f (centred with h.a0 in the true model)
  HermiteData h;               // hermite_data(act): a0 (centring), a1, sigma2 (surrogate)
  bool keep_diagonal = false;  // K_ii kept (true model: f(T_ii/sqrt p)/sqrt p; surrogate: + kappa_d I)
  Eigen::Vector3d wk = Eigen::Vector3d::Zero();  // coordinates on (e1, e2, e3)
  Eigen::Vector3d wq = Eigen::Vector3d::Zero();
  std::vector<double> gammas;  // >= 0
  std::vector<Model> models = {Model::True};
  int draws = 16;
  std::uint64_t seed = 1;
  int p() const;
};

// Checks the setting (n >= 2, p >= 3, finite values, gammas >= 0, draws >= 1, finite kappa_d in
// kept mode, ...); throws std::invalid_argument with a clear message.
void validate_setting(const SimSetting& s);

// One draw: for each model (in s.models order), E(gamma) and the trace statistic
// E_tr(gamma) = (gamma^2/n) sum_{i<=n} (lambda_i + gamma)^-2 for every gamma.
struct DrawResult {
  std::vector<std::vector<double>> error;  // [model][gamma]
  std::vector<std::vector<double>> trace;  // [model][gamma]
};
DrawResult simulate_draw(const SimSetting& s, int draw_index);

// Errors and trace statistic of one feature matrix Phi (p x n) and labels y on a gamma grid,
// from one tridiagonal reduction of the smaller Gram matrix (§8.1.4-5, 7): its eigenvalues and
// one tridiagonal solve per gamma (no eigenvectors). Polls the interrupt throughout.
void spectral_errors(const Eigen::MatrixXd& Phi, const Eigen::VectorXd& y,
                     const std::vector<double>& gammas, std::vector<double>& error,
                     std::vector<double>& trace);

struct SimSummary {
  int n = 0, p = 0, draws = 0;
  std::vector<std::vector<Estimate>> error;  // [model][gamma]
  std::vector<std::vector<Estimate>> trace;  // [model][gamma]
  // Per-draw E_model - E_ridge on the same draw (empty unless Model::Ridge is simulated): with
  // the closed-form ridge error added it is a control-variate estimate of E_model whose s.e. is
  // 5-10 times smaller than the plain one (the label-projection noise is shared).
  std::vector<std::vector<Estimate>> diff_ridge;  // [model][gamma]
  double wall_seconds = 0.0;
};
// All draws (tasks of one thread team, solver/parallel.hpp; the exception of the lowest failing
// draw, e.g. Interrupted, is rethrown after the loop), then mean and s.e. (sd / sqrt(draws)) in
// draw order.
SimSummary simulate(const SimSetting& s);

}  // namespace mc
}  // namespace rmt
}  // namespace saddle
