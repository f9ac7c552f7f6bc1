// Tests of integrators/dual.hpp: forward-mode derivatives of explicit formulas against closed forms.
#include <catch2/catch.hpp>

#include <cmath>

#include "integrators/dual.hpp"

using namespace saddle;

TEST_CASE("Dual: gradients of +, -, *, /, sqrt against closed forms", "[core][dual]") {
  using D = Dual<3>;
  const double a = 1.7, b = -0.4, c = 2.3;
  const D x = D::variable(a, 0), y = D::variable(b, 1), z = D::variable(c, 2);
  // f = (x y - 3) / sqrt(z) + 2 x
  const D f = (x * y - 3.0) / sqrt(z) + 2.0 * x;
  const double sz = std::sqrt(c);
  CHECK(f.v == Approx((a * b - 3.0) / sz + 2.0 * a).epsilon(1e-15));
  CHECK(f.d(0) == Approx(b / sz + 2.0).epsilon(1e-15));
  CHECK(f.d(1) == Approx(a / sz).epsilon(1e-15));
  CHECK(f.d(2) == Approx(-0.5 * (a * b - 3.0) / (c * sz)).epsilon(1e-14));
  // a constant has no gradient; sqrt at 0 has value 0 and no gradient (not inf)
  CHECK(D(4.0).d.isZero());
  CHECK(sqrt(D::variable(0.0, 1)).d.isZero());
}
