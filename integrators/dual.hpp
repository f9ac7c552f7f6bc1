// Forward-mode derivatives of a few explicit formulas: a value with its gradient in N parameters
// (e.g. a channel average and its derivative in the six replica order parameters). Only the
// operations the formulas use: +, -, *, / and sqrt. Header-only.
#pragma once
#include <Eigen/Dense>
#include <cmath>

namespace saddle {

template <int N>
struct Dual {
  using Grad = Eigen::Matrix<double, 1, N>;
  double v = 0.0;
  Grad d = Grad::Zero();

  Dual() = default;
  Dual(double value) : v(value) {}  // a constant (implicit: formulas mix constants in)
  Dual(double value, const Grad& grad) : v(value), d(grad) {}
  // The i-th parameter itself: gradient e_i.
  static Dual variable(double value, int i) {
    Dual x(value);
    x.d(i) = 1.0;
    return x;
  }

  Dual& operator+=(const Dual& o) { v += o.v; d += o.d; return *this; }
  Dual& operator-=(const Dual& o) { v -= o.v; d -= o.d; return *this; }
  friend Dual operator+(Dual a, const Dual& b) { return a += b; }
  friend Dual operator-(Dual a, const Dual& b) { return a -= b; }
  friend Dual operator-(const Dual& a) { return Dual(-a.v, -a.d); }
  friend Dual operator*(const Dual& a, const Dual& b) { return Dual(a.v * b.v, a.d * b.v + a.v * b.d); }
  friend Dual operator/(const Dual& a, const Dual& b) {
    return Dual(a.v / b.v, (a.d * b.v - a.v * b.d) / (b.v * b.v));
  }
  friend Dual sqrt(const Dual& a) {
    const double s = std::sqrt(a.v);
    return Dual(s, s > 0.0 ? Grad(a.d / (2.0 * s)) : Grad(Grad::Zero()));
  }
};

}  // namespace saddle
