// Field-space SLR teacher sampling (docs/equations/slr_population.md §1.5) and the location
// posterior (S9).
#include "mc/slr_sample.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "integrators/special.hpp"

namespace saddle {
namespace slr {

FieldSampler::FieldSampler(Task task, std::vector<int> lengths, double nu, double delta)
    : task_(task), lengths_(std::move(lengths)), nu_(nu), delta_(delta) {
  if (lengths_.empty()) throw std::invalid_argument("FieldSampler: empty length set");
  for (int L : lengths_)
    if (L < 1) throw std::invalid_argument("FieldSampler: L must be >= 1");
  if (std::isnan(nu_) || nu_ < 0) throw std::invalid_argument("FieldSampler: nu must be >= 0");
  if (task_ == Task::Spiked && std::isinf(nu_))
    throw std::invalid_argument("FieldSampler: nu = inf only for max-SLR");
  if (!(delta_ >= 0) || !std::isfinite(delta_))
    throw std::invalid_argument("FieldSampler: delta must be finite and >= 0");
}

int FieldSampler::draw_L(Rng& rng) const {
  if (lengths_.size() == 1) return lengths_[0];
  return lengths_[rng.below(static_cast<int>(lengths_.size()))];
}

void FieldSampler::draw(Rng& rng, FieldDraw& out) const {
  draw_length(rng, draw_L(rng), out);
}

void FieldSampler::draw_length(Rng& rng, int L, FieldDraw& out) const {
  out.L = L;
  out.chi_star.resize(L);
  out.z_star.resize(L);
  for (int l = 0; l < L; ++l) out.chi_star[l] = rng.normal();
  if (task_ == Task::Spiked) {
    out.eps = rng.below(L);
    out.chi_star[out.eps] += std::sqrt(nu_);
  } else {
    const double U = std::isinf(nu_) ? 1.0 : rng.uniform();  // the argmax needs no uniform
    out.eps = draw_max_location(L, out.chi_star.data(), nu_, U);
  }
  for (int l = 0; l < L; ++l) out.z_star[l] = rng.normal();
  out.y = out.z_star[out.eps];
  if (delta_ > 0) out.y += std::sqrt(delta_) * rng.normal();
}

int draw_max_location(int L, const double* chi_star, double nu, double U) {
  if (std::isinf(nu)) return static_cast<int>(std::max_element(chi_star, chi_star + L) - chi_star);
  double buf[64];
  std::vector<double> big;
  double* p = buf;
  if (L > 64) {
    big.resize(L);
    p = big.data();
  }
  for (int l = 0; l < L; ++l) p[l] = nu * chi_star[l];
  softmax(p, p, static_cast<std::size_t>(L));
  double c = 0;
  for (int l = 0; l < L; ++l) {
    c += p[l];
    if (c >= U) return l;
  }
  return L - 1;  // U within rounding of 1
}

void location_posterior(Task task, double nu, const double* chi_star, int L, double* p) {
  if (task == Task::Max && std::isinf(nu)) {
    const int am = static_cast<int>(std::max_element(chi_star, chi_star + L) - chi_star);
    for (int l = 0; l < L; ++l) p[l] = l == am ? 1.0 : 0.0;
    return;
  }
  const double c = c_nu(task, nu);
  for (int l = 0; l < L; ++l) p[l] = c * chi_star[l];
  softmax(p, p, static_cast<std::size_t>(L));
}

}  // namespace slr
}  // namespace saddle
