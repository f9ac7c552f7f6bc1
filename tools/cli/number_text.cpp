// Locale-independent numbers as text (tools/cli/number_text.hpp).
#include "tools/cli/number_text.hpp"

#include <charconv>
#include <cmath>
#include <limits>
#include <system_error>

namespace saddle {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& ch : out)
    if (ch >= 'A' && ch <= 'Z') ch = static_cast<char>(ch - 'A' + 'a');
  return out;
}

bool has_nul(std::string_view s) { return s.find('\0') != std::string_view::npos; }

bool is_hex(std::string_view s) {
  return s.size() >= 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
}

template <class F>
std::string to_text(F&& write) {
  char buf[512];
  const std::to_chars_result r = write(buf, buf + sizeof buf);
  if (r.ec != std::errc()) return "?";  // cannot happen with these buffer sizes
  return std::string(buf, r.ptr);
}

std::string nonfinite_text(double v) {
  if (std::isnan(v)) return "nan";
  return v > 0 ? "inf" : "-inf";
}

}  // namespace

std::string parse_real(std::string_view text, double* out) {
  if (text.empty()) return "empty value";
  if (has_nul(text)) return "contains a NUL character";
  bool negative = false;
  std::string_view s = text;
  if (s[0] == '+' || s[0] == '-') {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return "not a number";
  const std::string low = lower(s);
  double v = 0.0;
  if (low == "inf" || low == "infinity") {
    v = std::numeric_limits<double>::infinity();
  } else if (low == "nan") {
    v = std::numeric_limits<double>::quiet_NaN();
  } else {
    if (is_hex(s)) return "hexadecimal numbers are not accepted";
    // Decimal digits, '.', and an exponent only (from_chars would also read "inf" or "nan(...)").
    if (s[0] == '+' || s[0] == '-') return "not a number";
    for (char ch : s)
      if (!((ch >= '0' && ch <= '9') || ch == '.' || ch == 'e' || ch == 'E' || ch == '+' || ch == '-'))
        return "not a number";
    const std::from_chars_result r = std::from_chars(s.data(), s.data() + s.size(), v, std::chars_format::general);
    if (r.ec == std::errc::result_out_of_range) return "beyond the range of a double";
    if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return "not a number";
  }
  *out = negative ? -v : v;
  return "";
}

std::string parse_integer(std::string_view text, long long min, long long max, long long* out) {
  if (text.empty()) return "empty value";
  if (has_nul(text)) return "contains a NUL character";
  std::string_view s = text;
  bool negative = false;
  if (s[0] == '+' || s[0] == '-') {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (is_hex(s)) return "hexadecimal numbers are not accepted";
  if (s.empty()) return "not an integer";
  for (char ch : s)
    if (ch < '0' || ch > '9') return "not an integer";
  unsigned long long mag = 0;
  const std::from_chars_result r = std::from_chars(s.data(), s.data() + s.size(), mag, 10);
  const std::string range = "out of range (must be in " + std::to_string(min) + ".." + std::to_string(max) + ")";
  if (r.ec == std::errc::result_out_of_range) return range;
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return "not an integer";
  const unsigned long long limit = static_cast<unsigned long long>(std::numeric_limits<long long>::max());
  long long v = 0;
  if (negative) {
    if (mag > limit + 1ULL) return range;
    v = mag == limit + 1ULL ? std::numeric_limits<long long>::min() : -static_cast<long long>(mag);
  } else {
    if (mag > limit) return range;
    v = static_cast<long long>(mag);
  }
  if (v < min || v > max) return range;
  *out = v;
  return "";
}

std::string parse_unsigned(std::string_view text, std::uint64_t* out) {
  if (text.empty()) return "empty value";
  if (has_nul(text)) return "contains a NUL character";
  std::string_view s = text;
  if (s[0] == '+') s.remove_prefix(1);
  if (!s.empty() && s[0] == '-') return "must be a non-negative integer";
  if (is_hex(s)) return "hexadecimal numbers are not accepted";
  if (s.empty()) return "not an integer";
  for (char ch : s)
    if (ch < '0' || ch > '9') return "not an integer (digits only)";
  std::uint64_t v = 0;
  const std::from_chars_result r = std::from_chars(s.data(), s.data() + s.size(), v, 10);
  if (r.ec == std::errc::result_out_of_range) return "must be below 2^64";
  if (r.ec != std::errc() || r.ptr != s.data() + s.size()) return "not an integer";
  *out = v;
  return "";
}

std::string format_general(double v, int precision) {
  if (!std::isfinite(v)) return nonfinite_text(v);
  return to_text([&](char* a, char* b) { return std::to_chars(a, b, v, std::chars_format::general, precision); });
}

std::string format_shortest(double v) {
  if (!std::isfinite(v)) return nonfinite_text(v);
  return to_text([&](char* a, char* b) { return std::to_chars(a, b, v); });
}

std::string format_fixed(double v, int decimals) {
  if (!std::isfinite(v)) return nonfinite_text(v);
  if (std::fabs(v) >= 1e100) return format_general(v, 17);  // keeps the buffer bounded
  return to_text([&](char* a, char* b) { return std::to_chars(a, b, v, std::chars_format::fixed, decimals); });
}

}  // namespace saddle
