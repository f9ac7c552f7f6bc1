// Gauss-Hermite / Gauss-Legendre rules (Golub-Welsch on Eigen, Newton-refined), GSL adaptive
// Gauss-Kronrod wrappers, and the tensor-product Gaussian rule.
#include "integrators/quadrature.hpp"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_integration.h>

#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>

#include "integrators/special.hpp"

namespace saddle {
namespace {

// GSL's default handler aborts the process; every GSL call in this library checks return codes.
const bool kGslHandlerOff = [] {
  gsl_set_error_handler_off();
  return true;
}();

// Golub-Welsch for a symmetric Jacobi matrix with zero diagonal and off-diagonal beta_k.
Rule1D golub_welsch(int n, const std::function<double(int)>& beta, double mu0) {
  Eigen::MatrixXd J = Eigen::MatrixXd::Zero(n, n);
  for (int k = 1; k < n; ++k) J(k, k - 1) = J(k - 1, k) = beta(k);
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(J);
  Rule1D r;
  r.x.resize(n);
  r.w.resize(n);
  for (int i = 0; i < n; ++i) {
    r.x[i] = es.eigenvalues()(i);
    double v0 = es.eigenvectors()(0, i);
    r.w[i] = mu0 * v0 * v0;
  }
  return r;
}

// Orthonormal probabilists' Hermite recurrence: returns p_n(x) and p_{n-1}(x) with
// p_k = He_k / sqrt(k!), so that p_n' = sqrt(n) p_{n-1}.
void hermite_orthonormal(int n, double x, double& pn, double& pnm1) {
  double pm1 = 0.0, p = 1.0;  // p_{-1}, p_0 (times the weight normalisation, irrelevant here)
  for (int k = 1; k <= n; ++k) {
    double pk = (x * p - std::sqrt(double(k - 1)) * pm1) / std::sqrt(double(k));
    pm1 = p;
    p = pk;
  }
  pn = p;
  pnm1 = pm1;
}

Rule1D build_hermite(int n) {
  Rule1D r = golub_welsch(n, [](int k) { return std::sqrt(double(k)); }, 1.0);
  // Newton-refine the nodes on the orthonormal recurrence; weights from the Christoffel formula
  // w_i = 1 / sum_{k<n} p_k(x_i)^2, which is accurate even for tiny weights.
  for (int i = 0; i < n; ++i) {
    double x = r.x[i];
    for (int it = 0; it < 3; ++it) {
      double pn, pnm1;
      hermite_orthonormal(n, x, pn, pnm1);
      double dp = std::sqrt(double(n)) * pnm1;
      if (dp == 0.0 || !std::isfinite(pn / dp)) break;
      x -= pn / dp;
    }
    double s = 0.0, pm1 = 0.0, p = 1.0;
    for (int k = 0; k < n; ++k) {
      s += p * p;
      double pk = (x * p - std::sqrt(double(k)) * pm1) / std::sqrt(double(k + 1));
      pm1 = p;
      p = pk;
    }
    r.x[i] = x;
    r.w[i] = 1.0 / s;
  }
  double tot = 0.0;
  for (double w : r.w) tot += w;
  for (double& w : r.w) w /= tot;
  // Symmetrise (nodes come in +- pairs).
  for (int i = 0; i < n / 2; ++i) {
    double xm = 0.5 * (r.x[n - 1 - i] - r.x[i]);
    double wm = 0.5 * (r.w[n - 1 - i] + r.w[i]);
    r.x[i] = -xm;
    r.x[n - 1 - i] = xm;
    r.w[i] = r.w[n - 1 - i] = wm;
  }
  if (n % 2 == 1) r.x[n / 2] = 0.0;
  return r;
}

Rule1D build_legendre(int n) {
  Rule1D r = golub_welsch(n, [](int k) { return k / std::sqrt(4.0 * k * k - 1.0); }, 2.0);
  for (int i = 0; i < n; ++i) {  // Newton refinement on P_n
    double x = r.x[i];
    for (int it = 0; it < 3; ++it) {
      double p0 = 1.0, p1 = x;
      for (int k = 2; k <= n; ++k) {
        double p2 = ((2.0 * k - 1.0) * x * p1 - (k - 1.0) * p0) / k;
        p0 = p1;
        p1 = p2;
      }
      double pn = n == 0 ? 1.0 : (n == 1 ? x : p1), pnm1 = n == 1 ? 1.0 : p0;
      double dp = n * (x * pn - pnm1) / (x * x - 1.0);
      x -= pn / dp;
      if (it == 2) r.w[i] = 2.0 / ((1.0 - x * x) * dp * dp);
    }
    r.x[i] = x;
  }
  return r;
}

template <class Builder>
const Rule1D& cached_rule(std::map<int, std::unique_ptr<Rule1D>>& cache, std::mutex& mu, int n,
                          Builder build) {
  if (n < 1) throw std::invalid_argument("quadrature rule needs at least one node");
  std::lock_guard<std::mutex> lock(mu);
  auto it = cache.find(n);
  if (it != cache.end()) return *it->second;
  auto rule = std::make_unique<Rule1D>(build(n));
  const Rule1D& ref = *rule;
  cache.emplace(n, std::move(rule));
  return ref;
}

struct GslFunctionAdapter {
  const std::function<double(double)>* f;
  static double call(double x, void* p) { return (*static_cast<GslFunctionAdapter*>(p)->f)(x); }
};

}  // namespace

const Rule1D& gauss_hermite(int n) {
  static std::map<int, std::unique_ptr<Rule1D>> cache;
  static std::mutex mu;
  return cached_rule(cache, mu, n, build_hermite);
}

void truncated_normal_rule(double a, double b, int n, Rule1D& out) {
  if (n < 1) throw std::invalid_argument("truncated_normal_rule: n must be >= 1");
  const double lo = std::max(a, -12.0), hi = std::min(b, 12.0);
  out.x.assign(n, 0.0);
  out.w.assign(n, 0.0);
  if (!(hi > lo)) return;
  // discrete measure: Gauss-Legendre nodes on [lo, hi] with weights w_GL phi(x)
  const Rule1D& gl = gauss_legendre(96);
  const int N = gl.size();
  double xs[96], vs[96], p0[96], p1[96];
  const double half = 0.5 * (hi - lo), mid = 0.5 * (hi + lo);
  double mass = 0.0;
  for (int i = 0; i < N; ++i) {
    xs[i] = mid + half * gl.x[i];
    vs[i] = half * gl.w[i] * norm_pdf(xs[i]);
    mass += vs[i];
    p0[i] = 1.0;
    p1[i] = 0.0;  // p_{-1}
  }
  if (!(mass > 0)) return;
  // Stieltjes in orthonormal form: sqrt(b_{k+1}) p_{k+1} = (x - a_k) p_k - sqrt(b_k) p_{k-1}
  Eigen::VectorXd alpha(n), beta(n);  // beta(k) = b_k, k >= 1
  const double p00 = 1.0 / std::sqrt(mass);
  for (int i = 0; i < N; ++i) p0[i] = p00;
  beta(0) = 0.0;
  for (int k = 0; k < n; ++k) {
    double ak = 0.0;
    for (int i = 0; i < N; ++i) ak += vs[i] * xs[i] * p0[i] * p0[i];
    alpha(k) = ak;
    if (k + 1 == n) break;
    const double sb = std::sqrt(beta(k));
    double bn = 0.0;
    for (int i = 0; i < N; ++i) {
      const double r = (xs[i] - ak) * p0[i] - sb * p1[i];
      p1[i] = p0[i];
      p0[i] = r;
      bn += vs[i] * r * r;
    }
    beta(k + 1) = bn;
    const double sc = bn > 0 ? 1.0 / std::sqrt(bn) : 0.0;
    for (int i = 0; i < N; ++i) p0[i] *= sc;
  }
  Eigen::VectorXd sub(std::max(n - 1, 0));
  for (int k = 1; k < n; ++k) sub(k - 1) = std::sqrt(std::max(beta(k), 0.0));
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es;
  es.computeFromTridiagonal(alpha, sub, Eigen::ComputeEigenvectors);
  for (int i = 0; i < n; ++i) {
    out.x[i] = es.eigenvalues()(i);
    const double v0 = es.eigenvectors()(0, i);
    out.w[i] = mass * v0 * v0;
  }
}

const Rule1D& gauss_legendre(int n) {
  static std::map<int, std::unique_ptr<Rule1D>> cache;
  static std::mutex mu;
  return cached_rule(cache, mu, n, build_legendre);
}

double integrate_gl(const std::function<double(double)>& f, double a, double b, int n) {
  const Rule1D& r = gauss_legendre(n);
  double h = 0.5 * (b - a), c = 0.5 * (b + a), s = 0.0;
  for (int i = 0; i < r.size(); ++i) s += r.w[i] * f(c + h * r.x[i]);
  return s * h;
}

AdaptiveResult integrate_adaptive(const std::function<double(double)>& f, double a, double b,
                                  double epsabs, double epsrel, int limit) {
  (void)kGslHandlerOff;
  GslFunctionAdapter ad{&f};
  gsl_function F;
  F.function = &GslFunctionAdapter::call;
  F.params = &ad;
  gsl_integration_workspace* ws = gsl_integration_workspace_alloc(limit);
  AdaptiveResult res;
  int status;
  bool lo_inf = std::isinf(a), hi_inf = std::isinf(b);
  if (lo_inf && hi_inf)
    status = gsl_integration_qagi(&F, epsabs, epsrel, limit, ws, &res.value, &res.abserr);
  else if (hi_inf)
    status = gsl_integration_qagiu(&F, a, epsabs, epsrel, limit, ws, &res.value, &res.abserr);
  else if (lo_inf)
    status = gsl_integration_qagil(&F, b, epsabs, epsrel, limit, ws, &res.value, &res.abserr);
  else
    status = gsl_integration_qag(&F, a, b, epsabs, epsrel, limit, GSL_INTEG_GAUSS21, ws,
                                 &res.value, &res.abserr);
  gsl_integration_workspace_free(ws);
  res.ok = (status == GSL_SUCCESS);
  return res;
}

double gauss_expect(const std::function<double(double)>& f, double mean, double var, int n) {
  const Rule1D& r = gauss_hermite(n);
  double sd = std::sqrt(std::max(var, 0.0)), s = 0.0;
  for (int i = 0; i < r.size(); ++i) s += r.w[i] * f(mean + sd * r.x[i]);
  return s;
}

Eigen::MatrixXd covariance_sqrt(const Eigen::MatrixXd& cov) {
  Eigen::LLT<Eigen::MatrixXd> llt(cov);
  if (llt.info() == Eigen::Success) return llt.matrixL();
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es(cov);
  Eigen::VectorXd ev = es.eigenvalues().cwiseMax(0.0).cwiseSqrt();
  return es.eigenvectors() * ev.asDiagonal();
}

GaussianTensorRule::GaussianTensorRule(const Eigen::VectorXd& mean, const Eigen::MatrixXd& cov,
                                       int n_per_dim)
    : dim_(static_cast<int>(mean.size())) {
  if (cov.rows() != dim_ || cov.cols() != dim_)
    throw std::invalid_argument("GaussianTensorRule: covariance shape does not match the mean");
  const Rule1D& r = gauss_hermite(n_per_dim);
  Eigen::MatrixXd C = covariance_sqrt(cov);
  std::size_t npts = 1;
  for (int d = 0; d < dim_; ++d) npts *= static_cast<std::size_t>(n_per_dim);
  points_.resize(npts * dim_);
  weights_.resize(npts);
  std::vector<int> idx(dim_, 0);
  Eigen::VectorXd xi(dim_);
  for (std::size_t j = 0; j < npts; ++j) {
    double w = 1.0;
    for (int d = 0; d < dim_; ++d) {
      xi(d) = r.x[idx[d]];
      w *= r.w[idx[d]];
    }
    Eigen::VectorXd X = mean + C * xi;
    for (int d = 0; d < dim_; ++d) points_[j * dim_ + d] = X(d);
    weights_[j] = w;
    for (int d = dim_ - 1; d >= 0; --d) {  // odometer increment
      if (++idx[d] < n_per_dim) break;
      idx[d] = 0;
    }
  }
}

double GaussianTensorRule::expect(const std::function<double(const double*)>& f) const {
  double s = 0.0;
  for (int j = 0; j < size(); ++j) s += weights_[j] * f(point(j));
  return s;
}

}  // namespace saddle
