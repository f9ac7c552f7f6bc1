// Tests of the SLR trainer's objective (mc/slr_erm_objective.*; docs/equations/slr_replica.md (S13),
// gradient of §6; predictor (S5) of slr_population.md §2): central finite differences, and the
// same bits for any number of threads.
#include <catch2/catch.hpp>

#include <omp.h>

#include <cmath>
#include <random>

#include "mc/slr_erm_objective.hpp"

using namespace saddle;
using namespace saddle::slr;
using namespace saddle::slr::mc;

TEST_CASE("attention_forward: s and w = J^T z match finite differences for all activations",
          "[mc][slr]") {
  const double chi[3] = {0.3, -1.2, 0.8}, z[3] = {1.1, -0.4, 0.7};
  for (Activation a :
       {Activation::Softmax, Activation::Linear, Activation::Erf, Activation::Softplus}) {
    double s[3], w[3], s2[3], w2[3];
    attention_forward(a, 0.4, 3, chi, z, s, w);
    for (int l = 0; l < 3; ++l) {
      const double h = 1e-6;
      double cp[3] = {chi[0], chi[1], chi[2]}, cm[3] = {chi[0], chi[1], chi[2]};
      cp[l] += h;
      cm[l] -= h;
      const double fp = attention_forward(a, 0.4, 3, cp, z, s2, w2);
      const double fm = attention_forward(a, 0.4, 3, cm, z, s2, w2);
      CHECK(w[l] == Approx((fp - fm) / (2 * h)).margin(1e-8));
    }
    if (a == Activation::Softmax || a == Activation::Softplus)
      CHECK(s[0] + s[1] + s[2] == Approx(1.0).margin(1e-14));
  }
}

TEST_CASE("empirical_risk (S13): analytic gradient matches central differences", "[mc][slr]") {
  const int D = 24;
  for (Activation a :
       {Activation::Softmax, Activation::Linear, Activation::Erf, Activation::Softplus}) {
    for (Task task : {Task::Spiked, Task::Max}) {
      SimSetting set;
      set.task = task;
      set.lengths = {1, 2, 3};
      set.nu = 1.5;
      set.delta = 0.1;
      set.activation = a;
      set.erf_b = -0.3;
      const Teacher T = draw_teacher(D, 7, 0);
      const Dataset d = draw_dataset(set, T, 40, 7, 0, 99);
      std::mt19937_64 rng(3);
      std::normal_distribution<double> g(0.0, 0.7);
      std::vector<double> th(2 * D), grad(2 * D);
      for (double& x : th) x = g(rng);
      empirical_risk(set, d, 0.2, 0.3, th.data(), grad.data());
      double worst = 0;
      for (int i = 0; i < 2 * D; ++i) {
        const double h = 1e-5;
        auto tp = th, tm = th;
        tp[i] += h;
        tm[i] -= h;
        const double fd = (empirical_risk(set, d, 0.2, 0.3, tp.data(), nullptr) -
                           empirical_risk(set, d, 0.2, 0.3, tm.data(), nullptr)) /
                          (2 * h);
        worst = std::max(worst, std::abs(fd - grad[i]) / (1.0 + std::abs(grad[i])));
      }
      INFO(to_string(a) << " " << (task == Task::Spiked ? "spiked" : "max"));
      CHECK(worst < 1e-6);
    }
  }
}


TEST_CASE("empirical_risk: several blocks, the same bits for 1 and 2 threads; plain-loop value",
          "[mc][slr]") {
  const int D = 16, N = 1000;  // four blocks of 256 samples
  SimSetting set;
  set.task = Task::Spiked;
  set.lengths = {3};
  set.nu = 2.0;
  set.activation = Activation::Softmax;
  const Teacher T = draw_teacher(D, 2, 0);
  const Dataset d = draw_dataset(set, T, N, 2, 0, 2);
  std::vector<double> th(2 * D);
  for (int i = 0; i < D; ++i) {
    th[i] = 1.2 * T.kstar[i];
    th[D + i] = 0.9 * T.vstar[i];
  }
  std::vector<double> g1(2 * D), g2(2 * D);
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
  const double r1 = empirical_risk(set, d, 0.1, 0.2, th.data(), g1.data());
  omp_set_num_threads(2);
  const double r2 = empirical_risk(set, d, 0.1, 0.2, th.data(), g2.data());
  omp_set_num_threads(saved);
  CHECK(r1 == r2);
  CHECK(g1 == g2);
  // (S13) with plain loops: softmax attention, ridge terms.
  const double isd = 1.0 / std::sqrt(double(D));
  double ref = 0;
  for (int mu = 0; mu < N; ++mu) {
    double chi[3] = {0, 0, 0}, z[3] = {0, 0, 0}, mx = -1e300, nrm = 0, f = 0;
    for (int l = 0; l < 3; ++l) {
      for (int i = 0; i < D; ++i) {
        chi[l] += d.row(d.offset[mu] + l)[i] * th[i] * isd;
        z[l] += d.row(d.offset[mu] + l)[i] * th[D + i] * isd;
      }
      mx = std::max(mx, chi[l]);
    }
    for (int l = 0; l < 3; ++l) nrm += std::exp(chi[l] - mx);
    for (int l = 0; l < 3; ++l) f += std::exp(chi[l] - mx) / nrm * z[l];
    ref += 0.5 * (d.y[mu] - f) * (d.y[mu] - f);
  }
  for (int i = 0; i < D; ++i) ref += 0.05 * th[i] * th[i] + 0.1 * th[D + i] * th[D + i];
  CHECK(r1 == Approx(ref).epsilon(1e-12));
}
