// The objective of the SLR trainer (docs/equations/slr_replica.md §4.1 (S13), gradient of §6):
//   R(k, v) = sum_mu 1/2 (y_mu - f(X_mu))^2 + lambda_k/2 |k|^2 + lambda_v/2 |v|^2,
// with the predictor (S5) f = sum_l s_l(chi) z_l, chi = X k/sqrt(D), z = X v/sqrt(D)
// (slr::attention_forward, equations/slr_activation.hpp), as a Ceres first-order function.
// Evaluated over fixed blocks of samples in parallel (solver/parallel.hpp), each block summing in
// sample order into its own buffer and the blocks added in block order: the same bits for any
// number of threads.
#pragma once
#include <ceres/first_order_function.h>

#include <atomic>

#include "mc/slr_erm_data.hpp"

namespace saddle {
namespace slr {
namespace mc {

// R at theta = (k, v) (2D numbers) and, unless grad is null, its gradient.
double empirical_risk(const SimSetting& set, const Dataset& data, double lambda_k,
                      double lambda_v, const double* theta, double* grad);

// Mean squared error (y - f)^2 over a data set (includes Delta).
double mean_squared_error(const SimSetting& set, const Dataset& data, const double* k,
                          const double* v);

// (S13) with lambda_k = lambda_v = lambda for Ceres' GradientProblem. Polls the interrupt flag
// (solver/interrupt.hpp) at every evaluation; counts the evaluations.
class ErmObjective : public ceres::FirstOrderFunction {
 public:
  ErmObjective(const SimSetting& set, const Dataset& data, double lambda)
      : set_(set), data_(data), lambda_(lambda) {}
  bool Evaluate(const double* parameters, double* cost, double* gradient) const override;
  int NumParameters() const override { return 2 * data_.D; }
  long evaluations() const { return evaluations_.load(); }

 private:
  const SimSetting& set_;
  const Dataset& data_;
  double lambda_;
  mutable std::atomic<long> evaluations_{0};
};

}  // namespace mc
}  // namespace slr
}  // namespace saddle
