// Unit tests of tools/cli/input_error.hpp: as_input turns a lower floor's std::invalid_argument
// into InputError (exit 2) with the flag and context around the message, passes the value
// through, and leaves every other exception as it was.
#include <catch2/catch.hpp>

#include <functional>
#include <stdexcept>
#include <string>

#include "tools/cli/input_error.hpp"

using namespace saddle;

namespace {
std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no InputError)";
}
}  // namespace

TEST_CASE("as_input: a refusal becomes InputError with flag and context", "[tools][input]") {
  auto refuse = [] { throw std::invalid_argument("unknown value 'x'"); };
  CHECK(message_of([&] { as_input(refuse); }) == "unknown value 'x'");
  CHECK(message_of([&] { as_input(refuse, "--task"); }) == "--task: unknown value 'x'");
  CHECK(message_of([&] { as_input(refuse, "--m-k", " (at --nu 2)"); }) == "--m-k: unknown value 'x' (at --nu 2)");
}

TEST_CASE("as_input: the value passes through, other exceptions are untouched", "[tools][input]") {
  CHECK(as_input([] { return 41 + 1; }, "--n") == 42);
  CHECK(as_input([] { return std::string("max"); }) == "max");
  CHECK_THROWS_AS(as_input([]() -> int { throw std::runtime_error("late"); }, "--n"), std::runtime_error);
  try {
    as_input([]() -> int { throw std::runtime_error("late"); }, "--n");
  } catch (const InputError&) {
    FAIL("a runtime_error is not bad input");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()) == "late");
  }
}
