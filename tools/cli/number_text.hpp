// Numbers as text, independent of the process locale: what the program reads from options, CSV
// files and environment variables, and what it writes into CSV files. A host process may set
// LC_NUMERIC (a Python notebook calling locale.setlocale(LC_NUMERIC, "de_DE.UTF-8")): strtod,
// printf and friends would then read and write decimal commas. Everything here is
// std::from_chars / std::to_chars, which never look at the locale.
//
// Accepted spellings of a real number: an optional sign, decimal digits with an optional '.', an
// optional exponent (1e-3, 2.5E+4), and inf / infinity / nan in any case when the caller allows
// them. Refused, with the reason: empty text, hexadecimal (0x10), a NUL or any other trailing
// character, a value beyond the range of a double (1e400, 1e-400: never silently inf or 0).
// Integers: decimal digits with an optional sign; no hexadecimal, no octal reading of a leading
// 0, no exponent, and nothing that does not fit the type (never saturated).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

namespace saddle {

// Parses `text` (no surrounding blanks) as a real number. Returns "" on success (with *out set),
// else the reason it is not one ("not a number", "hexadecimal numbers are not accepted", "beyond
// the range of a double", ...). inf, infinity and nan (any case, signed) are numbers here: the
// caller decides whether it accepts them.
std::string parse_real(std::string_view text, double* out);

// Parses `text` as a decimal integer in [min, max]. Returns "" on success, else the reason.
std::string parse_integer(std::string_view text, long long min, long long max, long long* out);
// The same for unsigned 64-bit values (seeds): [0, 2^64).
std::string parse_unsigned(std::string_view text, std::uint64_t* out);

// `v` as printf("%.*g", precision, v) in the C locale: "inf", "-inf", "nan" for the non-finite.
std::string format_general(double v, int precision);
// The shortest text that reads back to the same double (std::to_chars): "0.1", "1e-07", "inf".
std::string format_shortest(double v);
// `v` as printf("%.*f", decimals, v) in the C locale.
std::string format_fixed(double v, int decimals);

}  // namespace saddle
