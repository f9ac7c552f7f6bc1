// Tests of the SLR simulation's data (mc/slr_erm_data.*; docs/equations/slr_population.md §1.5, (S4),
// (S9), §3.6): teacher, training and test samples against their laws (Monte Carlo means within 4
// s.e.), and the two-pass parallel draws against an independent one-pass sequential draw.
#include <catch2/catch.hpp>

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "integrators/estimate.hpp"
#include "integrators/quadrature.hpp"
#include "integrators/special.hpp"
#include "mc/slr_erm_data.hpp"
#include "mc/slr_sample.hpp"

using namespace saddle;
using namespace saddle::slr;
using namespace saddle::slr::mc;

namespace {

// Teacher fields chi*, z* of sample mu from the stored rows (S1).
void teacher_fields(const Teacher& T, const Dataset& d, int mu, std::vector<double>& chis,
                    std::vector<double>& zs) {
  const int L = d.length(mu);
  chis.assign(L, 0.0);
  zs.assign(L, 0.0);
  for (int l = 0; l < L; ++l) {
    const float* x = d.row(d.offset[mu] + l);
    for (int i = 0; i < d.D; ++i) {
      chis[l] += x[i] * T.kstar[i];
      zs[l] += x[i] * T.vstar[i];
    }
    chis[l] /= std::sqrt(double(d.D));
    zs[l] /= std::sqrt(double(d.D));
  }
}


// §3.6: Bayes at L = 2, 2 E[sig(u) sig(-u)], u ~ N(mean, var), by 200-node Gauss-Hermite.
double bayes_L2(double mean, double var) {
  return 2.0 * gauss_expect([](double u) { return sigmoid(u) * sigmoid(-u); }, mean, var, 200);
}

}  // namespace

TEST_CASE("teacher: orthogonal directions with norm sqrt(D)", "[mc][slr]") {
  const Teacher T = draw_teacher(101, 1, 5);
  double kk = 0, vv = 0, kv = 0;
  for (int i = 0; i < 101; ++i) {
    kk += T.kstar[i] * T.kstar[i];
    vv += T.vstar[i] * T.vstar[i];
    kv += T.kstar[i] * T.vstar[i];
  }
  CHECK(kk == Approx(101.0).epsilon(1e-12));
  CHECK(vv == Approx(101.0).epsilon(1e-12));
  CHECK(std::abs(kv) < 1e-10);
}

TEST_CASE("sampling (§1.5): spiked and max-SLR teacher fields and labels", "[mc][slr]") {
  const int D = 40, N = 6000;
  const Teacher T = draw_teacher(D, 11, 0);
  std::vector<double> chis, zs;
  SECTION("spiked: chi*_eps ~ N(sqrt(nu), 1), other chi*_l ~ N(0,1), var y = 1 + Delta") {
    SimSetting set;
    set.task = Task::Spiked;
    set.lengths = {3};
    set.nu = 2.0;
    set.delta = 0.5;
    const Dataset d = draw_dataset(set, T, N, 11, 0, 2);
    std::vector<double> at, other, y2, resid;
    for (int mu = 0; mu < N; ++mu) {
      teacher_fields(T, d, mu, chis, zs);
      for (int l = 0; l < 3; ++l) (l == d.eps[mu] ? at : other).push_back(chis[l]);
      y2.push_back(d.y[mu] * d.y[mu]);
      resid.push_back(d.y[mu] - zs[d.eps[mu]]);
    }
    // bars: 4 s.e. of each Monte Carlo mean (s.e. ~ 0.013, 0.009, 0.02)
    auto a = summarize(at), o = summarize(other), y = summarize(y2);
    CHECK(std::abs(a.mean - std::sqrt(2.0)) < 4 * a.se);
    CHECK(std::abs(o.mean) < 4 * o.se);
    CHECK(std::abs(y.mean - 1.5) < 4 * y.se);
    auto r = summarize(resid);
    CHECK(std::abs(r.mean) < 4 * r.se);  // label noise has mean 0 ...
    std::vector<double> r2;
    for (double x : resid) r2.push_back(x * x);
    auto rr = summarize(r2);
    CHECK(std::abs(rr.mean - 0.5) < 4 * rr.se);  // ... and variance Delta (S4)
  }
  SECTION("max, nu = inf: eps* = argmax, E chi*_eps = E max = 1/sqrt(pi) (L=2), 3/(2 sqrt(pi)) (L=3)") {
    for (int L : {2, 3}) {
      SimSetting set;
      set.task = Task::Max;
      set.lengths = {L};
      set.nu = std::numeric_limits<double>::infinity();
      const Dataset d = draw_dataset(set, T, N, 11, L, 2);
      std::vector<double> at;
      for (int mu = 0; mu < N; ++mu) {
        teacher_fields(T, d, mu, chis, zs);
        REQUIRE(d.eps[mu] == std::max_element(chis.begin(), chis.end()) - chis.begin());
        at.push_back(chis[d.eps[mu]]);
      }
      const double want = L == 2 ? 1.0 / std::sqrt(kPi) : 1.5 / std::sqrt(kPi);
      auto a = summarize(at);
      CHECK(std::abs(a.mean - want) < 4 * a.se);
    }
  }
  SECTION("max, finite nu: E chi*_eps = nu E_Bayes (Stein, S11); L = 2 Bayes integral") {
    SimSetting set;
    set.task = Task::Max;
    set.lengths = {2};
    set.nu = 1.5;
    const Dataset d = draw_dataset(set, T, 4 * N, 11, 9, 2);
    std::vector<double> at;
    for (int mu = 0; mu < d.N; ++mu) {
      teacher_fields(T, d, mu, chis, zs);
      at.push_back(chis[d.eps[mu]]);
    }
    const double want = set.nu * bayes_L2(0.0, 2 * set.nu * set.nu);
    auto a = summarize(at);
    CHECK(std::abs(a.mean - want) < 4 * a.se);
  }
}

