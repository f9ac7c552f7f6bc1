// Unit tests of the shared CLI conventions (tools/cli/cli_common.hpp): the sweep parser, cartesian
// grids, name lists, number formatting, the finite-output guard and the CSV table. Expected values
// are written out by hand (arithmetic and geometric progressions, explicit products).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include "saddle_version.hpp"
#include "tools/cli/cli_common.hpp"
#include "tools/plotting/plot.hpp"

using namespace saddle;
using Catch::Matchers::Contains;

namespace {
void set_args(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(&a[0]);
  set_command_line(static_cast<int>(argv.size()), argv.data());
}
}  // namespace

TEST_CASE("parse_sweep: single values and comma lists", "[tools][sweep]") {
  CHECK(parse_sweep("0.5", "alpha") == std::vector<double>{0.5});
  CHECK(parse_sweep("1,2,3", "alpha") == std::vector<double>{1, 2, 3});
  CHECK(parse_sweep(" 1 , 2.5 ", "alpha") == std::vector<double>{1, 2.5});  // blanks trimmed
  CHECK(parse_sweep("3,1,2", "alpha") == std::vector<double>{3, 1, 2});     // order kept
  CHECK(parse_sweep("-2.5e-3", "x") == std::vector<double>{-2.5e-3});
}

TEST_CASE("parse_sweep: linear ranges start:stop:count", "[tools][sweep]") {
  const auto v = parse_sweep("0:1:5", "alpha");
  REQUIRE(v.size() == 5);
  for (int i = 0; i < 5; ++i) CHECK(v[i] == Approx(0.25 * i).margin(1e-15));
  CHECK(v.back() == 1.0);  // endpoint exact
  CHECK(parse_sweep("2:7:1", "alpha") == std::vector<double>{2});  // count 1: the start
  const auto d = parse_sweep("1:0:3", "alpha");                    // decreasing range
  REQUIRE(d.size() == 3);
  CHECK(d[0] == 1.0);
  CHECK(d[1] == Approx(0.5));
  CHECK(d[2] == 0.0);
}

TEST_CASE("parse_sweep: geometric ranges and mixed lists", "[tools][sweep]") {
  const auto g = parse_sweep("1:1000:4:log", "gamma");
  REQUIRE(g.size() == 4);
  CHECK(g[0] == 1.0);
  CHECK(g[1] == Approx(10.0).epsilon(1e-12));
  CHECK(g[2] == Approx(100.0).epsilon(1e-12));
  CHECK(g[3] == 1000.0);
  // "0,1e-6:1:13:log": 0, then 13 values over 6 decades (ratio sqrt(10) between neighbours).
  const auto m = parse_sweep("0,1e-6:1:13:log", "lambda");
  REQUIRE(m.size() == 14);
  CHECK(m[0] == 0.0);
  CHECK(m[1] == Approx(1e-6).epsilon(1e-12));
  for (int k = 1; k < 13; ++k) CHECK(m[k + 1] / m[k] == Approx(std::sqrt(10.0)).epsilon(1e-10));
  CHECK(m[13] == 1.0);
  CHECK(parse_sweep("5,1:3:3", "x") == std::vector<double>{5, 1, 2, 3});
  // The endpoints are the values typed, bit for bit (exp(log(1e-8)) is not 1e-8): a range that
  // starts at the lower bound of a domain is inside it.
  for (const char* t : {"1e-8:1e6:7:log", "3e-7:0.7:5:log", "0.1:0.3:3", "1e-300:1e300:9:log"}) {
    const auto v = parse_sweep(t, "x");
    const auto ends = split(t, ':');
    CHECK(v.front() == std::strtod(ends[0].c_str(), nullptr));
    CHECK(v.back() == std::strtod(ends[1].c_str(), nullptr));
  }
  ParamDomain lam;
  lam.min = 1e-8;
  CHECK_NOTHROW(parse_sweep("1e-8:1e6:7:log", "lambda", lam));
}

