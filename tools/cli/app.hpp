// The `saddle` program as a function: builds the CLI11 app from the subcommand modules, parses
// `args` and runs the chosen subcommand in this process. Used by main() (tools/saddle.cpp) and by
// the Python module (python/src/core.cpp), so both run the same code and write the same CSV.
#pragma once
#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <vector>

namespace saddle {

// Runs `saddle args[1] args[2] ...` (args[0] is the program name). Returns the exit code: 0 on
// success, 2 for bad input, 1 for another failure, 130 when interrupted, 3 for a --strict failure (tools/cli/cli_common.hpp kExit*). On failure
// the one-line message ("saddle: error: ...") is stored in *error_message when it is given, and
// written to stderr otherwise. --help and --version print to stdout and return 0.
int run_cli(const std::vector<std::string>& args, std::string* error_message = nullptr);

// The app run_cli parses (all subcommands registered), for introspection of the options.
std::unique_ptr<CLI::App> make_app();

}  // namespace saddle