TEST_CASE("token entries are N(0,1) (ziggurat sampler): moments and tail probabilities",
          "[mc][slr]") {
  SimSetting set;
  set.task = Task::Spiked;
  set.lengths = {2};
  set.nu = 0.0;  // no spike: every stored entry is an independent N(0,1)
  const Teacher T = draw_teacher(1000, 2, 0);
  const Dataset d = draw_dataset(set, T, 2000, 2, 0, 2);
  const double n = double(d.X.size());  // 4e6
  double m1 = 0, m2 = 0, m4 = 0;
  const double cuts[] = {0.5, 1.0, 2.0, 3.0, 3.442619855899, 4.0};
  double cnt[6] = {0};
  for (float f : d.X) {
    const double x = f;
    m1 += x;
    m2 += x * x;
    m4 += x * x * x * x;
    for (int j = 0; j < 6; ++j) cnt[j] += std::abs(x) > cuts[j];
  }
  m1 /= n;
  m2 /= n;
  m4 /= n;
  // bars: 4 s.e.: sd(x) = 1, sd(x^2) = sqrt(2), sd(x^4) = sqrt(105 - 9).
  CHECK(std::abs(m1) < 4 / std::sqrt(n));
  CHECK(std::abs(m2 - 1) < 4 * std::sqrt(2.0 / n));
  CHECK(std::abs(m4 - 3) < 4 * std::sqrt(96.0 / n));
  for (int j = 0; j < 6; ++j) {
    const double p = 2 * norm_cdf(-cuts[j]);  // P(|x| > c)
    INFO("cut " << cuts[j]);
    CHECK(std::abs(cnt[j] / n - p) < 4 * std::sqrt(p * (1 - p) / n));
  }
}


namespace {

// One sequential pass of the §1.5 recipe written out independently of mc/slr_erm_data.cpp (plain
// loops): the training set of the stream (seed, index, purpose), lengths first.
struct RefData {
  std::vector<float> X;
  std::vector<int> len, eps;
  std::vector<double> y;
};
RefData reference_dataset(const SimSetting& set, const Teacher& T, int N, std::uint64_t seed,
                          std::uint64_t index, std::uint64_t purpose) {
  const int D = T.D;
  const double isd = 1.0 / std::sqrt(double(D));
  saddle::Rng rng(seed, index, purpose);
  RefData r;
  for (int mu = 0; mu < N; ++mu)
    r.len.push_back(set.lengths[rng.below(static_cast<int>(set.lengths.size()))]);
  for (int mu = 0; mu < N; ++mu) {
    const int L = r.len[mu];
    std::vector<float> x(static_cast<std::size_t>(L) * D);
    for (float& e : x) e = float(rng.normal());
    int eps = 0;
    if (set.task == Task::Spiked) {
      eps = rng.below(L);
      for (int i = 0; i < D; ++i)
        x[eps * D + i] = float(double(x[eps * D + i]) + std::sqrt(set.nu) * isd * T.kstar[i]);
    }
    std::vector<double> chis(L, 0.0), zs(L, 0.0);
    for (int l = 0; l < L; ++l) {
      for (int i = 0; i < D; ++i) {
        chis[l] += double(x[l * D + i]) * T.kstar[i];
        zs[l] += double(x[l * D + i]) * T.vstar[i];
      }
      chis[l] *= isd;
      zs[l] *= isd;
    }
    if (set.task == Task::Max) eps = draw_max_location(L, chis.data(), set.nu, rng.uniform());
    r.eps.push_back(eps);
    r.y.push_back(zs[eps] + std::sqrt(set.delta) * rng.normal());
    r.X.insert(r.X.end(), x.begin(), x.end());
  }
  return r;
}

}  // namespace