TEST_CASE("grid sizes are counted before anything is built", "[tools][sweep]") {
  CHECK(check_grid({1000, 1000}) == 1e6);
  CHECK_THROWS_AS(check_grid({1000, 1001}), InputError);
  CHECK_THROWS_AS(check_grid({2, 10000000, 10000000}), InputError);  // no overflow of the count
  CHECK_THROWS_AS(parse_sweep("0:1:1000001", "x"), InputError);
  CHECK(parse_sweep("0:1:1000000", "x").size() == 1000000);
}

TEST_CASE("outputs that cannot be written are errors", "[tools][output]") {
  CHECK_THROWS_AS(write_output("/dev/full", "x\n"), InputError);
  CHECK_THROWS_AS(write_output("/nonexistent_dir/x.csv", "x\n"), InputError);
  CHECK_THROWS_AS(check_writable("/nonexistent_dir/x.png", "--plot"), InputError);
  CHECK_THROWS_AS(check_writable("/", "--plot"), InputError);
  CHECK_NOTHROW(check_writable("/tmp/saddle_check_writable_probe.png", "--plot"));
}

TEST_CASE("parse_sweep: rules (range, integers, inf)", "[tools][sweep]") {
  CHECK_THROWS_AS(parse_sweep("0", "alpha", positive_rule()), InputError);
  CHECK(parse_sweep("0", "delta", nonneg_rule()) == std::vector<double>{0});
  CHECK_THROWS_AS(parse_sweep("-1e-9", "delta", nonneg_rule()), InputError);
  CHECK_THROWS_AS(parse_sweep("0:1:3", "alpha", positive_rule()), InputError);  // 0 inside a range
  ParamDomain upto1 = nonneg_rule();
  upto1.max = 1.0;
  CHECK(parse_sweep("1", "p", upto1) == std::vector<double>{1});
  CHECK_THROWS_AS(parse_sweep("1.0001", "p", upto1), InputError);
  ParamDomain integer = positive_rule();
  integer.integer = true;
  CHECK(parse_sweep("1:4:4", "L", integer) == std::vector<double>{1, 2, 3, 4});
  CHECK_THROWS_AS(parse_sweep("1.5", "L", integer), InputError);
  // inf only where allowed, never as a range endpoint.
  CHECK_THROWS_AS(parse_sweep("inf", "nu"), InputError);
  ParamDomain with_inf = positive_rule();
  with_inf.allow_inf = true;
  const auto v = parse_sweep("1,inf", "nu", with_inf);
  REQUIRE(v.size() == 2);
  CHECK(std::isinf(v[1]));
  CHECK(v[1] > 0);
  CHECK(std::isinf(parse_sweep("Infinity", "nu", with_inf)[0]));
  CHECK_THROWS_AS(parse_sweep("1:inf:3", "nu", with_inf), InputError);
  CHECK_THROWS_AS(parse_sweep("-inf", "nu", with_inf), InputError);  // below the minimum 0
}

TEST_CASE("parse_sweep: malformed text is InputError naming the option", "[tools][sweep]") {
  for (const char* bad : {"", "   ", "abc", "1,,2", "1,", "1:2", "1:2:3:4:5", "1:2:0", "1:2:-3",
                          "1:2:1.5", "1:2:3x", "1:2:3:lin", "0:1:3:log", "-1:1:3:log", "nan",
                          "NaN", "1,nan", "1e", "0x", "1:2:1e8"}) {
    INFO("text '" << bad << "'");
    CHECK_THROWS_AS(parse_sweep(bad, "alpha"), InputError);
    CHECK_THROWS_WITH(parse_sweep(bad, "alpha"), Contains("--alpha"));
  }
}

