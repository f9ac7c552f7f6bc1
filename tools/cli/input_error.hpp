// Bad input (exit code 2, README "Errors and exit codes"): the one exception type that the option
// checks, the file readers and writers (tools/runner/file_io.hpp) and the commands throw for it.
#pragma once
#include <stdexcept>
#include <string>

namespace saddle {

struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Runs f, a parse or a check of user input by a lower floor (equations/, mc/), which refuses with
// std::invalid_argument: that refusal becomes InputError, its message prefixed "flag: " when a
// flag is named and followed by `context` (e.g. " (at --nu 2)"). The one place where the commands
// turn a model's refusal into bad input.
template <class F>
auto as_input(F&& f, const std::string& flag = {}, const std::string& context = {}) -> decltype(f()) {
  try {
    return f();
  } catch (const std::invalid_argument& e) {
    throw InputError((flag.empty() ? std::string() : flag + ": ") + e.what() + context);
  }
}

}  // namespace saddle
