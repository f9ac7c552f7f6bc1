// Tests of the built-in RMT validation cases (mc/rmt_validate.*; docs/equations/rmt.md §5, §6,
// §8.3): the case list, the verdict rule recomputed from each row, and the ridge rows against the
// closed form (LR3) computed independently here.
#include <catch2/catch.hpp>

#include <cmath>

#include "equations/rmt_ridge.hpp"
#include "mc/rmt_validate.hpp"

using namespace saddle;
using namespace saddle::rmt;

TEST_CASE("rmt validation: 8 cases x 3 gammas x 3 models, verdicts follow the rule", "[rmt][mc]") {
  CHECK(mc::builtin_rmt_cases().size() == 8);
  const auto rows = mc::run_rmt_validation(64, 4, 1);
  REQUIRE(rows.size() == 72);
  for (const auto& r : rows) {
    INFO("case " << r.case_number << " " << mc::to_string(r.model) << " gamma " << r.gamma);
    CHECK(std::isfinite(r.mc_mean));
    CHECK(r.diff == Approx(r.mc_mean - r.theory).margin(1e-15));
    const bool rule = r.diff <= 4 * r.mc_se && r.diff >= -4 * r.mc_se - r.allowance;
    if (r.model == mc::Model::Ridge) {
      CHECK(r.pass == rule);
      CHECK(r.theory == Approx(ridge_baseline(r.c, r.gamma, 1.0).error).epsilon(1e-14));
      CHECK(r.allowance == 0.0);
    } else if (r.model == mc::Model::True) {
      CHECK(r.allowance == Approx(0.1 / std::sqrt(double(r.p))).epsilon(1e-14));
    }
    if (!rule) CHECK(!r.pass);
  }
}
