// Quadrature rules: Gauss-Hermite for the standard normal (Golub-Welsch, cached, thread-safe),
// Gauss-Legendre on intervals, adaptive Gauss-Kronrod (GSL QAG/QAGI) for validation, and
// tensor-product rules for a k-dimensional Gaussian N(mean, cov) via a Cholesky map.
#pragma once
#include <Eigen/Dense>
#include <functional>
#include <vector>

namespace saddle {

// A 1-D rule: nodes x and weights w.
struct Rule1D {
  std::vector<double> x;
  std::vector<double> w;
  int size() const { return static_cast<int>(x.size()); }
};

// Probabilists' Gauss-Hermite rule with n nodes: sum_i w_i f(x_i) ~ E[f(xi)], xi ~ N(0,1);
// weights sum to 1. Built once per n (Golub-Welsch + Newton refinement) and cached; the returned
// reference stays valid for the life of the program and may be used from any thread.
const Rule1D& gauss_hermite(int n);

// Gauss-Legendre rule with n nodes on [-1, 1] (weights sum to 2). Cached like gauss_hermite.
const Rule1D& gauss_legendre(int n);

// The n-point Gauss rule of the standard normal density restricted to [a, b] (a = -inf and/or
// b = +inf allowed): sum_i w_i f(x_i) ~ integral_a^b f(x) phi(x) dx, exact for polynomials of
// degree <= 2n - 1 (up to the discretisation below), weights summing to Phi(b) - Phi(a). By the
// discretised Stieltjes procedure (Gautschi): phi on [max(a, -12), min(b, 12)] (the mass beyond is
// below 1e-32) discretised by 96-point Gauss-Legendre, recurrence coefficients by Stieltjes, nodes
// and weights by Golub-Welsch. For [-inf, inf] it is the Gauss-Hermite rule. Not cached (a, b vary);
// about 10 us for n = 8.
void truncated_normal_rule(double a, double b, int n, Rule1D& out);

// Integral of f over [a, b] with an n-point Gauss-Legendre rule.
double integrate_gl(const std::function<double(double)>& f, double a, double b, int n);

// Result of an adaptive integration: value and GSL's error estimate; ok = false if GSL reported
// a failure (the value is then the best estimate available).
struct AdaptiveResult {
  double value = 0.0;
  double abserr = 0.0;
  bool ok = true;
};
// Adaptive 21-point Gauss-Kronrod on [a, b]; a = -inf and/or b = +inf allowed (QAGI/QAGIU/QAGIL).
AdaptiveResult integrate_adaptive(const std::function<double(double)>& f, double a, double b,
                                  double epsabs = 1e-12, double epsrel = 1e-12, int limit = 1000);

// E[f(X)] for X ~ N(mean, var) with an n-node Gauss-Hermite rule.
double gauss_expect(const std::function<double(double)>& f, double mean, double var, int n);

// Tensor-product Gauss-Hermite rule for X ~ N(mean, cov) in k dimensions: nodes X_j = mean + C xi_j
// where C C^T = cov (Cholesky; eigen square root if cov is only semidefinite). n^k points.
class GaussianTensorRule {
 public:
  GaussianTensorRule(const Eigen::VectorXd& mean, const Eigen::MatrixXd& cov, int n_per_dim);
  int dim() const { return dim_; }
  int size() const { return static_cast<int>(weights_.size()); }
  // Point j as a pointer to dim() contiguous doubles.
  const double* point(int j) const { return points_.data() + static_cast<std::size_t>(j) * dim_; }
  double weight(int j) const { return weights_[j]; }
  // sum_j w_j f(X_j).
  double expect(const std::function<double(const double*)>& f) const;

 private:
  int dim_;
  std::vector<double> points_;
  std::vector<double> weights_;
};

// A square root C of a symmetric positive semidefinite matrix (C C^T = cov): Cholesky when it
// succeeds, otherwise the symmetric eigen square root with negative eigenvalues clipped to 0.
Eigen::MatrixXd covariance_sqrt(const Eigen::MatrixXd& cov);

}  // namespace saddle
