// Single-location regression (docs/equations/slr_population.md §1-§2): task/activation names and c_nu (S3).
// The population functions declared in slr_model.hpp live in equations/slr_population.cpp.
#include "equations/slr_model.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace saddle {
namespace slr {

std::uint64_t parse_seed_text(const std::string& seed) {
  errno = 0;
  char* end = nullptr;
  const unsigned long long sv = std::strtoull(seed.c_str(), &end, 10);
  if (seed.empty() || seed.find_first_not_of("0123456789") != std::string::npos || *end != '\0' ||
      errno == ERANGE)
    throw std::invalid_argument("--seed: '" + seed + "' is not an integer in [0, 2^64 - 1]");
  return static_cast<std::uint64_t>(sv);
}

std::vector<int> parse_length_set(const std::string& dist, int max_L) {
  std::vector<int> lengths;
  std::size_t pos = 0;
  while (pos <= dist.size()) {
    const std::size_t comma = std::min(dist.find(',', pos), dist.size());
    const std::string field = dist.substr(pos, comma - pos);
    std::size_t used = 0;
    int L = 0;
    try {
      L = std::stoi(field, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (field.empty() || used != field.size() || L < 1 || L > max_L)
      throw std::invalid_argument("--L-dist: '" + field + "' is not an integer in [1, " + std::to_string(max_L) +
                                  "]");
    lengths.push_back(L);
    pos = comma + 1;
  }
  return lengths;
}

Task parse_task(const std::string& s) {
  if (s == "spiked") return Task::Spiked;
  if (s == "max") return Task::Max;
  throw std::invalid_argument("unknown SLR task '" + s + "' (expected spiked or max)");
}

Activation parse_activation(const std::string& s) {
  if (s == "softmax") return Activation::Softmax;
  if (s == "linear") return Activation::Linear;
  if (s == "erf") return Activation::Erf;
  if (s == "softplus") return Activation::Softplus;
  throw std::invalid_argument("unknown SLR activation '" + s +
                              "' (expected softmax, linear, erf or softplus)");
}

std::string to_string(Task t) { return t == Task::Spiked ? "spiked" : "max"; }

std::string to_string(Activation a) {
  switch (a) {
    case Activation::Softmax: return "softmax";
    case Activation::Linear: return "linear";
    case Activation::Erf: return "erf";
    case Activation::Softplus: return "softplus";
  }
  return "?";
}

// (S3): c_nu = sqrt(nu) for spiked-SLR, nu for max-SLR.
double c_nu(Task task, double nu) {
  if (std::isnan(nu) || nu < 0) throw std::invalid_argument("c_nu: nu must be >= 0");
  if (task == Task::Spiked) {
    if (std::isinf(nu)) throw std::invalid_argument("c_nu: nu = inf is only defined for max-SLR");
    return std::sqrt(nu);
  }
  return nu;
}

PopulationAccuracy PopulationAccuracy::refined(double factor) const {
  PopulationAccuracy r = *this;
  r.h_tau /= factor;
  r.h_x /= factor;
  r.steep /= factor;
  r.tail += 5.0 * std::log2(std::max(factor, 1.0));
  r.x_tail += 1.0 * std::log2(std::max(factor, 1.0));
  return r;
}

PopulationAccuracy PopulationAccuracy::coarse() {
  PopulationAccuracy r;
  r.h_tau = 0.5;
  r.h_x = 0.2;
  r.steep = 0.5;
  r.tail = 22.0;
  r.x_tail = 8.5;
  r.coarse_2d = 1.0;
  return r;
}

}  // namespace slr
}  // namespace saddle
