// The generic model subcommand (tools/cli/model_command.hpp) with fixture models that count the
// driver's calls: the contract of solver/curve.hpp (prepare_level(level) before any system() of
// that level, on every model object), the options a model's hooks give it (refinement flags only
// with refine_on, --refine-unstable only with a stability hook) and the columns they add.
#include <catch2/catch.hpp>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include <unistd.h>

#include "tests/solver/curie_weiss.hpp"
#include "tools/cli/cli_common.hpp"
#include "tools/cli/model_command.hpp"
#include "tools/plotting/plot.hpp"

using namespace saddle;

namespace {

std::atomic<int> g_violations{0}, g_systems{0}, g_prepared[4] = {};

// F(x) = (x + a + eps_r 2^-level) / 2: fixed point x = a + eps_r 2^-level, eps_r = +-0.01 over
// the two replicates, so the s.e. of x halves with each level (closed form of the refinement).
struct HalfMap : FixedPointSystem {
  double a, eps;
  HalfMap(double aa, double e) : a(aa), eps(e) {}
  int dim() const override { return 1; }
  std::vector<std::string> names() const override { return {"x"}; }
  Vec map(const Vec& x) const override {
    Vec f(1);
    f[0] = 0.5 * (x[0] + a + eps);
    return f;
  }
  std::vector<std::string> observable_names() const override { return {"twice"}; }
  Vec observables(const Vec& x) const override { return 2.0 * x; }
};

// Counts the driver's calls and checks the order on this object.
class Counting : public CurveModel {
 public:
  explicit Counting(const ParamValues&) {}
  int replicates() const override { return 2; }
  bool prepare_level(int level) override {
    if (level < 0 || level > 3) return false;
    ++g_prepared[level];
    prepared_.insert(level);
    return true;
  }
  std::unique_ptr<FixedPointSystem> system(double a, int r, int level) const override {
    ++g_systems;
    if (!prepared_.count(level)) ++g_violations;
    return std::make_unique<HalfMap>(a, (r == 0 ? 0.01 : -0.01) * std::ldexp(1.0, -level));
  }
  int refine_on() const override { return 0; }
  Stability stability(const CurvePoint&) const override { return Stability::Stable; }
  static std::vector<CurveStart> starts(const ParamValues&) {
    CurveStart s;
    s.label = "zero";
    s.x0 = Vec::Zero(1);
    return {s};
  }
  static ModelCard card() {
    ModelCard c;
    c.command = "counting";
    c.summary = "counting fixture";
    c.equations = "tests/tools/cli/test_model_command.cpp";
    c.params = {{"a", "1:2:3", interval_domain(-10, 10), "shift"},
                {"b", "0", interval_domain(-10, 10), "unused"}};
    c.continuation = "a";
    c.plot_y = "x";
    return c;
  }

