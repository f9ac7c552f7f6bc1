// Single-location regression (docs/equations/slr_population.md §1-§3): task and activation names, c_nu (S3), and the
// population-level interface shared by the population module (§3, §7a), the replica module (§4,
// its test error is (S7)) and the Monte Carlo module.
#pragma once
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace saddle {
namespace slr {

enum class Task { Spiked, Max };
enum class Activation { Softmax, Linear, Erf, Softplus };

Task parse_task(const std::string& s);              // "spiked" | "max"; throws std::invalid_argument
Activation parse_activation(const std::string& s);  // "softmax" | "linear" | "erf" | "softplus"
std::string to_string(Task t);
std::string to_string(Activation a);

// The text settings of the registered SLR models (solver/model_card.hpp ModelSetting), read alike:
// --seed, an integer in [0, 2^64 - 1]; --L-dist, a comma list of lengths in [1, max_L]. Both
// throw std::invalid_argument naming the option.
std::uint64_t parse_seed_text(const std::string& seed);
std::vector<int> parse_length_set(const std::string& dist, int max_L);

// (S3): c_nu = sqrt(nu) (spiked), nu (max). nu = +inf allowed for max.
double c_nu(Task task, double nu);

// Population setting: task, signal nu, activation (erf offset b), and the length law: a fixed L
// when lengths has one element, otherwise L uniform on `lengths` (one shared (k, v)).
struct PopulationSetting {
  Task task = Task::Spiked;
  std::vector<int> lengths{2};
  double nu = 1.0;
  Activation activation = Activation::Softmax;
  double erf_b = 0.0;
};

// Quadrature resolution of the §7a reductions. Defaults reach ~1e-10 relative on A, B (the tests
// compare with refine = 2). All grids are trapezoid rules, exponentially convergent here.
struct PopulationAccuracy {
  double h_tau = 0.25;      // step of the log-Laplace variable tau = log t (and log u)
  double h_x = 0.1;         // largest step of a Gaussian variable (x in N(0,1) units)
  double steep = 0.25;      // h_x * (steepness of the activation in x) is kept below this
  double tail = 30.0;       // Laplace integrals truncated where the integrand is < e^-tail
  double x_tail = 10.0;     // Gaussian variables truncated at +- x_tail standard deviations
  double coarse_2d = 1.6;   // the 2-D max-SLR B (S30) uses h_tau, h_x, steep times this factor
  // All steps divided by `factor`, tails widened (for refinement tests).
  PopulationAccuracy refined(double factor) const;
  // A cheap setting (~1e-6) for bracketing in the optimiser.
  static PopulationAccuracy coarse();
};

// A, B and, for normalised activations, the complements cA = 1 - A, cB = 1 - B computed without
// cancellation ((S28) and its analogue for B); NaN for element-wise activations.
struct ABDetail {
  double A = 0.0;
  double B = 0.0;
  double cA = 0.0;
  double cB = 0.0;
  // A - B^2 as a sum of positive terms, 2 E[sum_{l != eps*} s_l^2] + E[sum_{l != j, both != eps*}
  // s_l s_j] - (1 - B)^2 (§3.4 (S8a)); spiked-SLR with a normalised activation, else NaN.
  double dAB = std::numeric_limits<double>::quiet_NaN();
};

// Domain of the replica models (`slr erm`, `slr bayes`): alpha in [1e-3, 1e4], finite nu <= 1e3,
// lambda and delta <= 1e4 (README "Errors and exit codes"). Beyond it the channel integrals
// over/underflow (alpha = 1e308 makes the conjugate overlaps inf, nu = 1e300 the residual).
constexpr double kSlrMinAlpha = 1e-3, kSlrMaxAlpha = 1e4, kSlrMaxNu = 1e3, kSlrMaxScale = 1e4;

// A = E[sum_l s_l^2], B = E[s_{eps*}] at (m_k, q_k), q_k >= m_k^2 (S7), averaged over the length law.
struct AB {
  double A = 0.0;
  double B = 0.0;
};
AB population_AB(const PopulationSetting& set, double m_k, double q_k);

// (S7): E = 1 - 2 m_v B + q_v A.
double population_risk(const PopulationSetting& set, double m_k, double q_k, double m_v, double q_v);

// (S9): E_Bayes = 1 - E[sum p^2], averaged over the length law.
double bayes_risk(Task task, const std::vector<int>& lengths, double nu);

}  // namespace slr
}  // namespace saddle
