// run_cli: the body of the `saddle` program, shared by main() and the Python module.
#include "tools/cli/app.hpp"

#include <gsl/gsl_errno.h>

#include <iostream>
#include <new>

#include "saddle_version.hpp"
#include "solver/interrupt.hpp"
#include "tools/cli/cli_common.hpp"
#include "tools/figures/cmd_figures.hpp"
#include "tools/cli/model_command.hpp"
#include "tools/runner/runner.hpp"

namespace saddle {
namespace {
// An error message as one line: control characters (a newline in a file name or a title) are
// shown as '?', so stderr always gets exactly one line per error.
std::string one_line(const char* what) {
  std::string s = what;
  for (char& ch : s)
    if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) ch = '?';
  return s;
}
}  // namespace

std::unique_ptr<CLI::App> make_app() {
  auto app = std::make_unique<CLI::App>(
      "saddle: order-parameter fixed-point equations of high-dimensional learning theory");
  app->name("saddle");
  app->require_subcommand(1);
  app->set_version_flag("--version", std::string("saddle ") + SADDLE_VERSION + build_features());
  register_slr(*app);     // the group `slr` first: registered models join it (slr bayes)
  register_models(*app);  // ridge, ridge-classifier, slr bayes, ... (tools/cli/models.cpp)
  register_rmt(*app);
  register_groups(*app);
  register_merge(*app);
  register_plot(*app);
  register_figures(*app);
  reject_empty_values(*app);
  return app;
}

int run_cli(const std::vector<std::string>& args, std::string* error_message) {
  gsl_set_error_handler_off();
  std::vector<std::string> copy = args;
  if (copy.empty()) copy.push_back("saddle");
  for (std::size_t i = 1; i < copy.size(); ++i)  // a C argument vector would cut the text at the NUL
    if (copy[i].find('\0') != std::string::npos) {
      const std::string msg = "saddle: error: argument " + std::to_string(i) + " ('" + one_line(copy[i].c_str()) +
                              "...') contains a NUL character";
      if (error_message)
        *error_message = msg;
      else
        std::cerr << msg << "\n";
      return kExitBadInput;
    }
  std::vector<char*> argv;
  for (auto& a : copy) argv.push_back(&a[0]);
  argv.push_back(nullptr);
  const int argc = static_cast<int>(copy.size());
  set_command_line(argc, argv.data());
  std::unique_ptr<CLI::App> app = make_app();
  auto fail = [&](const std::string& message, int code) {
    if (error_message)
      *error_message = message;
    else
      std::cerr << message << "\n";
    return code;
  };
  try {
    app->parse(argc, argv.data());
  } catch (const CLI::CallForHelp& e) {
    return app->exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app->exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app->exit(e);
  } catch (const CLI::ParseError& e) {
    return fail("saddle: error: " + one_line(e.what()) + " (see --help)", kExitBadInput);
  } catch (const InputError& e) {
    return fail("saddle: error: " + one_line(e.what()), kExitBadInput);
  } catch (const StrictFailure& e) {
    return fail("saddle: error: " + one_line(e.what()), kExitStrict);
  } catch (const LateFailure& e) {
    return fail("saddle: error: " + one_line(e.what()), kExitLate);
  } catch (const Interrupted& e) {
    return fail("saddle: " + one_line(e.what()), kExitInterrupted);
  } catch (const std::bad_alloc&) {
    return fail("saddle: error: out of memory (reduce the grid or the sizes)", 1);
  } catch (const std::exception& e) {
    // The grid runner reports a chain's exception as a plain runtime_error: the flag tells.
    if (interrupt_requested()) return fail("saddle: interrupted", kExitInterrupted);
    return fail("saddle: error: " + one_line(e.what()), 1);
  } catch (...) {
    return fail("saddle: error: internal error (an exception of unknown type)", 1);
  }
  return 0;
}

}  // namespace saddle