 private:
  std::set<int> prepared_;
};

// No optional hook: no refinement flags, no stability column.
class Plain : public CurveModel {
 public:
  explicit Plain(const ParamValues&) {}
  std::unique_ptr<FixedPointSystem> system(double a, int, int) const override {
    return std::make_unique<HalfMap>(a, 0.0);
  }
  static std::vector<CurveStart> starts(const ParamValues& p) { return Counting::starts(p); }
  static ModelCard card() {
    ModelCard c = Counting::card();
    c.command = "plain";
    return c;
  }
};

struct Scratch {
  std::filesystem::path dir;
  Scratch() {
    dir = std::filesystem::temp_directory_path() / ("saddle_test_model_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
  }
  ~Scratch() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
  std::string file(const std::string& n) const { return (dir / n).string(); }
};

void parse(CLI::App& app, std::vector<std::string> args) {
  std::vector<char*> argv;
  for (auto& s : args) argv.push_back(&s[0]);
  set_command_line(static_cast<int>(argv.size()), argv.data());
  app.parse(static_cast<int>(argv.size()), argv.data());
}

}  // namespace

TEST_CASE("generic command: prepare_level before system, refinement, the hooks' columns", "[tools]") {
  Scratch s;
  CLI::App app;
  register_model<Counting>(app);
  register_model<Plain>(app);
  g_violations = 0;
  g_systems = 0;
  for (auto& p : g_prepared) p = 0;
  parse(app, {"saddle", "counting", "--a", "1,2", "--b", "0,1", "--target-se", "0.002", "--max-refine", "2",
              "--out", s.file("c.csv"), "--no-progress", "--threads", "1"});
  CHECK(g_systems > 0);
  CHECK(g_violations == 0);
  CHECK(g_prepared[1] > 0);  // the s.e. 0.01 of x is above 0.002: refined ...
  CHECK(g_prepared[2] > 0);  // ... twice (0.005, then 0.0025 > 0.002 but max_refine = 2)
  CHECK(g_prepared[3] == 0);
  const CsvData d = read_csv(s.file("c.csv"));
  REQUIRE(d.rows.size() == 4);
  for (const char* c : {"x", "twice", "x_se", "map_radius", "repelling", "stalled", "path", "reason", "amplitude", "stability", "level"})
    CHECK(d.col(c) >= 0);
  CHECK(d.col("init") < 0);  // one start
  CHECK(d.col("preferred") < 0);
  for (const auto& r : d.rows) {
    CHECK(r[d.col("level")] == "2");
    CHECK(std::stod(r[d.col("x_se")]) == Approx(0.01 / 4).epsilon(1e-6));  // eps 2^-2
    CHECK(std::stod(r[d.col("map_radius")]) == Approx(0.5).epsilon(1e-6));  // F' = 1/2
    CHECK(r[d.col("repelling")] == "0");
    CHECK(r[d.col("stability")] == "stable");
  }
  bool sweep_line = false;
  for (const auto& c : d.comments) sweep_line = sweep_line || c == "# sweep: a, b";
  CHECK(sweep_line);
  // Without a refinement hook the flags do not exist; without a stability hook no column.
  CLI::App app2;
  register_model<Plain>(app2);
  CHECK_THROWS(parse(app2, {"saddle", "plain", "--target-se", "0.1", "--out", s.file("p.csv")}));
  CLI::App app3;
  register_model<Plain>(app3);
  parse(app3, {"saddle", "plain", "--a", "1", "--out", s.file("p.csv"), "--no-progress"});
  const CsvData p = read_csv(s.file("p.csv"));
  CHECK(p.col("stability") < 0);
  CHECK(p.col("level") < 0);
  CHECK(p.col("map_radius") >= 0);
}

TEST_CASE("generic command: every registered model has a card with its continuation parameter", "[tools]") {
  const std::vector<ModelCard> cards = registered_model_cards();
  REQUIRE(cards.size() >= 2);
  for (const ModelCard& c : cards) {
    bool found = false;
    for (const ModelParam& p : c.params) found = found || p.name == c.continuation;
    CHECK(found);
  }
}

// The Curie-Weiss test fixture (two starts, a free energy, distinct) through the command: one row
// per start and point, map_radius/repelling on the m = 0 branch past beta J = 1, the non-zero root
// preferred there by free energy.
TEST_CASE("generic command: two starts, preferred by free energy, the repelling branch flagged", "[tools]") {
  Scratch s;
  CLI::App app;
  register_model<saddle_test::curie_weiss::Model>(app);
  parse(app, {"saddle", "curie-weiss", "--beta", "0.5,2", "--h", "0", "--out", s.file("cw.csv"), "--no-progress"});
  const CsvData d = read_csv(s.file("cw.csv"));
  REQUIRE(d.rows.size() == 4);  // 2 starts x 2 values of beta
  const int init = d.col("init"), beta = d.col("beta"), m = d.col("m"), rad = d.col("map_radius"),
            rep = d.col("repelling"), pref = d.col("preferred"), co = d.col("coexist");
  REQUIRE(init >= 0);
  REQUIRE(pref >= 0);
  REQUIRE(co >= 0);
  const double root = saddle_test::curie_weiss::positive_root(2.0, 1.0);
  for (const auto& r : d.rows) {
    const double b = std::stod(r[beta]), mm = std::stod(r[m]);
    if (b == 0.5) {
      CHECK(mm == Approx(0.0).margin(1e-9));
      CHECK(r[rep] == "0");
      CHECK(std::stod(r[rad]) == Approx(0.5).epsilon(1e-6));
    } else if (r[init] == "low") {
      CHECK(mm == 0.0);
      CHECK(r[rep] == "1");  // |F'(0)| = 2
      CHECK(std::stod(r[rad]) == Approx(2.0).epsilon(1e-6));
      CHECK(r[pref] == "0");
      CHECK(r[co] == "1");
    } else {
      CHECK(mm == Approx(root).epsilon(1e-9));
      CHECK(r[rep] == "0");
      CHECK(r[pref] == "1");
      CHECK(r[co] == "1");
    }
  }
}

namespace {
// A card with every kind of field (the shape of `slr bayes`): a choice `shape` (up: x* = a,
// down: x* = -a), an integer `n`, a text setting `tag` (a column of its own), a setting `b_list`
// standing in for `b`, two starts, its own curve options, and a check that refuses tag = "bad".
class Choosy : public CurveModel {
 public:
  explicit Choosy(const ParamValues& p)
      : sign_(p.text("shape") == "down" ? -1.0 : 1.0), index_(p("shape")), n_(p("n")) {}
  std::unique_ptr<FixedPointSystem> system(double a, int, int) const override {
    // The index of the choice and its name agree (down is choice 1).
    if ((index_ == 1.0) != (sign_ < 0)) return std::make_unique<HalfMap>(1e3, 0.0);
    return std::make_unique<HalfMap>(sign_ * a * n_, 0.0);
  }
  static std::vector<CurveStart> starts(const ParamValues&) {
    CurveStart s0, s1;
    s0.label = "first";
    s0.x0 = Vec::Zero(1);
    s1.label = "second";
    s1.x0 = Vec::Constant(1, 5.0);
    return {s0, s1};
  }
  static void check(const ParamValues& p) {
    if (p.text("tag") == "bad") throw std::invalid_argument("--tag: bad is refused");
  }
  static CurveOptions curve_options() {
    CurveOptions c;
    c.solver.tol = 1e-9;
    c.solver.method = Method::Damped;
    c.retry = false;
    return c;
  }
  static ModelCard card() {
    ModelCard c;
    c.command = "choosy";
    c.summary = "choices fixture";
    c.equations = "tests/tools/cli/test_model_command.cpp";
    ParamDomain n = interval_domain(1, 4);
    n.integer = true;
    c.params = {{"shape", "up", {}, "sign of the root", {"up", "down"}},
                {"n", "1", n, "scale"},
                {"b", "0", interval_domain(-10, 10), "unused"},
                {"a", "1,2", interval_domain(-10, 10), "shift"}};
    c.settings = {{"tag", "none", "free text"}, {"b_list", "", "stands in for b", "b"}};
    c.continuation = "a";
    c.plot_y = "x";
    c.coexist_column = "two_roots";
    return c;
  }

