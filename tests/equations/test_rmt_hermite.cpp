// Hermite data of the RMT activations (docs/equations/rmt.md §3) against the closed forms of the spec's table,
// and against independent quadratures (Gauss-Hermite for smooth f, GSL adaptive for kinked f).
#include <catch2/catch.hpp>

#include <cmath>

#include "equations/rmt_hermite.hpp"
#include "integrators/quadrature.hpp"
#include "integrators/special.hpp"

using namespace saddle;
using namespace saddle::rmt;

namespace {
HermiteData H(const char* name) { return hermite_data(parse_activation(name)); }
}  // namespace

TEST_CASE("rmt hermite: closed forms of rmt.md §3", "[rmt][hermite]") {
  const double e = std::exp(1.0);
  SECTION("tanh: a1 + nu = 1 (E[xi tanh] = E[1 - tanh^2]), a1 = 0.6057055096") {
    HermiteData h = H("tanh");
    CHECK(std::abs(h.a0) < 1e-15);
    CHECK(h.a1 + h.nu == Approx(1.0).epsilon(1e-13));
    CHECK(h.a1 == Approx(0.6057055096).epsilon(1e-9));
    CHECK(std::abs(h.a2) < 1e-15);
    CHECK(h.kappa_d == 0.0);
  }
  SECTION("erf: a1 = 2/sqrt(3 pi), nu = (2/pi) arcsin(2/3)") {
    HermiteData h = H("erf");
    CHECK(h.a1 == Approx(2.0 / std::sqrt(3.0 * kPi)).epsilon(1e-13));
    CHECK(h.nu == Approx(2.0 / kPi * std::asin(2.0 / 3.0)).epsilon(1e-13));
    CHECK(h.kappa_d == 0.0);
  }
  SECTION("relu: a0 = 1/sqrt(2pi), a1 = 1/2, a2 = 1/(2 sqrt pi), nu = 1/2 - 1/(2pi), kappa_d = 1") {
    HermiteData h = H("relu");
    CHECK(h.a0 == Approx(1.0 / std::sqrt(2.0 * kPi)).epsilon(1e-13));
    CHECK(h.a1 == Approx(0.5).epsilon(1e-13));
    CHECK(h.a2 == Approx(1.0 / (2.0 * std::sqrt(kPi))).epsilon(1e-13));
    CHECK(h.nu == Approx(0.5 - 1.0 / (2.0 * kPi)).epsilon(1e-13));
    CHECK(h.sigma2 == Approx(0.25 - 1.0 / (2.0 * kPi)).epsilon(1e-12));
    CHECK(h.kappa_d == 1.0);
  }
  SECTION("cos: a0 = e^-1/2, a1 = 0, a2 = -e^-1/2/sqrt 2, nu = (1+e^-2)/2 - e^-1") {
    HermiteData h = H("cos");
    CHECK(h.a0 == Approx(std::exp(-0.5)).epsilon(1e-13));
    CHECK(std::abs(h.a1) < 1e-15);
    CHECK(h.a2 == Approx(-std::exp(-0.5) / std::sqrt(2.0)).epsilon(1e-13));
    CHECK(h.nu == Approx((1.0 + std::exp(-2.0)) / 2.0 - std::exp(-1.0)).epsilon(1e-13));
  }
  SECTION("exp: a0 = a1 = e^1/2, a2 = e^1/2/sqrt 2, nu = e^2 - e, kappa_d = inf") {
    HermiteData h = H("exp");
    CHECK(h.a0 == Approx(std::sqrt(e)).epsilon(1e-13));
    CHECK(h.a1 == Approx(std::sqrt(e)).epsilon(1e-13));
    CHECK(h.a2 == Approx(std::sqrt(e) / std::sqrt(2.0)).epsilon(1e-13));
    CHECK(h.nu == Approx(e * e - e).epsilon(1e-13));
    CHECK(std::isinf(h.kappa_d));
  }
  SECTION("linear: a1 = nu = 1, sigma^2 = 0, kappa_d = 1") {
    HermiteData h = H("linear");
    CHECK(h.a1 == Approx(1.0).epsilon(1e-13));
    CHECK(h.nu == Approx(1.0).epsilon(1e-13));
    CHECK(h.sigma2 < 1e-13);
    CHECK(h.kappa_d == 1.0);
  }
  SECTION("texp:T: closed forms E e^{min(xi,T)} = e^{1/2} Phi(T-1) + e^T (1 - Phi(T))") {
    for (double T : {-1.0, 0.0, 1.0, 3.0}) {
      HermiteData h = H(("texp:" + std::to_string(T)).c_str());
      double a0 = std::exp(0.5) * norm_cdf(T - 1.0) + std::exp(T) * (1.0 - norm_cdf(T));
      // a1 = E[f'] (Stein) = E[e^xi 1{xi < T}] = e^{1/2} Phi(T - 1).
      double a1 = std::exp(0.5) * norm_cdf(T - 1.0);
      double m2 = std::exp(2.0) * norm_cdf(T - 2.0) + std::exp(2.0 * T) * (1.0 - norm_cdf(T));
      CHECK(h.a0 == Approx(a0).epsilon(1e-12));
      CHECK(h.a1 == Approx(a1).epsilon(1e-12));
      CHECK(h.nu == Approx(m2 - a0 * a0).epsilon(1e-11));
      CHECK(h.kappa_d == 0.0);
    }
  }
}

TEST_CASE("rmt hermite: smooth f agree with a 200-node Gauss-Hermite rule", "[rmt][hermite]") {
  for (const char* name : {"tanh", "erf", "sigmoid", "cos", "exp", "linear"}) {
    HermiteData a = H(name), b = hermite_data_gh(parse_activation(name), 200);
    INFO(name);
    CHECK(a.a0 == Approx(b.a0).margin(1e-13).epsilon(1e-12));
    CHECK(a.a1 == Approx(b.a1).margin(1e-13).epsilon(1e-12));
    CHECK(a.a2 == Approx(b.a2).margin(1e-13).epsilon(1e-12));
    CHECK(a.nu == Approx(b.nu).margin(1e-13).epsilon(1e-12));
  }
  // sigmoid: a1 = E[sigmoid'(xi)] by Stein's lemma, integrated adaptively.
  auto r = integrate_adaptive(
      [](double t) { double s = sigmoid(t); return s * (1.0 - s) * norm_pdf(t); }, -INFINITY,
      INFINITY);
  CHECK(H("sigmoid").a1 == Approx(r.value).epsilon(1e-11));
}

TEST_CASE("rmt hermite: parsing", "[rmt][hermite]") {
  CHECK(parse_activations("tanh,relu,texp:2.5").size() == 3);
  CHECK(parse_activation("texp:2.5").T == 2.5);
  CHECK_THROWS_AS(parse_activation("softmax"), std::invalid_argument);
  CHECK_THROWS_AS(parse_activation("texp:"), std::invalid_argument);
  CHECK_THROWS_AS(parse_activation("texp:nan"), std::invalid_argument);
  CHECK_THROWS_AS(parse_activation("texp:1x"), std::invalid_argument);
  CHECK_THROWS_AS(parse_activations("tanh,"), std::invalid_argument);
  CHECK_THROWS_AS(parse_activations(""), std::invalid_argument);
}