TEST_CASE("two-pass parallel draws equal one sequential pass, for 1 and 2 threads", "[mc][slr]") {
  const int D = 12, N = 700;  // N spans three chunks of the parallel pass
  const Teacher T = draw_teacher(D, 4, 1);
  const int saved = omp_get_max_threads();
  for (Task task : {Task::Spiked, Task::Max}) {
    SimSetting set;
    set.task = task;
    set.lengths = {1, 2, 4};
    set.nu = 1.5;
    set.delta = 0.3;
    const RefData ref = reference_dataset(set, T, N, 4, 1, 2);
    for (int threads : {1, 2}) {
      omp_set_num_threads(threads);
      const Dataset d = draw_dataset(set, T, N, 4, 1, 2);
      INFO((task == Task::Spiked ? "spiked" : "max") << " threads " << threads);
      REQUIRE(d.X.size() == ref.X.size());
      CHECK(d.X == ref.X);  // the same float entries, bit for bit
      CHECK(d.eps == ref.eps);
      for (int mu = 0; mu < N; ++mu) {
        CHECK(d.length(mu) == ref.len[mu]);
        CHECK(d.y[mu] == Approx(ref.y[mu]).epsilon(1e-12).margin(1e-12));
      }
    }
  }
  omp_set_num_threads(saved);
}

TEST_CASE("test errors: planned chunks equal one sequential pass; same bits for 1 and 2 threads",
          "[mc][slr]") {
  const int D = 10, n = 777;  // several chunks, the last one short
  const Teacher T = draw_teacher(D, 8, 3);
  SimSetting set;
  set.task = Task::Max;
  set.lengths = {2, 3};
  set.nu = 2.0;
  set.delta = 0.2;
  set.activation = Activation::Linear;
  std::vector<double> k(D), v(D);
  for (int i = 0; i < D; ++i) {
    k[i] = 0.8 * T.kstar[i] + 0.1 * std::cos(i);
    v[i] = 0.6 * T.vstar[i] - 0.2 * std::sin(i);
  }
  // Sequential reference: the stream (seed, index, kTest), per sample its length then the
  // sample; linear attention f = sum_l (1 + chi_l) z_l; Bayes p = softmax(nu chi*).
  saddle::Rng rng(8, 3, kTest);
  const double isd = 1.0 / std::sqrt(double(D));
  double sum = 0, sumb = 0;
  for (int mu = 0; mu < n; ++mu) {
    const int L = set.lengths[rng.below(2)];
    std::vector<float> x(static_cast<std::size_t>(L) * D);
    for (float& e : x) e = float(rng.normal());
    std::vector<double> chis(L, 0.0), zs(L, 0.0), chi(L, 0.0), z(L, 0.0), p(L);
    for (int l = 0; l < L; ++l) {
      for (int i = 0; i < D; ++i) {
        chis[l] += double(x[l * D + i]) * T.kstar[i] * isd;
        zs[l] += double(x[l * D + i]) * T.vstar[i] * isd;
        chi[l] += double(x[l * D + i]) * k[i] * isd;
        z[l] += double(x[l * D + i]) * v[i] * isd;
      }
    }
    const int eps = draw_max_location(L, chis.data(), set.nu, rng.uniform());
    const double y = zs[eps] + std::sqrt(set.delta) * rng.normal();
    double f = 0, fb = 0, norm = 0;
    for (int l = 0; l < L; ++l) {
      f += (1 + chi[l]) * z[l];
      p[l] = std::exp(set.nu * chis[l]);
      norm += p[l];
    }
    for (int l = 0; l < L; ++l) fb += p[l] / norm * zs[l];
    sum += (y - f) * (y - f);
    sumb += (y - fb) * (y - fb);
  }
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  const TestErrors a = test_errors(set, T, k, v, plan_test_set(set, D, n, 8, 3));
  omp_set_num_threads(2);
  const TestErrors b = test_errors(set, T, k, v, plan_test_set(set, D, n, 8, 3));
  omp_set_num_threads(saved);
  CHECK(a.mse == Approx(sum / n).epsilon(1e-12));
  CHECK(a.mse_bayes == Approx(sumb / n).epsilon(1e-12));
  CHECK(a.mse == b.mse);
  CHECK(a.mse_bayes == b.mse_bayes);
  CHECK(a.var == b.var);
  CHECK(a.var_bayes == b.var_bayes);
}

TEST_CASE("random stream: fill_normals and skip_normals draw exactly what normal() draws",
          "[mc][slr]") {
  for (std::uint64_t s = 0; s < 50; ++s) {
    const std::size_t n = 1 + 4099 * s;  // long enough to pass through tails and wedges
    saddle::Rng a(s, 1, 2), b(s, 1, 2), c(s, 1, 2);
    std::vector<float> f(n);
    b.fill_normals(f.data(), n);
    c.skip_normals(n);
    bool same = true;
    for (std::size_t k = 0; k < n; ++k) same = same && float(a.normal()) == f[k];
    CHECK(same);
    const std::uint64_t next = a.next();
    CHECK(b.next() == next);
    CHECK(c.next() == next);
  }
}
