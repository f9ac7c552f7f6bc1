// Tests of the SLR validation cases and verdicts (mc/slr_validate.*; docs/mc_slr.md).
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <stdexcept>

#include "mc/slr_reference.hpp"
#include "mc/slr_validate.hpp"

using namespace saddle;
using namespace saddle::slr;
using namespace saddle::slr::mc;

TEST_CASE("validation case domain: the population module's nu, the replica's L and activations",
          "[mc][slr]") {
  ValidationCase c;
  c.kind = CaseKind::Population;
  c.set.lengths = {2};
  c.m_k = 1;
  c.q_k = 1.5;
  c.m_v = 0.5;
  c.q_v = 0.5;
  c.D = 8;
  c.seeds = 2;
  c.n_test = 10;
  c.set.nu = 1000;
  CHECK_NOTHROW(check_case(c));
  c.set.nu = 1000.5;
  CHECK_THROWS_AS(check_case(c), std::invalid_argument);
  c.set.task = Task::Max;
  c.set.nu = 1000;
  CHECK_NOTHROW(check_case(c));
  c.set.nu = 1000.5;
  CHECK_THROWS_AS(check_case(c), std::invalid_argument);
  c.set.nu = 2;
  c.q_k = 1e13;  // above softmax's key-overlap domain (1e6 in max-SLR)
  CHECK_THROWS_AS(check_case(c), std::invalid_argument);
  c.q_k = 1.5;
  c.set.nu = std::numeric_limits<double>::infinity();
  CHECK_NOTHROW(check_case(c));
  ValidationCase e = c;
  e.kind = CaseKind::Erm;
  e.set.task = Task::Spiked;
  e.set.nu = 2;
  e.alpha = 2;
  e.set.lengths = {5};
  CHECK_THROWS_AS(check_case(e), std::invalid_argument);  // the replica covers L <= 4
  e.set.lengths = {4};
  e.set.activation = Activation::Erf;
  CHECK_THROWS_AS(check_case(e), std::invalid_argument);  // softmax and linear only
}

TEST_CASE("validation verdict: 4 combined s.e. plus allowance", "[mc][slr]") {
  double z = 0;
  CHECK(slr_verdict(1.0, 0.0, 1.039, 0.01, 0.0, &z) == "pass");
  CHECK(z == Approx(3.9));
  CHECK(slr_verdict(1.0, 0.0, 1.041, 0.01, 0.0, &z) == "FAIL");
  CHECK(slr_verdict(1.0, 0.0, 1.041, 0.01, 0.002, &z) == "pass");
  CHECK(slr_verdict(1.0, 0.03, 1.1, 0.04, 0.0, &z) == "pass");  // combined s.e. 0.05
  CHECK(z == Approx(2.0));
  CHECK(slr_verdict(1.0, 0.0, std::nan(""), 0.01, 0.0, &z) == "FAIL");
  // below double rounding: a risk of 4e-18 measured as exactly 0 with s.e. 0
  CHECK(slr_verdict(3.7e-18, 0.0, 0.0, 0.0, 0.0, &z) == "pass");
  CHECK(slr_verdict(1e-9, 0.0, 0.0, 0.0, 0.0, &z) == "FAIL");
}

TEST_CASE("built-in validation cases: every activation has a population case", "[mc][slr]") {
  for (bool quick : {true, false}) {
    const auto cases = builtin_slr_cases(quick);
    for (Activation a :
         {Activation::Softmax, Activation::Linear, Activation::Erf, Activation::Softplus}) {
      bool found = false;
      for (const auto& c : cases)
        found = found || (c.kind == CaseKind::Population && c.set.activation == a);
      CHECK(found);
    }
    for (const auto& c : cases) CHECK_NOTHROW(check_case(c));  // inside their own domain
    for (const auto& c : cases)
      if (c.kind == CaseKind::Population) {
        CHECK(c.q_k >= c.m_k * c.m_k * (1 - 1e-12));
        CHECK(c.allowance == 0.0);
      }
  }
}


TEST_CASE("reference cases: 1RSB against ERM at D = inf, verdicts from the committed numbers", "[mc][slr]") {
  std::vector<ValidationCase> refs;
  for (const auto& c : builtin_slr_cases(true))
    if (c.kind == CaseKind::Reference) refs.push_back(c);
  std::size_t both = 0;  // window points with both an ERM D = inf value and a 1RSB point
  for (const auto& e : erm_inf_reference()) both += find_rsb(e.activation, e.alpha) ? 1 : 0;
  CHECK(refs.size() == both);
  const auto rows = run_slr_validation(refs, 1);  // no simulation: committed data only
  REQUIRE(rows.size() == 6 * refs.size());
  for (std::size_t i = 0; i + 1 < rows.size(); i += 2) {
    const ValidationRow& th = rows[i];
    const ValidationRow& mc = rows[i + 1];
    CHECK(th.source == "theory");
    CHECK(mc.source == "mc");
    const ValidationCase* c = nullptr;
    for (const auto& x : refs)
      if (x.name == th.case_name) c = &x;
    REQUIRE(c != nullptr);
    const RsbReferencePoint* r = find_rsb(to_string(c->set.activation), c->alpha);
    REQUIRE(r != nullptr);
    const bool within = std::abs(mc.value - th.value) <= 4 * std::sqrt(mc.se * mc.se + th.se * th.se);
    if (!r->converged) CHECK(mc.verdict == "rsb_unconverged");
    else CHECK(mc.verdict == (within ? "pass" : "rsb_gap"));
  }
}
