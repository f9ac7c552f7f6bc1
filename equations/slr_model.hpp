// Single-location regression (docs/equations/slr_population.md §1-§3): task and activation names, c_nu (S3), and the
// population-level interface shared by the population module (§3, §7a), the replica module (§4,
// its test error is (S7)) and the Monte Carlo module.
#pragma once
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
