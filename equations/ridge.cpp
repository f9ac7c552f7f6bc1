// Ridge fixture: replica-symmetric channel/prior updates and the closed-form fixed point
// (slr.md §4.8 with softmax at L = 1; prior (S14)).
#include "equations/ridge.hpp"

#include <algorithm>
#include <cmath>

namespace saddle {
namespace ridge {

Hats channel(const Params& p, double m, double q, double V) {
  const double a = p.alpha / (1.0 + V);
  return {a, p.alpha * (1.0 + p.delta - 2.0 * m + q) / ((1.0 + V) * (1.0 + V)), a};
}

ClosedForm closed_form(const Params& p) {
  const double b = p.lambda + p.alpha - 1.0;
  // Positive root of lambda V^2 + b V - 1 = 0, in the cancellation-free form.
  const double V = 2.0 / (b + std::sqrt(b * b + 4.0 * p.lambda));
  const double m = p.alpha * V / (1.0 + V);
  const double theta = p.alpha * V * V / ((1.0 + V) * (1.0 + V));
  const double q = (m * m + theta * (1.0 - 2.0 * m + p.delta)) / (1.0 - theta);
  const double e = 1.0 - 2.0 * m + q;
  return {m, q, V, e, (e + p.delta) / ((1.0 + V) * (1.0 + V))};
}

Vec RidgeSystem::map(const Vec& x) const {
  const Hats h = channel(p_, x[0], x[1], x[2]);
  const double V = 1.0 / (p_.lambda + h.Vhat);  // (S14)
  Vec out(3);
  out << h.mhat * V, (h.mhat * h.mhat + h.qhat) * V * V, V;
  return out;
}

void RidgeSystem::project(Vec& x) const {
  x[2] = std::max(x[2], 1e-300);          // V > 0
  x[1] = std::max(x[1], x[0] * x[0]);     // q >= m^2
}

Vec RidgeSystem::observables(const Vec& x) const {
  const Hats h = channel(p_, x[0], x[1], x[2]);
  const double e = 1.0 - 2.0 * x[0] + x[1];
  Vec out(5);
  out << h.mhat, h.qhat, h.Vhat, e, (e + p_.delta) / ((1.0 + x[2]) * (1.0 + x[2]));
  return out;
}

}  // namespace ridge
}  // namespace saddle
