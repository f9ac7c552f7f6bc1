// Bad input (exit code 2, README "Errors and exit codes"): the one exception type that the option
// checks, the file readers and writers (tools/runner/file_io.hpp) and the commands throw for it.
#pragma once
#include <stdexcept>

namespace saddle {

struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

}  // namespace saddle
