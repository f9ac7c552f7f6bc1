// Seeds: SplitMix64 (Steele, Lea & Flood), the mixer that seeds every generator and derives
// independent streams (QMC shifts of a redrawn replicate, the inner points of 1RSB, the Monte Carlo
// generator's state).
#pragma once
#include <cstdint>
#include <initializer_list>

namespace saddle {

// SplitMix64: advances s and returns the next well-mixed 64-bit value (seeding, seed derivation).
inline std::uint64_t splitmix64(std::uint64_t& s) {
  std::uint64_t z = (s += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// A seed derived from `seed` and up to three indices (e.g. level, replicate, attempt): distinct
// index tuples give unrelated streams.
inline std::uint64_t derived_seed(std::uint64_t seed, std::uint64_t a, std::uint64_t b, std::uint64_t c) {
  std::uint64_t s = seed;
  std::uint64_t h = splitmix64(s);
  for (std::uint64_t v : {a, b, c}) {
    s = h ^ v;
    h = splitmix64(s);
  }
  return h;
}

}  // namespace saddle
