// The objective (S13) of the SLR trainer and its gradient (§6): see mc/slr_erm_objective.hpp.
#include "mc/slr_erm_objective.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "mc/slr_erm_kernels.hpp"
#include "solver/interrupt.hpp"
#include "solver/parallel.hpp"

namespace saddle {
namespace slr {
namespace mc {

namespace {

// Samples per block of the parallel evaluation (fixed: the blocks depend on N only).
constexpr int kSamplesPerBlock = 256;

// Cost of samples mu0..mu1-1 and, if gk is not null, their gradient added to (gk, gv).
double block_risk(const SimSetting& set, const Dataset& data, const double* k, const double* v,
                  int mu0, int mu1, double* gk, double* gv) {
  const int D = data.D;
  const double isd = 1.0 / std::sqrt(double(D));
  const int Lmax = *std::max_element(set.lengths.begin(), set.lengths.end());
  constexpr int kStack = 64;
  double buf[6 * kStack];
  std::vector<double> big;
  double* base = buf;
  if (Lmax > kStack) {
    big.resize(6 * static_cast<std::size_t>(Lmax));
    base = big.data();
  }
  const int stride = Lmax > kStack ? Lmax : kStack;
  double *pchi = base, *pz = base + stride, *ps = base + 2 * stride, *pw = base + 3 * stride;
  double *ck = base + 4 * stride, *cv = base + 5 * stride;
  double cost = 0;
  for (int mu = mu0; mu < mu1; ++mu) {
    const int L = data.length(mu);
    const float* rows = data.row(data.offset[mu]);
    sample_dots(rows, L, k, v, D, pchi, pz);  // forward: the sample's rows once
    for (int l = 0; l < L; ++l) {
      pchi[l] *= isd;
      pz[l] *= isd;
    }
    const double f = attention_forward(set.activation, set.erf_b, L, pchi, pz, ps, pw);
    const double r = data.y[mu] - f;
    cost += 0.5 * r * r;
    if (gk) {  // §6: grad_k = -sum r w_l x_l/sqrt(D), grad_v = -sum r s_l x_l/sqrt(D)
      for (int l = 0; l < L; ++l) {
        ck[l] = -r * pw[l] * isd;
        cv[l] = -r * ps[l] * isd;
      }
      sample_axpy(rows, L, ck, cv, D, gk, gv);  // backward: the same rows, still in L1
    }
  }
  return cost;
}

}  // namespace

double empirical_risk(const SimSetting& set, const Dataset& data, double lambda_k,
                      double lambda_v, const double* theta, double* grad) {
  const int D = data.D;
  const double* k = theta;
  const double* v = theta + D;
  double* gk = grad;
  double* gv = grad ? grad + D : nullptr;
  if (grad) std::fill(grad, grad + 2 * D, 0.0);
  const int nblocks = (data.N + kSamplesPerBlock - 1) / kSamplesPerBlock;
  double cost = 0;
  if (nblocks <= 1) {
    cost = block_risk(set, data, k, v, 0, data.N, gk, gv);
  } else {
    std::vector<double> bcost(nblocks, 0.0);
    std::vector<double> bgrad(grad ? static_cast<std::size_t>(nblocks) * 2 * D : 0, 0.0);
    parallel_for(static_cast<std::size_t>(nblocks), [&](std::size_t b) {
      const int mu0 = static_cast<int>(b) * kSamplesPerBlock;
      const int mu1 = std::min(data.N, mu0 + kSamplesPerBlock);
      double* g = grad ? &bgrad[b * 2 * D] : nullptr;
      bcost[b] = block_risk(set, data, k, v, mu0, mu1, g, g ? g + D : nullptr);
    });
    for (int b = 0; b < nblocks; ++b) {  // fixed order
      cost += bcost[b];
      if (grad) {
        const double* g = &bgrad[static_cast<std::size_t>(b) * 2 * D];
        for (int i = 0; i < 2 * D; ++i) grad[i] += g[i];
      }
    }
  }
  double nk = 0, nv = 0;
  for (int i = 0; i < D; ++i) {
    nk += k[i] * k[i];
    nv += v[i] * v[i];
  }
  cost += 0.5 * lambda_k * nk + 0.5 * lambda_v * nv;
  if (grad)
    for (int i = 0; i < D; ++i) {
      gk[i] += lambda_k * k[i];
      gv[i] += lambda_v * v[i];
    }
  return cost;
}

double mean_squared_error(const SimSetting& set, const Dataset& data, const double* k,
                          const double* v) {
  std::vector<double> theta(2 * static_cast<std::size_t>(data.D));
  std::copy(k, k + data.D, theta.begin());
  std::copy(v, v + data.D, theta.begin() + data.D);
  return 2.0 * empirical_risk(set, data, 0.0, 0.0, theta.data(), nullptr) / data.N;
}

bool ErmObjective::Evaluate(const double* parameters, double* cost, double* gradient) const {
  check_interrupt();
  ++evaluations_;
  *cost = empirical_risk(set_, data_, lambda_, lambda_, parameters, gradient);
  return std::isfinite(*cost);
}

}  // namespace mc
}  // namespace slr
}  // namespace saddle