 private:
  double sign_, index_, n_;
};
}  // namespace

TEST_CASE("generic command: choices, integer parameters, settings, --init and the model's defaults", "[tools]") {
  Scratch s;
  {
    CLI::App app;
    register_model<Choosy>(app);
    parse(app, {"saddle", "choosy", "--shape", "up,down", "--n", "2", "--b-list", "1,2", "--init", "second",
                "--out", s.file("ch.csv"), "--no-progress"});
  }
  const CsvData d = read_csv(s.file("ch.csv"));
  REQUIRE(d.rows.size() == 4);  // 2 shapes x 2 values of a, one start
  const std::vector<std::string> lead = {"shape", "n", "b", "a", "tag", "init"};
  for (std::size_t i = 0; i < lead.size(); ++i) CHECK(d.columns[i] == lead[i]);
  CHECK(d.col("two_roots") >= 0);
  CHECK(d.col("coexist") < 0);
  for (const auto& r : d.rows) {
    const double sign = r[d.col("shape")] == "down" ? -1.0 : 1.0;
    CHECK((r[d.col("shape")] == "up" || r[d.col("shape")] == "down"));
    CHECK(r[d.col("b")] == "1|2");  // the setting stands in for b
    CHECK(r[d.col("tag")] == "none");
    CHECK(r[d.col("init")] == "second");
    CHECK(std::stod(r[d.col("x")]) == Approx(sign * 2.0 * std::stod(r[d.col("a")])).margin(1e-8));
  }
  bool tol = false;  // the model's own solver defaults reach the run
  for (const auto& c : d.comments) tol = tol || c.find("tol=1e-09") != std::string::npos;
  CHECK(tol);
  // Bad input: the model's check, an unknown choice or start, a non-integer n, b with b_list.
  for (std::vector<std::string> bad : {std::vector<std::string>{"--tag", "bad"}, {"--shape", "sideways"},
                                       {"--init", "third"}, {"--n", "1.5"}}) {
    CLI::App app;
    register_model<Choosy>(app);
    std::vector<std::string> args = {"saddle", "choosy", "--out", s.file("bad.csv"), "--no-progress"};
    args.insert(args.end(), bad.begin(), bad.end());
    CHECK_THROWS_AS(parse(app, args), InputError);
  }
  CLI::App app;
  register_model<Choosy>(app);
  CHECK_THROWS_AS(parse(app, {"saddle", "choosy", "--b", "1", "--b-list", "1,2"}), CLI::ParseError);
}

namespace {
// The card fields of `slr erm`: notes (a text column `why`, and `used` = the setting `base`
// doubled per refinement level), a stability column of its own name, a setting without a column,
// a default start, and the continuation solved in ascending order. Fixed point x* = a (+- 0.01
// over the two replicates at level 0, halved per level: HalfMap).
class Noted : public CurveModel {
 public:
  explicit Noted(const ParamValues& p) : base_(std::stoi(p.text("base"))) {}
  int replicates() const override { return 2; }
  bool prepare_level(int level) override { return level <= 3; }
  std::unique_ptr<FixedPointSystem> system(double a, int r, int level) const override {
    return std::make_unique<HalfMap>(a, (r == 0 ? 0.01 : -0.01) * std::ldexp(1.0, -level));
  }
  int refine_on() const override { return 0; }
  Stability stability(const CurvePoint& p) const override {
    return p.param > 1.5 ? Stability::Unstable : Stability::Stable;
  }
  std::vector<std::string> note_names() const override { return {"why", "used"}; }
  std::vector<std::string> notes(const CurvePoint& p) const override {
    return {p.param > 1.5 ? "large a" : "", std::to_string(base_ << p.level)};
  }
  static std::vector<CurveStart> starts(const ParamValues& p) {
    std::vector<CurveStart> s = Counting::starts(p);
    s.push_back(s.front());
    s.back().label = "other";
    return s;
  }
  static ModelCard card() {
    ModelCard c = Counting::card();
    c.command = "noted";
    c.settings = {{"base", "16", "points behind a point at level 0"}};
    c.settings.back().column = false;
    c.stability_column = "my_stability";
    c.default_init = "other";
    c.sorted_continuation = true;
    c.target_se = 0.003;  // the s.e. of x is 0.01 at level 0, 0.005 at 1, 0.0025 at 2
    return c;
  }