TEST_CASE("cartesian: the last axis varies fastest", "[tools][sweep]") {
  const auto g = cartesian({{1, 2}, {3, 4, 5}});
  const std::vector<std::vector<double>> want{{1, 3}, {1, 4}, {1, 5}, {2, 3}, {2, 4}, {2, 5}};
  CHECK(g == want);
  const auto g3 = cartesian({{1}, {2, 3}, {4, 5}});
  CHECK(g3 == std::vector<std::vector<double>>{{1, 2, 4}, {1, 2, 5}, {1, 3, 4}, {1, 3, 5}});
  CHECK(cartesian({{1, 2, 3}}) == std::vector<std::vector<double>>{{1}, {2}, {3}});
  CHECK(cartesian({{1, 2}, {}}).empty());  // an empty axis: no points
  CHECK(cartesian({}).size() == 1);        // the empty product: one point with no coordinates
  // Sizes multiply.
  CHECK(cartesian({{1, 2, 3}, {1, 2}, {1, 2, 3, 4}}).size() == 24);
}

TEST_CASE("parse_names: checked comma lists", "[tools][sweep]") {
  const std::vector<std::string> allowed{"linear", "softmax", "relu"};
  CHECK(parse_names("softmax", "activation", allowed) == std::vector<std::string>{"softmax"});
  CHECK(parse_names("relu, linear", "activation", allowed) ==
        std::vector<std::string>{"relu", "linear"});
  CHECK_THROWS_AS(parse_names("tanh", "activation", allowed), InputError);
  CHECK_THROWS_WITH(parse_names("tanh", "activation", allowed),
                    Contains("--activation") && Contains("tanh") && Contains("linear, softmax, relu"));
  CHECK_THROWS_AS(parse_names("", "activation", allowed), InputError);
  CHECK_THROWS_AS(parse_names("linear,,relu", "activation", allowed), InputError);
  CHECK_THROWS_AS(parse_names("Linear", "activation", allowed), InputError);  // case matters
}

TEST_CASE("fmt: 12 significant digits and non-finite spellings", "[tools][fmt]") {
  CHECK(fmt(0.1) == "0.1");
  CHECK(fmt(2.0) == "2");
  CHECK(fmt(-1.5) == "-1.5");
  CHECK(fmt(1.0 / 3.0) == "0.333333333333");
  CHECK(fmt(2.0 / 3.0) == "0.666666666667");
  CHECK(fmt(1e-300) == "1e-300");
  CHECK(fmt(123456789012345.0) == "1.23456789012e+14");
  CHECK(fmt(std::numeric_limits<double>::infinity()) == "inf");
  CHECK(fmt(-std::numeric_limits<double>::infinity()) == "-inf");
  CHECK(fmt(std::nan("")) == "nan");
  for (double x : {std::acos(-1.0), -std::exp(1.0), 6.02214076e23, 1.6e-19}) {
    INFO(x);
    CHECK(std::strtod(fmt(x).c_str(), nullptr) == Approx(x).epsilon(1e-11));
  }
}

TEST_CASE("is_nonfinite_text and require_finite", "[tools][fmt]") {
  for (const char* t : {"nan", "NaN", "-nan", "+nan", "inf", "-Inf", "+inf", "INFINITY", " inf ",
                        "nan(0x8000)"})
    CHECK(is_nonfinite_text(t));
  for (const char* t : {"", "1", "-1.5e300", "info", "nan1", "in", "1inf", "--inf"}) CHECK_FALSE(is_nonfinite_text(t));

  const std::vector<std::string> cols{"nu", "alpha", "error", "iterations"};
  // Inputs (before first_output) may be inf.
  CHECK_NOTHROW(require_finite({"inf", "2", "0.25", "7"}, cols, 2, "at nu=inf"));
  CHECK_THROWS_AS(require_finite({"1", "2", "nan", "7"}, cols, 2, "at alpha=2"), std::runtime_error);
  CHECK_THROWS_WITH(require_finite({"1", "2", "-inf", "7"}, cols, 2, "at alpha=2"),
                    Contains("error") && Contains("at alpha=2"));
  CHECK_THROWS_WITH(require_finite({"1", "2", "0.5", "-nan"}, cols, 2, "here"), Contains("iterations"));
}

