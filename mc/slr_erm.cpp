// Direct finite-size simulation of SLR (docs/equations/slr_population.md §1.5, §2, (S4), (S5), (S9); docs/equations/slr_replica.md (S13), §6).
// See mc/slr_erm.hpp. The hot loops (two dot products of a float token row with k, v in double,
// and the two rank-one gradient updates) have an AVX2/FMA version chosen at run time.
#include "mc/slr_erm.hpp"

#include <ceres/gradient_problem.h>
#include <ceres/gradient_problem_solver.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <stdexcept>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define SADDLE_SLR_X86 1
#endif

#include "integrators/special.hpp"
#include "mc/random.hpp"
#include "mc/slr_sample.hpp"
#include "solver/interrupt.hpp"

namespace saddle {
namespace slr {
namespace mc {

namespace {

// c_nu of (S3), local copy (the mc module does not depend on the population module's sources).
double cnu(Task task, double nu) { return task == Task::Spiked ? std::sqrt(nu) : nu; }


// Random stream of (seed, index, purpose) (mc/random.hpp).
Rng make_rng(std::uint64_t seed, std::uint64_t index, std::uint64_t purpose) {
  return Rng(seed, index, purpose);
}

enum Purpose : std::uint64_t {
  kTeacher = 1, kTrain = 2, kTest = 3, kInit = 4, kDirections = 5,
  kRestart = 1000  // + restart index (restarts > 1)
};

// ---- kernels: a = x.k, b = x.v (x float, k, v double) and gk += ck x, gv += cv x -------------
void dot2_scalar(const float* x, const double* k, const double* v, int D, double* a, double* b) {
  double a0 = 0, a1 = 0, b0 = 0, b1 = 0;
  int i = 0;
  for (; i + 1 < D; i += 2) {
    const double x0 = x[i], x1 = x[i + 1];
    a0 += x0 * k[i];
    a1 += x1 * k[i + 1];
    b0 += x0 * v[i];
    b1 += x1 * v[i + 1];
  }
  for (; i < D; ++i) {
    a0 += double(x[i]) * k[i];
    b0 += double(x[i]) * v[i];
  }
  *a = a0 + a1;
  *b = b0 + b1;
}
void axpy2_scalar(const float* x, double ck, double cv, int D, double* gk, double* gv) {
  for (int i = 0; i < D; ++i) {
    const double xi = x[i];
    gk[i] += ck * xi;
    gv[i] += cv * xi;
  }
}

#ifdef SADDLE_SLR_X86
__attribute__((target("avx2,fma"))) inline double hsum256(__m256d a) {
  __m128d lo = _mm256_castpd256_pd128(a), hi = _mm256_extractf128_pd(a, 1);
  lo = _mm_add_pd(lo, hi);
  __m128d sh = _mm_unpackhi_pd(lo, lo);
  return _mm_cvtsd_f64(_mm_add_sd(lo, sh));
}
__attribute__((target("avx2,fma"))) void dot2_avx2(const float* x, const double* k,
                                                    const double* v, int D, double* a, double* b) {
  __m256d a0 = _mm256_setzero_pd(), a1 = _mm256_setzero_pd();
  __m256d b0 = _mm256_setzero_pd(), b1 = _mm256_setzero_pd();
  int i = 0;
  for (; i + 8 <= D; i += 8) {
    const __m256 xf = _mm256_loadu_ps(x + i);
    const __m256d xl = _mm256_cvtps_pd(_mm256_castps256_ps128(xf));
    const __m256d xh = _mm256_cvtps_pd(_mm256_extractf128_ps(xf, 1));
    a0 = _mm256_fmadd_pd(xl, _mm256_loadu_pd(k + i), a0);
    a1 = _mm256_fmadd_pd(xh, _mm256_loadu_pd(k + i + 4), a1);
    b0 = _mm256_fmadd_pd(xl, _mm256_loadu_pd(v + i), b0);
    b1 = _mm256_fmadd_pd(xh, _mm256_loadu_pd(v + i + 4), b1);
  }
  double sa = hsum256(_mm256_add_pd(a0, a1)), sb = hsum256(_mm256_add_pd(b0, b1));
  for (; i < D; ++i) {
    sa += double(x[i]) * k[i];
    sb += double(x[i]) * v[i];
  }
  *a = sa;
  *b = sb;
}
__attribute__((target("avx2,fma"))) void axpy2_avx2(const float* x, double ck, double cv, int D,
                                                     double* gk, double* gv) {
  const __m256d vk = _mm256_set1_pd(ck), vv = _mm256_set1_pd(cv);
  int i = 0;
  for (; i + 8 <= D; i += 8) {
    const __m256 xf = _mm256_loadu_ps(x + i);
    const __m256d xl = _mm256_cvtps_pd(_mm256_castps256_ps128(xf));
    const __m256d xh = _mm256_cvtps_pd(_mm256_extractf128_ps(xf, 1));
    _mm256_storeu_pd(gk + i, _mm256_fmadd_pd(xl, vk, _mm256_loadu_pd(gk + i)));
    _mm256_storeu_pd(gk + i + 4, _mm256_fmadd_pd(xh, vk, _mm256_loadu_pd(gk + i + 4)));
    _mm256_storeu_pd(gv + i, _mm256_fmadd_pd(xl, vv, _mm256_loadu_pd(gv + i)));
    _mm256_storeu_pd(gv + i + 4, _mm256_fmadd_pd(xh, vv, _mm256_loadu_pd(gv + i + 4)));
  }
  for (; i < D; ++i) {
    const double xi = x[i];
    gk[i] += ck * xi;
    gv[i] += cv * xi;
  }
}
bool have_avx2() {
  static const bool ok = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return ok;
}
#endif

inline void dot2(const float* x, const double* k, const double* v, int D, double* a, double* b) {
#ifdef SADDLE_SLR_X86
  if (have_avx2()) return dot2_avx2(x, k, v, D, a, b);
#endif
  dot2_scalar(x, k, v, D, a, b);
}
inline void axpy2(const float* x, double ck, double cv, int D, double* gk, double* gv) {
#ifdef SADDLE_SLR_X86
  if (have_avx2()) return axpy2_avx2(x, ck, cv, D, gk, gv);
#endif
  axpy2_scalar(x, ck, cv, D, gk, gv);
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}
void axpy(double c, const std::vector<double>& x, std::vector<double>& y) {
  for (std::size_t i = 0; i < x.size(); ++i) y[i] += c * x[i];
}
void scale_to_norm(std::vector<double>& a, double norm) {
  const double n = std::sqrt(dot(a, a));
  for (double& x : a) x *= norm / n;
}
// Gram-Schmidt of a against each unit-free vector in `basis` (each of norm^2 = D).
void orthogonalise(std::vector<double>& a, const std::vector<const std::vector<double>*>& basis) {
  for (int pass = 0; pass < 2; ++pass)
    for (const auto* b : basis) axpy(-dot(a, *b) / dot(*b, *b), *b, a);
}

// Bayes predictor (S9): sum_l p_l z*_l with p = softmax(c_nu chi*) (one-hot argmax at c = inf).
double bayes_predict(Task task, double nu, int L, const double* chistar, const double* zstar,
                     double* work) {
  const double c = cnu(task, nu);
  if (std::isinf(c)) {
    const int j = static_cast<int>(std::max_element(chistar, chistar + L) - chistar);
    return zstar[j];
  }
  for (int l = 0; l < L; ++l) work[l] = c * chistar[l];
  softmax(work, work, L);
  double f = 0;
  for (int l = 0; l < L; ++l) f += work[l] * zstar[l];
  return f;
}

int max_length(const SimSetting& set) {
  return *std::max_element(set.lengths.begin(), set.lengths.end());
}

// Streams n fresh samples (never stored) and accumulates the MSE of the predictor (k, v) and of
// the Bayes predictor.
void test_errors(const SimSetting& set, const Teacher& T, const std::vector<double>& k,
                 const std::vector<double>& v, int n, std::uint64_t seed, std::uint64_t index,
                 double* mse, double* mse_bayes, double* var, double* var_bayes) {
  const int D = T.D, Lmax = max_length(set);
  const double isd = 1.0 / std::sqrt(double(D));
  auto rng = make_rng(seed, index, kTest);
  std::vector<float> X(static_cast<std::size_t>(Lmax) * D);
  std::vector<double> chis(Lmax), zs(Lmax), chi(Lmax), z(Lmax), s(Lmax), w(Lmax);
  double acc = 0, accb = 0, acc2 = 0, accb2 = 0;
  for (int mu = 0; mu < n; ++mu) {
    const int L = set.lengths[rng.below(static_cast<int>(set.lengths.size()))];
    for (std::size_t i = 0; i < static_cast<std::size_t>(L) * D; ++i) X[i] = float(rng.normal());
    int eps = 0;
    if (set.task == Task::Spiked) {
      eps = rng.below(L);
      const double sp = std::sqrt(set.nu) * isd;
      float* xr = X.data() + static_cast<std::size_t>(eps) * D;
      for (int i = 0; i < D; ++i) xr[i] = float(double(xr[i]) + sp * T.kstar[i]);
    }
    for (int l = 0; l < L; ++l) {
      dot2(X.data() + static_cast<std::size_t>(l) * D, T.kstar.data(), T.vstar.data(), D, &chis[l],
           &zs[l]);
      chis[l] *= isd;
      zs[l] *= isd;
      dot2(X.data() + static_cast<std::size_t>(l) * D, k.data(), v.data(), D, &chi[l], &z[l]);
      chi[l] *= isd;
      z[l] *= isd;
    }
    if (set.task == Task::Max) eps = draw_max_location(L, chis.data(), set.nu, rng.uniform());
    const double y = zs[eps] + std::sqrt(set.delta) * rng.normal();
    const double f = attention_forward(set.activation, set.erf_b, L, chi.data(), z.data(),
                                       s.data(), w.data());
    const double fb = bayes_predict(set.task, set.nu, L, chis.data(), zs.data(), s.data());
    const double e = (y - f) * (y - f), eb = (y - fb) * (y - fb);
    acc += e;
    accb += eb;
    acc2 += e * e;
    accb2 += eb * eb;
  }
  *mse = acc / n;
  *mse_bayes = accb / n;
  // per-sample variances of the squared errors (for the pooled standard error)
  *var = n > 1 ? std::max(0.0, (acc2 - acc * acc / n) / (n - 1)) : 0.0;
  *var_bayes = n > 1 ? std::max(0.0, (accb2 - accb * accb / n) / (n - 1)) : 0.0;
}

void fill_overlaps(const Teacher& T, const std::vector<double>& k, const std::vector<double>& v,
                   SeedResult& r) {
  const double D = T.D;
  r.m_k = dot(k, T.kstar) / D;
  r.q_k = dot(k, k) / D;
  r.m_v = dot(v, T.vstar) / D;
  r.q_v = dot(v, v) / D;
  r.kv_star = dot(k, T.vstar) / D;
  r.vk_star = dot(v, T.kstar) / D;
  r.kv = dot(k, v) / D;
}

class ErmFunction : public ceres::FirstOrderFunction {
 public:
  ErmFunction(const SimSetting& set, const Dataset& data, double lambda)
      : set_(set), data_(data), lambda_(lambda) {}
  bool Evaluate(const double* parameters, double* cost, double* gradient) const override {
    check_interrupt();
    *cost = empirical_risk(set_, data_, lambda_, lambda_, parameters, gradient);
    return std::isfinite(*cost);
  }
  int NumParameters() const override { return 2 * data_.D; }

