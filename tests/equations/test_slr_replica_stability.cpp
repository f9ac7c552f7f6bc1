// Tests of the RS verdict (equations/slr_replica_stability.cpp, docs/equations/slr_replica.md
// (S22a), §4.9): the replicon rule and the jump rule, on hand-made inputs.
#include <catch2/catch.hpp>

#include "equations/slr_replica_stability.hpp"

using namespace saddle;
using namespace saddle::slr;

TEST_CASE("RS verdict: replicon first, then the jumps", "[slr][replica][preint]") {
  // Replicon clearly above 1: unstable for the replicon, whatever the jumps.
  RsVerdict v = rs_verdict(1.5, 0.05, 0.5, 0.01);
  CHECK(v.stability == Stability::Unstable);
  CHECK(v.reason == RsReason::Replicon);
  // Replicon clearly below 1, jump share significantly above the floor: unstable, jumps.
  v = rs_verdict(0.5, 0.05, kJumpFloor + 0.05, 0.01);
  CHECK(v.stability == Stability::Unstable);
  CHECK(v.reason == RsReason::Jumps);
  // Jump share above the floor but not by 2 s.e.: the replicon's verdict stands.
  v = rs_verdict(0.5, 0.05, kJumpFloor + 0.01, 0.01);
  CHECK(v.stability == Stability::Stable);
  CHECK(v.reason == RsReason::None);
  CHECK(to_string(v.reason).empty());
  // Replicon within 2 s.e. of 1: marginal, reason replicon.
  v = rs_verdict(0.98, 0.05, 0.0, 0.0);
  CHECK(v.stability == Stability::Marginal);
  CHECK(to_string(v.reason) == "replicon");
  CHECK(to_string(RsReason::Jumps) == "jumps");
}
