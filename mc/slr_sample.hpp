// Field-space sampling of the SLR teacher (docs/equations/slr_population.md §1.2-§1.5): location eps*, teacher fields
// chi*, z* in R^L and the label y (S4), for spiked-SLR and max-SLR (finite nu: eps* by inverse
// cdf of softmax(nu chi*); nu = inf: argmax), with a length drawn uniformly from a set.
// Also the Bayes posterior p = softmax(c_nu chi*) (S9).
// Reusable by the replica, state-evolution and Monte Carlo modules.
#pragma once
#include <cstdint>
#include <vector>

#include "equations/slr_activation.hpp"
#include "equations/slr_model.hpp"
#include "mc/random.hpp"

namespace saddle {
namespace slr {

// One draw of the teacher in field space.
struct FieldDraw {
  int L = 0;
  int eps = 0;                    // location eps* (0-based)
  std::vector<double> chi_star;   // chi*_l = x_l . k* / sqrt(D)   (S1)
  std::vector<double> z_star;     // z*_l = x_l . v* / sqrt(D)
  double y = 0.0;                 // (S4) y = z*_{eps*} + sqrt(Delta) xi0
};

class FieldSampler {
 public:
  // Throws std::invalid_argument on a bad setting (empty lengths, L < 1, nu < 0 or NaN,
  // nu = inf for spiked, delta < 0).
  FieldSampler(Task task, std::vector<int> lengths, double nu, double delta = 0.0);
  // §1.5 field-space recipe: spiked: eps* uniform, chi* = zeta + sqrt(nu) e_{eps*}; max:
  // chi* ~ N(0, I_L), eps* = min{l : sum_{j<=l} p_j >= U}, p = softmax(nu chi*) (argmax at
  // nu = inf); z* ~ N(0, I_L) independent; y = z*_{eps*} + sqrt(Delta) xi0.
  void draw(Rng& rng, FieldDraw& out) const;
  // Draw with a given length L.
  void draw_length(Rng& rng, int L, FieldDraw& out) const;
  int draw_L(Rng& rng) const;

  Task task() const { return task_; }
  double nu() const { return nu_; }
  double delta() const { return delta_; }
  const std::vector<int>& lengths() const { return lengths_; }

 private:
  Task task_;
  std::vector<int> lengths_;
  double nu_;
  double delta_;
};

// Location eps* (0-based) of max-SLR given chi* (§1.2, §1.5): the smallest l with
// sum_{j<=l} p_j >= U, p = softmax(nu chi*), for U uniform on (0, 1); argmax at nu = inf. The one
// max-SLR location draw of every simulation (field space and feature space).
int draw_max_location(int L, const double* chi_star, double nu, double U);

// Bayes posterior of the location (§3.4): p = softmax(c_nu chi*), one-hot argmax for max-SLR at
// nu = inf.
void location_posterior(Task task, double nu, const double* chi_star, int L, double* p);

// The attention weights s = sigma(chi) of §2: attention_weights (equations/slr_activation.hpp).

}  // namespace slr
}  // namespace saddle