 private:
  const SimSetting& set_;
  const Dataset& data_;
  double lambda_;
};

}  // namespace

void check_setting(const SimSetting& set) {
  if (set.lengths.empty()) throw std::invalid_argument("the set of lengths L is empty");
  for (int L : set.lengths)
    if (L < 1) throw std::invalid_argument("every length L must be >= 1");
  if (std::isnan(set.nu) || set.nu < 0) throw std::invalid_argument("nu must be >= 0");
  if (std::isinf(set.nu) && set.task == Task::Spiked)
    throw std::invalid_argument("nu = inf is only allowed for max-SLR");
  if (!std::isfinite(set.delta) || set.delta < 0)
    throw std::invalid_argument("delta (noise variance) must be finite and >= 0");
  if (!std::isfinite(set.erf_b)) throw std::invalid_argument("erf offset b must be finite");
}

Teacher draw_teacher(int D, std::uint64_t seed, std::uint64_t index) {
  if (D < 2) throw std::invalid_argument("D must be >= 2");
  Teacher T;
  T.D = D;
  auto rng = make_rng(seed, index, kTeacher);
  T.kstar.resize(D);
  T.vstar.resize(D);
  for (double& x : T.kstar) x = rng.normal();
  for (double& x : T.vstar) x = rng.normal();
  orthogonalise(T.vstar, {&T.kstar});
  scale_to_norm(T.kstar, std::sqrt(double(D)));
  scale_to_norm(T.vstar, std::sqrt(double(D)));
  return T;
}

Dataset draw_dataset(const SimSetting& set, const Teacher& T, int N, std::uint64_t seed,
                     std::uint64_t index, std::uint64_t purpose) {
  check_setting(set);
  const int D = T.D;
  const double isd = 1.0 / std::sqrt(double(D));
  auto rng = make_rng(seed, index, purpose);
  Dataset data;
  data.D = D;
  data.N = N;
  data.offset.resize(N + 1);
  data.offset[0] = 0;
  std::vector<int> len(N);
  for (int mu = 0; mu < N; ++mu) {
    len[mu] = set.lengths[rng.below(static_cast<int>(set.lengths.size()))];
    data.offset[mu + 1] = data.offset[mu] + len[mu];
  }
  data.X.resize(static_cast<std::size_t>(data.offset[N]) * D);
  data.y.resize(N);
  data.eps.resize(N);
  const int Lmax = max_length(set);
  std::vector<double> chis(Lmax), zs(Lmax);
  for (int mu = 0; mu < N; ++mu) {
    const int L = len[mu];
    float* x0 = data.X.data() + static_cast<std::size_t>(data.offset[mu]) * D;
    for (std::size_t i = 0; i < static_cast<std::size_t>(L) * D; ++i) x0[i] = float(rng.normal());
    int eps = 0;
    if (set.task == Task::Spiked) {  // §1.5: add (sqrt(nu)/sqrt(D)) k* to x_{eps*}
      eps = rng.below(L);
      const double sp = std::sqrt(set.nu) * isd;
      float* xr = x0 + static_cast<std::size_t>(eps) * D;
      for (int i = 0; i < D; ++i) xr[i] = float(double(xr[i]) + sp * T.kstar[i]);
    }
    for (int l = 0; l < L; ++l) {  // (S1) from the stored rows
      dot2(x0 + static_cast<std::size_t>(l) * D, T.kstar.data(), T.vstar.data(), D, &chis[l],
           &zs[l]);
      chis[l] *= isd;
      zs[l] *= isd;
    }
    if (set.task == Task::Max) eps = draw_max_location(L, chis.data(), set.nu, rng.uniform());
    data.eps[mu] = eps;
    data.y[mu] = zs[eps] + std::sqrt(set.delta) * rng.normal();  // (S4)
  }
  return data;
}

// Objective and gradient over samples in parallel with a deterministic reduction: the samples are
// cut into a fixed number of contiguous blocks (depending on N only, never on the thread count),
// each block sums its cost and gradient in sample order into its own buffer, and the block
// partials are added in block order. Any number of threads gives the same bits. Inside an
// already parallel region (seeds in parallel) the loop runs on the calling thread.
namespace {
constexpr int kSamplesPerBlock = 256;
double block_risk(const SimSetting& set, const Dataset& data, const double* k, const double* v,
                  int mu0, int mu1, double* gk, double* gv) {
  const int D = data.D;
  const double isd = 1.0 / std::sqrt(double(D));
  const int Lmax = max_length(set);
  double chi[64], z[64], s[64], w[64];
  std::vector<double> big;
  double *pchi = chi, *pz = z, *ps = s, *pw = w;
  if (Lmax > 64) {
    big.resize(4 * static_cast<std::size_t>(Lmax));
    pchi = big.data();
    pz = pchi + Lmax;
    ps = pz + Lmax;
    pw = ps + Lmax;
  }
  double cost = 0;
  for (int mu = mu0; mu < mu1; ++mu) {
    const int L = data.length(mu);
    const int t0 = data.offset[mu];
    for (int l = 0; l < L; ++l) {
      dot2(data.row(t0 + l), k, v, D, &pchi[l], &pz[l]);
      pchi[l] *= isd;
      pz[l] *= isd;
    }
    const double f = attention_forward(set.activation, set.erf_b, L, pchi, pz, ps, pw);
    const double r = data.y[mu] - f;
    cost += 0.5 * r * r;
    if (gk)  // §6: grad_k = -sum r w_l x_l/sqrt(D), grad_v = -sum r s_l x_l/sqrt(D)
      for (int l = 0; l < L; ++l) axpy2(data.row(t0 + l), -r * pw[l] * isd, -r * ps[l] * isd, D, gk, gv);
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
#pragma omp parallel for schedule(static) if (!omp_in_parallel())
    for (int b = 0; b < nblocks; ++b) {
      const int mu0 = b * kSamplesPerBlock, mu1 = std::min(data.N, mu0 + kSamplesPerBlock);
      double* g = grad ? &bgrad[static_cast<std::size_t>(b) * 2 * D] : nullptr;
      bcost[b] = block_risk(set, data, k, v, mu0, mu1, g, g ? g + D : nullptr);
    }
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

Init parse_init(const std::string& s) {
  if (s == "informed") return Init::Informed;
  if (s == "random") return Init::Random;
  if (s == "overlaps") return Init::Overlaps;
  throw std::invalid_argument("unknown init '" + s + "' (expected informed or random)");
}
std::string to_string(Init i) {
  return i == Init::Informed ? "informed" : (i == Init::Random ? "random" : "overlaps");
}

double default_c0(const SimSetting& set) {
  switch (set.activation) {
    case Activation::Softmax:
    case Activation::Softplus:
      return set.task == Task::Spiked ? std::sqrt(set.nu) : std::min(set.nu, 3.0);
    case Activation::Linear:
    case Activation::Erf:
      return 0.5;
  }
  return 0.5;
}

// k = m_k k* + sqrt(q_k - m_k^2) u_k, v = m_v v* + sqrt(q_v - m_v^2) u_v, with u_k, u_v orthogonal
// to each other and to k*, v*, |u|^2 = D (§6 "Population module").
void prescribed_kv(const Teacher& T, int D, double m_k, double q_k, double m_v, double q_v,
                   std::uint64_t seed, std::uint64_t index, std::vector<double>& k,
                   std::vector<double>& v) {
  auto rng = make_rng(seed, index, kDirections);
  std::vector<double> uk(D), uv(D);
  for (double& x : uk) x = rng.normal();
  for (double& x : uv) x = rng.normal();
  orthogonalise(uk, {&T.kstar, &T.vstar});
  orthogonalise(uv, {&T.kstar, &T.vstar, &uk});
  scale_to_norm(uk, std::sqrt(double(D)));
  scale_to_norm(uv, std::sqrt(double(D)));
  const double ak = std::sqrt(std::max(0.0, q_k - m_k * m_k));
  const double av = std::sqrt(std::max(0.0, q_v - m_v * m_v));
  k.assign(D, 0.0);
  v.assign(D, 0.0);
  for (int i = 0; i < D; ++i) {
    k[i] = m_k * T.kstar[i] + ak * uk[i];
    v[i] = m_v * T.vstar[i] + av * uv[i];
  }
}

SeedResult run_erm_seed(const SimSetting& set, int D, double alpha, const ErmOptions& opt,
                        std::uint64_t seed, std::uint64_t index) {
  check_setting(set);
  if (!(alpha > 0) || !std::isfinite(alpha)) throw std::invalid_argument("alpha must be > 0");
  if (!(opt.lambda >= 0) || !std::isfinite(opt.lambda))
    throw std::invalid_argument("lambda must be >= 0");
  const auto t0 = std::chrono::steady_clock::now();
  const Teacher T = draw_teacher(D, seed, index);
  const int N = std::max(1, static_cast<int>(std::lround(alpha * D)));
  const Dataset data = draw_dataset(set, T, N, seed, index, kTrain);

  std::vector<double> theta(2 * static_cast<std::size_t>(D));
  if (opt.init == Init::Informed) {  // §6: k = c0 k*, v = v*
    const double c0 = opt.c0 >= 0 ? opt.c0 : default_c0(set);
    for (int i = 0; i < D; ++i) {
      theta[i] = c0 * T.kstar[i];
      theta[D + i] = T.vstar[i];
    }
  } else if (opt.init == Init::Overlaps) {
    if (!(opt.init_q_k >= opt.init_m_k * opt.init_m_k) || !(opt.init_q_v >= opt.init_m_v * opt.init_m_v))
      throw std::invalid_argument("--init overlaps needs q_k >= m_k^2 and q_v >= m_v^2");
    std::vector<double> k, v;
    prescribed_kv(T, D, opt.init_m_k, opt.init_q_k, opt.init_m_v, opt.init_q_v, seed, index, k, v);
    std::copy(k.begin(), k.end(), theta.begin());
    std::copy(v.begin(), v.end(), theta.begin() + D);
  } else {  // §6: entries N(0, 0.01)
    auto rng = make_rng(seed, index, kInit);
    for (double& x : theta) x = opt.init_sd * rng.normal();
  }

  const auto minimise = [&](std::vector<double>& th) {
    ceres::GradientProblemSolver::Options options;
    options.line_search_direction_type = ceres::LBFGS;
    options.max_lbfgs_rank = opt.lbfgs_rank;
    options.max_num_iterations = opt.max_iterations;
    options.function_tolerance = opt.function_tolerance;
    options.gradient_tolerance = opt.gradient_tolerance;
    options.parameter_tolerance = opt.parameter_tolerance;
    options.logging_type = ceres::SILENT;
    options.minimizer_progress_to_stdout = false;
    ceres::GradientProblem problem(new ErmFunction(set, data, opt.lambda));
    ceres::GradientProblemSolver::Summary summary;
    ceres::Solve(options, problem, th.data(), &summary);
    return summary;
  };
  const ceres::GradientProblemSolver::Summary summary = minimise(theta);

  SeedResult r;
  std::vector<double> k(theta.begin(), theta.begin() + D), v(theta.begin() + D, theta.end());
  fill_overlaps(T, k, v, r);
  r.iterations = static_cast<int>(summary.iterations.size()) - 1;
  r.converged = summary.termination_type == ceres::CONVERGENCE;
  r.termination = summary.message;
  r.train_loss = empirical_risk(set, data, opt.lambda, opt.lambda, theta.data(), nullptr) / N;
  r.train_mse = mean_squared_error(set, data, k.data(), v.data());
  if (opt.restarts > 1) {
    // Further minima of the same training set from independent random starts (§6 start law).
    std::vector<std::vector<double>> minima{theta};
    double lo = r.train_loss, hi = r.train_loss;
    int lowest = 0, lowest_iterations = r.iterations;
    bool lowest_converged = r.converged;
    for (int a = 1; a < opt.restarts; ++a) {
      std::vector<double> th(theta.size());
      auto rng = make_rng(seed, index, kRestart + static_cast<std::uint64_t>(a));
      for (double& x : th) x = opt.init_sd * rng.normal();
      const ceres::GradientProblemSolver::Summary sa = minimise(th);
      const double loss = empirical_risk(set, data, opt.lambda, opt.lambda, th.data(), nullptr) / N;
      if (loss < lo - 1e-12 * std::abs(lo)) {
        lowest = a;
        lowest_iterations = static_cast<int>(sa.iterations.size()) - 1;
        lowest_converged = sa.termination_type == ceres::CONVERGENCE;
      }
      lo = std::min(lo, loss);
      hi = std::max(hi, loss);
      minima.push_back(std::move(th));
    }
    const auto dot = [D](const double* a, const double* b) {
      double t = 0.0;
      for (int i = 0; i < D; ++i) t += a[i] * b[i];
      return t / D;
    };
    const int R = opt.restarts;
    int pairs = 0;
    for (int a = 0; a < R; ++a) {
      r.q_k_aa += dot(minima[a].data(), minima[a].data()) / R;
      r.q_v_aa += dot(minima[a].data() + D, minima[a].data() + D) / R;
      for (int b = a + 1; b < R; ++b) {
        r.q_k_ab += dot(minima[a].data(), minima[b].data());
        r.q_v_ab += dot(minima[a].data() + D, minima[b].data() + D);
        ++pairs;
      }
    }
    r.q_k_ab /= pairs;
    r.q_v_ab /= pairs;
    r.loss_spread = hi - lo;
    r.init_lowest = lowest == 0 ? 1.0 : 0.0;
    if (opt.keep_lowest && lowest != 0) {  // report the lowest-loss minimiser instead
      theta = minima[lowest];
      k.assign(theta.begin(), theta.begin() + D);
      v.assign(theta.begin() + D, theta.end());
      fill_overlaps(T, k, v, r);
      r.train_loss = lo;
      r.train_mse = mean_squared_error(set, data, k.data(), v.data());
      r.iterations = lowest_iterations;
      r.converged = lowest_converged;
    }
  }
  test_errors(set, T, k, v, opt.n_test, seed, index, &r.test_mse, &r.e_bayes, &r.test_var,
              &r.bayes_var);
  r.n_test = opt.n_test;
  r.e_test = r.test_mse - set.delta;
  r.e_bayes -= set.delta;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

SeedResult run_population_seed(const SimSetting& set, int D, double m_k, double q_k, double m_v,
                               double q_v, int n_test, std::uint64_t seed, std::uint64_t index) {
  check_setting(set);
  if (D < 4) throw std::invalid_argument("population mode needs D >= 4");
  if (!(q_k >= m_k * m_k * (1 - 1e-12)) || !(q_v >= m_v * m_v * (1 - 1e-12)))
    throw std::invalid_argument("population mode needs q_k >= m_k^2 and q_v >= m_v^2");
  if (n_test < 1) throw std::invalid_argument("n_test must be >= 1");
  const auto t0 = std::chrono::steady_clock::now();
  const Teacher T = draw_teacher(D, seed, index);
  std::vector<double> k(D), v(D);
  prescribed_kv(T, D, m_k, q_k, m_v, q_v, seed, index, k, v);
  SeedResult r;
  fill_overlaps(T, k, v, r);
  test_errors(set, T, k, v, n_test, seed, index, &r.test_mse, &r.e_bayes, &r.test_var,
              &r.bayes_var);
  r.n_test = n_test;
  r.e_test = r.test_mse - set.delta;
  r.e_bayes -= set.delta;
  r.converged = true;
  r.termination = "population";
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

Summary summarize_seeds(std::vector<SeedResult> results) {
  Summary S;
  S.seeds = static_cast<int>(results.size());
  auto stat = [&](auto get) {
    std::vector<double> v;
    for (const auto& r : results) v.push_back(get(r));
    return summarize(v);
  };
  S.m_k = stat([](const SeedResult& r) { return r.m_k; });
  S.q_k = stat([](const SeedResult& r) { return r.q_k; });
  S.m_v = stat([](const SeedResult& r) { return r.m_v; });
  S.q_v = stat([](const SeedResult& r) { return r.q_v; });
  S.kv_star = stat([](const SeedResult& r) { return r.kv_star; });
  S.vk_star = stat([](const SeedResult& r) { return r.vk_star; });
  S.kv = stat([](const SeedResult& r) { return r.kv; });
  S.train_mse = stat([](const SeedResult& r) { return r.train_mse; });
  S.train_loss = stat([](const SeedResult& r) { return r.train_loss; });
  S.test_mse = stat([](const SeedResult& r) { return r.test_mse; });
  S.e_test = stat([](const SeedResult& r) { return r.e_test; });
  S.e_bayes = stat([](const SeedResult& r) { return r.e_bayes; });
  S.iterations = stat([](const SeedResult& r) { return double(r.iterations); });
  S.seconds = stat([](const SeedResult& r) { return r.seconds; });
  S.q_k_ab = stat([](const SeedResult& r) { return r.q_k_ab; });
  S.q_v_ab = stat([](const SeedResult& r) { return r.q_v_ab; });
  S.q_k_aa = stat([](const SeedResult& r) { return r.q_k_aa; });
  S.q_v_aa = stat([](const SeedResult& r) { return r.q_v_aa; });
  S.loss_spread = stat([](const SeedResult& r) { return r.loss_spread; });
  S.init_lowest = stat([](const SeedResult& r) { return r.init_lowest; });
  for (const auto& r : results) S.converged += r.converged ? 1 : 0;
  // Pooled standard errors: all seeds' test samples together (valid when the risk does not
  // depend on the teacher draw, as in the population mode, where (S6) is exact).
  double vt = 0, vb = 0, nt = 0;
  for (const auto& r : results) {
    vt += r.test_var * r.n_test;
    vb += r.bayes_var * r.n_test;
    nt += r.n_test;
  }
  if (nt > 0) {
    S.e_test_pooled_se = std::sqrt(vt) / nt;
    S.e_bayes_pooled_se = std::sqrt(vb) / nt;
  }
  S.per_seed = std::move(results);
  return S;
}

namespace {
template <class F>
Summary run_seeds(int n_seeds, F&& one) {
  if (n_seeds < 1) throw std::invalid_argument("the number of seeds must be >= 1");
  std::vector<SeedResult> res(n_seeds);
  std::vector<std::string> errors(n_seeds);
#pragma omp parallel for schedule(dynamic, 1)
  for (int i = 0; i < n_seeds; ++i) {
    try {
      res[i] = one(i);
    } catch (const std::exception& e) {
      errors[i] = e.what();
    }
  }
  for (const auto& e : errors)
    if (!e.empty()) throw std::invalid_argument(e);
  return summarize_seeds(std::move(res));
}
}  // namespace

Summary run_erm(const SimSetting& set, int D, double alpha, const ErmOptions& opt, int n_seeds,
                std::uint64_t seed) {
  check_setting(set);
  return run_seeds(n_seeds, [&](int i) { return run_erm_seed(set, D, alpha, opt, seed, i); });
}

Summary run_population(const SimSetting& set, int D, double m_k, double q_k, double m_v,
                       double q_v, int n_test, int n_seeds, std::uint64_t seed) {
  check_setting(set);
  return run_seeds(n_seeds, [&](int i) {
    return run_population_seed(set, D, m_k, q_k, m_v, q_v, n_test, seed, i);
  });
}

}  // namespace mc
}  // namespace slr
}  // namespace saddle
