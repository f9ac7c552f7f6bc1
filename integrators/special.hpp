// Stable special functions shared by every model: log-sum-exp, softmax, log1p(exp), sigmoid,
// normal pdf/cdf and the Mills ratio. Header-only; no allocation.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>

namespace saddle {

constexpr double kPi = 3.14159265358979323846;
constexpr double kSqrt2 = 1.41421356237309504880;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;

// log(sum_i exp(x_i)) without overflow; -inf for an empty range.
inline double log_sum_exp(const double* x, std::size_t n) {
  if (n == 0) return -std::numeric_limits<double>::infinity();
  double mx = *std::max_element(x, x + n);
  if (!std::isfinite(mx)) return mx;
  double s = 0.0;
  for (std::size_t i = 0; i < n; ++i) s += std::exp(x[i] - mx);
  return mx + std::log(s);
}

// out_i = exp(x_i) / sum_j exp(x_j); max subtracted first. out may alias x.
inline void softmax(const double* x, double* out, std::size_t n) {
  if (n == 0) return;
  double mx = *std::max_element(x, x + n);
  double s = 0.0;
  for (std::size_t i = 0; i < n; ++i) { out[i] = std::exp(x[i] - mx); s += out[i]; }
  for (std::size_t i = 0; i < n; ++i) out[i] /= s;
}

// log(1 + e^x), accurate for all x (softplus).
inline double log1p_exp(double x) {
  return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x));
}

// Logistic function 1/(1+e^{-x}), no overflow.
inline double sigmoid(double x) {
  if (x >= 0) return 1.0 / (1.0 + std::exp(-x));
  double e = std::exp(x);
  return e / (1.0 + e);
}

inline double norm_pdf(double x) { return kInvSqrt2Pi * std::exp(-0.5 * x * x); }
// Phi(x) via erfc, accurate in both tails.
inline double norm_cdf(double x) { return 0.5 * std::erfc(-x / kSqrt2); }
// log Phi(x), accurate far in the left tail (uses the Mills ratio there).
double log_norm_cdf(double x);
// Mills ratio R(x) = (1 - Phi(x)) / phi(x), stable for large positive x (continued fraction).
double mills_ratio(double x);
// Inverse of the standard normal cdf (GSL's P_inv), for u in (0,1).
double norm_quantile(double u);

}  // namespace saddle
