// Tests of the SLR trainer's kernels (mc/slr_erm_kernels.*): the dot products and rank-one
// updates against plain long-double loops, for lengths that do and do not fill the vector width.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>
#include <vector>

#include "mc/slr_erm_kernels.hpp"

using namespace saddle::slr::mc;

TEST_CASE("kernels: dot2 and axpy2 against long-double loops", "[mc][slr]") {
  std::mt19937_64 rng(5);
  std::normal_distribution<double> g(0.0, 1.0);
  for (int D : {1, 3, 7, 8, 9, 16, 31, 1000, 1001}) {
    std::vector<float> x(D);
    std::vector<double> k(D), v(D), gk(D), gv(D);
    for (int i = 0; i < D; ++i) {
      x[i] = float(g(rng));
      k[i] = g(rng);
      v[i] = g(rng);
      gk[i] = g(rng);
      gv[i] = g(rng);
    }
    long double a_ref = 0, b_ref = 0, scale = 0;
    for (int i = 0; i < D; ++i) {
      a_ref += (long double)x[i] * k[i];
      b_ref += (long double)x[i] * v[i];
      scale += std::abs((long double)x[i] * k[i]) + std::abs((long double)x[i] * v[i]);
    }
    double a = 0, b = 0;
    dot2(x.data(), k.data(), v.data(), D, &a, &b);
    INFO("D = " << D);
    // bar: double rounding of a sum of D products, relative to the sum of their magnitudes
    CHECK(std::abs(a - (double)a_ref) <= 1e-15 * D * (double)scale);
    CHECK(std::abs(b - (double)b_ref) <= 1e-15 * D * (double)scale);
    const double ck = 0.37, cv = -1.9;
    std::vector<double> gk2 = gk, gv2 = gv;
    axpy2(x.data(), ck, cv, D, gk2.data(), gv2.data());
    for (int i = 0; i < D; ++i) {
      CHECK(gk2[i] == Approx(gk[i] + ck * (double)x[i]).epsilon(1e-15).margin(1e-15));
      CHECK(gv2[i] == Approx(gv[i] + cv * (double)x[i]).epsilon(1e-15).margin(1e-15));
    }
  }
}

TEST_CASE("kernels: per-sample kernels and every instruction set give the bits of the per-row "
          "AVX2 arithmetic", "[mc][slr]") {
  std::mt19937_64 rng(9);
  std::normal_distribution<double> g(0.0, 1.0);
  const KernelSet best = kernel_set();
  std::vector<KernelSet> sets{KernelSet::Scalar};
  if (best != KernelSet::Scalar) sets.push_back(KernelSet::Avx2);
  if (best == KernelSet::Avx512) sets.push_back(KernelSet::Avx512);
  for (int D : {5, 8, 13, 64, 1001})
    for (int L : {1, 2, 3, 4, 5, 7}) {
      std::vector<float> rows(static_cast<std::size_t>(L) * D);
      std::vector<double> k(D), v(D), g0(D), h0(D), ck(L), cv(L);
      for (float& x : rows) x = float(g(rng));
      for (int i = 0; i < D; ++i) {
        k[i] = g(rng);
        v[i] = g(rng);
        g0[i] = g(rng);
        h0[i] = g(rng);
      }
      for (int l = 0; l < L; ++l) {
        ck[l] = g(rng);
        cv[l] = g(rng);
      }
      // reference: the per-row kernels with the best instruction set
      std::vector<double> a_ref(L), b_ref(L), g_ref = g0, h_ref = h0;
      for (int l = 0; l < L; ++l) {
        dot2(rows.data() + l * D, k.data(), v.data(), D, &a_ref[l], &b_ref[l]);
        axpy2(rows.data() + l * D, ck[l], cv[l], D, g_ref.data(), h_ref.data());
      }
      for (KernelSet s : sets) {
        kernel_set() = s;
        std::vector<double> a(L), b(L), gg = g0, hh = h0;
        sample_dots(rows.data(), L, k.data(), v.data(), D, a.data(), b.data());
        sample_axpy(rows.data(), L, ck.data(), cv.data(), D, gg.data(), hh.data());
        INFO("set " << to_string(s) << " D " << D << " L " << L);
        CHECK(a == a_ref);
        CHECK(b == b_ref);
        CHECK(gg == g_ref);
        CHECK(hh == h_ref);
      }
      kernel_set() = best;
    }
}
