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
