// Data of the direct SLR simulation: see mc/slr_erm_data.hpp (docs/equations/slr_population.md
// §1.5, (S4), (S9)).
#include "mc/slr_erm_data.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "integrators/special.hpp"
#include "mc/slr_erm_kernels.hpp"
#include "mc/slr_sample.hpp"
#include "solver/parallel.hpp"

namespace saddle {
namespace slr {
namespace mc {

namespace {

// Samples per chunk of the two-pass draws (fixed: the chunks never depend on the thread count).
constexpr int kTrainChunk = 256;
constexpr int kTestChunk = 250;

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
// Gram-Schmidt of a against each vector in `basis`.
void orthogonalise(std::vector<double>& a, const std::vector<const std::vector<double>*>& basis) {
  for (int pass = 0; pass < 2; ++pass)
    for (const auto* b : basis) axpy(-dot(a, *b) / dot(*b, *b), *b, a);
}

// c_nu of (S3), local copy (the mc module does not depend on the population module's sources).
double cnu(Task task, double nu) { return task == Task::Spiked ? std::sqrt(nu) : nu; }

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

// One sample of length L from `rng` (§1.5): its L D token entries into x, eps* and the label;
// chis, zs receive the teacher fields (S1) computed from the stored rows.
int form_sample(const SimSetting& set, const Teacher& T, int L, Rng& rng, float* x, double* chis,
                double* zs, double* y) {
  const int D = T.D;
  const double isd = 1.0 / std::sqrt(double(D));
  rng.fill_normals(x, static_cast<std::size_t>(L) * D);
  int eps = 0;
  if (set.task == Task::Spiked) {  // §1.5: add (sqrt(nu)/sqrt(D)) k* to x_{eps*}
    eps = rng.below(L);
    const double sp = std::sqrt(set.nu) * isd;
    float* xr = x + static_cast<std::size_t>(eps) * D;
    for (int i = 0; i < D; ++i) xr[i] = float(double(xr[i]) + sp * T.kstar[i]);
  }
  for (int l = 0; l < L; ++l) {  // (S1) from the stored rows
    dot2(x + static_cast<std::size_t>(l) * D, T.kstar.data(), T.vstar.data(), D, &chis[l], &zs[l]);
    chis[l] *= isd;
    zs[l] *= isd;
  }
  if (set.task == Task::Max) eps = draw_max_location(L, chis, set.nu, rng.uniform());
  *y = zs[eps] + std::sqrt(set.delta) * rng.normal();  // (S4)
  return eps;
}

// Advances `rng` past one sample of length L: exactly the draws of form_sample.
void skip_sample(const SimSetting& set, int L, int D, Rng& rng) {
  rng.skip_normals(static_cast<std::size_t>(L) * D);
  if (set.task == Task::Spiked)
    (void)rng.below(L);
  else
    (void)rng.uniform();
  (void)rng.normal();
}

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
  Rng rng(seed, index, kTeacher);
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
                     std::uint64_t index, std::uint64_t purpose, bool chunked) {
  check_setting(set);
  if (N < 1) throw std::invalid_argument("a data set needs N >= 1 samples");
  const int D = T.D;
  Rng rng(seed, index, purpose);
  Dataset data;
  data.D = D;
  data.N = N;
  data.offset.resize(N + 1);
  data.offset[0] = 0;
  for (int mu = 0; mu < N; ++mu) {
    const int L = set.lengths[rng.below(static_cast<int>(set.lengths.size()))];
    data.offset[mu + 1] = data.offset[mu] + L;
  }
  data.X.resize(static_cast<std::size_t>(data.offset[N]) * D);
  data.y.resize(N);
  data.eps.resize(N);
  // Pass 1 (sequential): the stream state at the start of every chunk (one chunk: no pass).
  const int chunk = chunked ? kTrainChunk : N;
  const int chunks = (N + chunk - 1) / chunk;
  std::vector<Rng> starts;
  starts.reserve(chunks);
  if (chunks == 1) {
    starts.push_back(rng);
  } else {
    for (int mu = 0; mu < N; ++mu) {
      if (mu % chunk == 0) starts.push_back(rng);
      skip_sample(set, data.length(mu), D, rng);
    }
  }
  // Pass 2 (parallel): the chunks, each from its recorded state.
  const int Lmax = max_length(set);
  parallel_for(static_cast<std::size_t>(chunks), [&](std::size_t c) {
    Rng r = starts[c];
    std::vector<double> chis(Lmax), zs(Lmax);
    const int mu0 = static_cast<int>(c) * chunk, mu1 = std::min(N, mu0 + chunk);
    for (int mu = mu0; mu < mu1; ++mu) {
      float* x0 = data.X.data() + static_cast<std::size_t>(data.offset[mu]) * D;
      data.eps[mu] = form_sample(set, T, data.length(mu), r, x0, chis.data(), zs.data(), &data.y[mu]);
    }
  });
  return data;
}

TestPlan plan_test_set(const SimSetting& set, int D, int n, std::uint64_t seed,
                       std::uint64_t index, bool chunked) {
  check_setting(set);
  if (n < 1) throw std::invalid_argument("n_test must be >= 1");
  TestPlan plan;
  plan.n = n;
  Rng rng(seed, index, kTest);
  if (!chunked || n <= kTestChunk) {  // one chunk from the start of the stream
    plan.chunk = n;
    plan.starts.push_back(rng);
    return plan;
  }
  plan.chunk = kTestChunk;
  plan.starts.reserve((n + kTestChunk - 1) / kTestChunk);
  const int nl = static_cast<int>(set.lengths.size());
  for (int mu = 0; mu < n; ++mu) {
    if (mu % kTestChunk == 0) plan.starts.push_back(rng);
    const int L = set.lengths[rng.below(nl)];
    skip_sample(set, L, D, rng);
  }
  return plan;
}

TestErrors test_errors(const SimSetting& set, const Teacher& T, const std::vector<double>& k,
                       const std::vector<double>& v, const TestPlan& plan) {
  const int D = T.D, Lmax = max_length(set), n = plan.n;
  const double isd = 1.0 / std::sqrt(double(D));
  const int nl = static_cast<int>(set.lengths.size());
  std::vector<double> err(n), err_bayes(n);  // per-sample squared errors, summed in order below
  parallel_for(plan.starts.size(), [&](std::size_t c) {
    Rng rng = plan.starts[c];
    std::vector<float> X(static_cast<std::size_t>(Lmax) * D);
    std::vector<double> chis(Lmax), zs(Lmax), chi(Lmax), z(Lmax), s(Lmax), w(Lmax);
    const int mu0 = static_cast<int>(c) * plan.chunk, mu1 = std::min(n, mu0 + plan.chunk);
    for (int mu = mu0; mu < mu1; ++mu) {
      const int L = set.lengths[rng.below(nl)];
      double y = 0;
      form_sample(set, T, L, rng, X.data(), chis.data(), zs.data(), &y);
      for (int l = 0; l < L; ++l) {
        dot2(X.data() + static_cast<std::size_t>(l) * D, k.data(), v.data(), D, &chi[l], &z[l]);
        chi[l] *= isd;
        z[l] *= isd;
      }
      const double f = attention_forward(set.activation, set.erf_b, L, chi.data(), z.data(),
                                         s.data(), w.data());
      const double fb = bayes_predict(set.task, set.nu, L, chis.data(), zs.data(), s.data());
      err[mu] = (y - f) * (y - f);
      err_bayes[mu] = (y - fb) * (y - fb);
    }
  });
  double acc = 0, accb = 0, acc2 = 0, accb2 = 0;
  for (int mu = 0; mu < n; ++mu) {
    const double e = err[mu], eb = err_bayes[mu];
    acc += e;
    accb += eb;
    acc2 += e * e;
    accb2 += eb * eb;
  }
  TestErrors r;
  r.mse = acc / n;
  r.mse_bayes = accb / n;
  // per-sample variances of the squared errors (for the pooled standard error)
  r.var = n > 1 ? std::max(0.0, (acc2 - acc * acc / n) / (n - 1)) : 0.0;
  r.var_bayes = n > 1 ? std::max(0.0, (accb2 - accb * accb / n) / (n - 1)) : 0.0;
  return r;
}

void prescribed_kv(const Teacher& T, double m_k, double q_k, double m_v, double q_v,
                   std::uint64_t seed, std::uint64_t index, std::vector<double>& k,
                   std::vector<double>& v) {
  const int D = T.D;
  Rng rng(seed, index, kDirections);
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

}  // namespace mc
}  // namespace slr
}  // namespace saddle