 private:
  int base_;
};
}  // namespace

TEST_CASE("generic command: model notes, the stability column's name, a setting without a column, "
          "the default start and a sorted continuation", "[tools]") {
  Scratch s;
  {
    CLI::App app;
    register_model<Noted>(app);
    parse(app, {"saddle", "noted", "--a", "2,1", "--base", "32", "--out", s.file("n.csv"), "--no-progress"});
  }
  const CsvData d = read_csv(s.file("n.csv"));
  REQUIRE(d.rows.size() == 2);  // the default start only, a = 1 then 2
  CHECK(d.col("base") < 0);
  CHECK(d.col("stability") < 0);
  REQUIRE(d.col("my_stability") >= 0);
  REQUIRE(d.col("why") > d.col("my_stability"));
  REQUIRE(d.col("used") == d.col("why") + 1);
  CHECK(d.rows[0][d.col("a")] == "1");
  CHECK(d.rows[1][d.col("a")] == "2");
  for (const auto& r : d.rows) {
    CHECK(r[d.col("init")] == "other");
    const bool large = r[d.col("a")] == "2";
    CHECK(r[d.col("my_stability")] == (large ? "unstable" : "stable"));
    CHECK(r[d.col("why")] == (large ? "large a" : ""));
    // Refined to level 2 where stable (s.e. 0.0025 <= 0.003); an unstable point is not refined.
    CHECK(r[d.col("level")] == (large ? "0" : "2"));
    CHECK(r[d.col("used")] == (large ? "32" : "128"));
  }
}