TEST_CASE("checked_count: products above the limit are bad input", "[tools][fmt]") {
  CHECK(checked_count({10, 20, 3}, 1000, "points") == 600);
  CHECK(checked_count({1000}, 1000, "points") == 1000);  // the limit itself is allowed
  CHECK_THROWS_AS(checked_count({1e3, 1e3}, 1e5, "points x replicates"), InputError);
  CHECK_THROWS_WITH(checked_count({1e3, 1e3}, 1e5, "points x replicates"), Contains("points x replicates"));
  CHECK_THROWS_AS(checked_count({std::nan(""), 1}, 1e5, "n"), InputError);
}

TEST_CASE("set_command_line: basename of argv[0] and quoting", "[tools][csv]") {
  set_args({"/usr/local/bin/saddle", "slr", "--title", "a b", "--x", "$HOME", "--y", ""});
  CHECK(command_line() == "saddle slr --title 'a b' --x '$HOME' --y ''");
  CHECK(command_args() ==
        std::vector<std::string>{"saddle", "slr", "--title", "a b", "--x", "$HOME", "--y", ""});
}

TEST_CASE("CsvTable: header, settings, rows; read back by read_csv", "[tools][csv]") {
  set_args({"saddle", "ridge", "--alpha", "1,2"});
  CsvTable t({"alpha", "error"});
  t.setting("solver", "method=anderson");
  t.setting("replicates", "4");
  t.add_row({"1", "0.5"});
  t.add_row({"2", "0.25"});
  CHECK_THROWS_AS(t.add_row({"3"}), std::logic_error);
  CHECK_THROWS_AS(t.add_row({"3", "0.1", "extra"}), std::logic_error);
  CHECK(t.rows().size() == 2);

  std::ostringstream os;
  t.write(os);
  const std::string want = std::string("# saddle ") + SADDLE_VERSION +
                           "\n# command: saddle ridge --alpha 1,2\n# solver: method=anderson\n"
                           "# replicates: 4\nalpha,error\n1,0.5\n2,0.25\n";
  CHECK(os.str() == want);
  std::ostringstream hs;
  t.write_header(hs);
  CHECK(hs.str() == want.substr(0, want.find("1,0.5")));

  const auto path = std::filesystem::temp_directory_path() /
                    ("saddle_test_csvtable_" + std::to_string(::getpid()) + ".csv");
  t.write_to(path.string());
  const CsvData d = read_csv(path.string());
  std::filesystem::remove(path);
  CHECK(d.columns == t.columns());
  CHECK(d.rows == t.rows());
  REQUIRE(d.comments.size() == 4);
  CHECK(d.comments[3] == "# replicates: 4");

  CHECK_THROWS_AS(t.write_to("/nonexistent-dir-of-saddle-tests/x.csv"), InputError);
}

TEST_CASE("integer sweeps: a log range snaps to its integers, other ranges are refused", "[tools][cli]") {
  ParamDomain r;
  r.integer = true;
  r.min = 1;
  CHECK(parse_sweep("8:1024:8:log", "D", r) == std::vector<double>{8, 16, 32, 64, 128, 256, 512, 1024});
  CHECK(parse_sweep("8:10:3", "D", r) == std::vector<double>{8, 9, 10});
  CHECK_THROWS_AS(parse_sweep("8:9:3", "D", r), InputError);      // 8, 8.5, 9: never rounded
  CHECK_THROWS_AS(parse_sweep("8:8:3", "D", r), InputError);      // one value three times
  CHECK_THROWS_AS(parse_sweep("0x10", "alpha"), InputError);
  CHECK_THROWS_AS(parse_sweep("1e400", "alpha"), InputError);
  CHECK_THROWS_AS(parse_sweep("1e400", "nu", [] { ParamDomain s; s.allow_inf = true; return s; }()), InputError);
}

TEST_CASE("CsvTable quotes a field with a comma; its header lines stay one line each", "[tools][cli]") {
  CsvTable t({"a", "note"});
  t.setting("multi", "x\ny");
  t.add_row({"1", "D=8, seeds=2"});
  std::ostringstream os;
  t.write(os);
  const std::string s = os.str();
  CHECK(s.find("\n1,\"D=8, seeds=2\"\n") != std::string::npos);
  CHECK(s.find("# multi: x?y\n") != std::string::npos);
}
