// tools/number_text: numbers as text whatever the process locale.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <limits>
#include <random>

#include "tools/cli/number_text.hpp"

using namespace saddle;

namespace {
double real(const char* t) {
  double v = 0;
  const std::string why = parse_real(t, &v);
  INFO(t << ": " << why);
  REQUIRE(why.empty());
  return v;
}
std::string refused(const char* t) {
  double v = 0;
  return parse_real(t, &v);
}
}  // namespace

TEST_CASE("parse_real: decimal numbers, exactly as strtod in the C locale", "[tools][number_text]") {
  CHECK(real("0.5") == 0.5);
  CHECK(real("+0.5") == 0.5);
  CHECK(real("-2.5e-3") == -2.5e-3);
  CHECK(real(".5") == 0.5);
  CHECK(real("1.") == 1.0);
  CHECK(real("1E+5") == 1e5);
  CHECK(real("0.1") == 0.1);  // the nearest double, as the compiler's literal
  CHECK(real("4.9406564584124654e-324") == std::numeric_limits<double>::denorm_min());
  CHECK(std::isinf(real("inf")));
  CHECK(real("-Infinity") == -std::numeric_limits<double>::infinity());
  CHECK(std::isnan(real("nan")));
}

TEST_CASE("parse_real refuses hex, overflow, junk, NUL and decimal commas", "[tools][number_text]") {
  CHECK(refused("0x10").find("hexadecimal") != std::string::npos);
  CHECK(refused("-0X1p3").find("hexadecimal") != std::string::npos);
  CHECK(refused("1e400").find("range") != std::string::npos);
  CHECK(refused("-1e400").find("range") != std::string::npos);
  CHECK(refused("1e-400").find("range") != std::string::npos);  // never silently 0
  for (const char* t : {"", "0,5", "1 ", " 1", "1e", "e5", ".", "--1", "+-1", "1.5.2", "nan(1)", "infx", "1f"})
    CHECK_FALSE(refused(t).empty());
  double v = 0;
  CHECK(parse_real(std::string_view("1\0" "2", 3), &v).find("NUL") != std::string::npos);
}

TEST_CASE("parse_integer and parse_unsigned: decimal only, never saturated", "[tools][number_text]") {
  long long i = 0;
  CHECK(parse_integer("010", 0, 100, &i).empty());
  CHECK(i == 10);  // not octal 8
  CHECK(parse_integer("-5", -10, 10, &i).empty());
  CHECK(i == -5);
  CHECK_FALSE(parse_integer("0x10", 0, 100, &i).empty());
  CHECK_FALSE(parse_integer("1e3", 0, 10000, &i).empty());
  CHECK_FALSE(parse_integer("101", 0, 100, &i).empty());
  CHECK_FALSE(parse_integer("9223372036854775808", std::numeric_limits<long long>::min(),
                            std::numeric_limits<long long>::max(), &i).empty());
  CHECK(parse_integer("-9223372036854775808", std::numeric_limits<long long>::min(),
                      std::numeric_limits<long long>::max(), &i).empty());
  CHECK(i == std::numeric_limits<long long>::min());
  std::uint64_t u = 0;
  CHECK(parse_unsigned("18446744073709551615", &u).empty());
  CHECK(u == 18446744073709551615ULL);
  CHECK(parse_unsigned("18446744073709551616", &u).find("2^64") != std::string::npos);
  CHECK_FALSE(parse_unsigned("-1", &u).empty());  // never wrapped to 2^64 - 1
  CHECK_FALSE(parse_unsigned("0x10", &u).empty());
}

TEST_CASE("format_general equals printf %.*g in the C locale; shortest round-trips", "[tools][number_text]") {
  std::mt19937_64 g(7);
  for (int k = 0; k < 20000; ++k) {
    const double v = std::ldexp(static_cast<double>(g() % 100000007) / 997.0, static_cast<int>(g() % 120) - 60) *
                     (k % 2 ? -1 : 1);
    for (int p : {3, 12, 17}) {
      char buf[64];
      std::snprintf(buf, sizeof buf, "%.*g", p, v);  // this test process runs in the C locale
      REQUIRE(format_general(v, p) == buf);
    }
    char buf[512];
    std::snprintf(buf, sizeof buf, "%.3f", v);
    REQUIRE(format_fixed(v, 3) == buf);
    double back = 0;
    REQUIRE(parse_real(format_shortest(v), &back).empty());
    REQUIRE(back == v);
  }
  CHECK(format_general(INFINITY, 12) == "inf");
  CHECK(format_general(-INFINITY, 12) == "-inf");
  CHECK(format_general(NAN, 12) == "nan");
  CHECK(format_shortest(0.1) == "0.1");
}
