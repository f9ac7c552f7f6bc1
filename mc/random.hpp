// The one random generator of the Monte Carlo modules: xoshiro256++ (Blackman & Vigna), its
// state filled by splitmix64 from (seed, index, stream), so that every simulation can give each
// seed / draw / purpose its own reproducible stream, independent of the thread count and the
// platform. Normals by Doornik's ZIGNOR ziggurat (128 strips, R = 3.442619855899,
// V = 9.91256303526217e-3): about 5x faster than std::normal_distribution, which matters for
// the N L D token entries of the SLR simulation and the p x n matrices of the RMT one. Header-only so that the sampler inlines into the hot loops.
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>

#include "integrators/seeds.hpp"

namespace saddle {

class Rng {
 public:
  // Stream (seed, index, stream): e.g. (user seed, seed or draw number, purpose).
  explicit Rng(std::uint64_t seed, std::uint64_t index = 0, std::uint64_t stream = 0) {
    std::uint64_t x = seed * 0x9E3779B97F4A7C15ULL ^ (index + 1) * 0xBF58476D1CE4E5B9ULL ^
                      (stream + 1) * 0x94D049BB133111EBULL;
    for (auto& v : s_) v = splitmix64(x);
    if ((s_[0] | s_[1] | s_[2] | s_[3]) == 0) s_[0] = 1;
  }

  std::uint64_t next() {
    const std::uint64_t result = rotl(s_[0] + s_[3], 23) + s_[0];
    const std::uint64_t t = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  // Uniform on (0, 1) (never 0 or 1): 53 random bits, centred in their cell.
  double uniform() { return ((next() >> 11) + 0.5) * 0x1.0p-53; }
  // Uniform integer in {0, ..., n-1} (n small; bias below 2^-40).
  int below(int n) { return static_cast<int>((next() >> 11) * 0x1.0p-53 * n); }
  // +1 or -1 with probability 1/2.
  double sign() { return (next() >> 63) ? 1.0 : -1.0; }

  // N(0, 1) by the ziggurat.
  double normal() {
    const Zig& z = Zig::get();
    for (;;) {
      const std::uint64_t b = next();
      const int i = static_cast<int>(b & 0x7F);
      const double u = strip_u(b);
      if (std::fabs(u) < z.r[i]) return u * z.x[i];  // inside the rectangle
      double x;
      if (outside_rectangle(z, i, u, &x)) return x;
    }
  }
  // n normals into out (as floats): exactly the values of n calls of normal(), with the stream
  // state kept in registers (about twice as fast).
  void fill_normals(float* out, std::size_t n) {
    draw_normals(n, [out](std::size_t k, double x) { out[k] = static_cast<float>(x); });
  }
  // Advances the stream past n normals: exactly the draws of n calls of normal(), without
  // forming the values.
  void skip_normals(std::size_t n) {
    draw_normals(n, [](std::size_t, double) {});
  }

 private:
  // n ziggurat normals with the state in registers, each handed to put(k, value) (the value is
  // only formed when put uses it).
  template <class Put>
  void draw_normals(std::size_t n, Put put) {
    const Zig& z = Zig::get();
    std::uint64_t s0 = s_[0], s1 = s_[1], s2 = s_[2], s3 = s_[3];
    for (std::size_t k = 0; k < n; ++k) {
      for (;;) {
        const std::uint64_t b = step(s0, s1, s2, s3);
        const int i = static_cast<int>(b & 0x7F);
        const double u = strip_u(b);
        if (std::fabs(u) < z.r[i]) {
          put(k, u * z.x[i]);
          break;
        }
        double x;
        if (slow_path(z, i, u, &x, s0, s1, s2, s3)) {
          put(k, x);
          break;
        }
      }
    }
    s_[0] = s0, s_[1] = s1, s_[2] = s2, s_[3] = s3;
  }
  struct Zig {
    static constexpr double kR = 3.442619855899, kV = 9.91256303526217e-3;
    double x[129], r[128];
    Zig() {
      double f = std::exp(-0.5 * kR * kR);
      x[0] = kV / f;
      x[1] = kR;
      x[128] = 0.0;
      for (int i = 2; i < 128; ++i) {
        x[i] = std::sqrt(-2.0 * std::log(kV / x[i - 1] + f));
        f = std::exp(-0.5 * x[i] * x[i]);
      }
      for (int i = 0; i < 128; ++i) r[i] = x[i + 1] / x[i];
    }
    static const Zig& get() {
      static const Zig z;
      return z;
    }
  };
  // One xoshiro256++ step on a state held in locals (the same as next()).
  static std::uint64_t step(std::uint64_t& s0, std::uint64_t& s1, std::uint64_t& s2,
                            std::uint64_t& s3) {
    const std::uint64_t result = rotl(s0 + s3, 23) + s0;
    const std::uint64_t t = s1 << 17;
    s2 ^= s0;
    s3 ^= s1;
    s1 ^= s2;
    s0 ^= s3;
    s2 ^= t;
    s3 = rotl(s3, 45);
    return result;
  }
  // outside_rectangle for a state held in locals.
  bool slow_path(const Zig& z, int i, double u, double* x, std::uint64_t& s0, std::uint64_t& s1,
                 std::uint64_t& s2, std::uint64_t& s3) {
    s_[0] = s0, s_[1] = s1, s_[2] = s2, s_[3] = s3;
    const bool ok = outside_rectangle(z, i, u, x);
    s0 = s_[0], s1 = s_[1], s2 = s_[2], s3 = s_[3];
    return ok;
  }
  // The uniform of the strip test, 2 ((b >> 11) + 1/2) 2^-53 - 1 (the signed conversion of
  // b >> 11 < 2^53 is exact and avoids the slow unsigned one).
  static double strip_u(std::uint64_t b) {
    return 2.0 * ((static_cast<double>(static_cast<std::int64_t>(b >> 11)) + 0.5) * 0x1.0p-53) - 1.0;
  }
  // The ziggurat outside the rectangle of strip i (about 1% of the draws): the tail beyond R
  // (i = 0) or the wedge. True with the normal in *x, false to draw again.
  bool outside_rectangle(const Zig& z, int i, double u, double* out) {
    if (i == 0) {  // base strip: the tail beyond R
      double x, y;
      do {
        x = std::log(uniform()) / Zig::kR;
        y = std::log(uniform());
      } while (-2.0 * y < x * x);
      *out = u < 0 ? x - Zig::kR : Zig::kR - x;
      return true;
    }
    const double x = u * z.x[i];  // wedge
    const double f0 = std::exp(-0.5 * (z.x[i] * z.x[i] - x * x));
    const double f1 = std::exp(-0.5 * (z.x[i + 1] * z.x[i + 1] - x * x));
    *out = x;
    return f1 + uniform() * (f0 - f1) < 1.0;
  }
  static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  std::uint64_t s_[4];
};

}  // namespace saddle
