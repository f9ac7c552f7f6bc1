// main() of the `saddle` program: builds the CLI11 app from the subcommand modules, and turns
// every input error into one line on stderr with exit code 2 (no partial CSV on stdout).
#include <gsl/gsl_errno.h>

#include <iostream>

#include "saddle_version.hpp"
#include "tools/cli_common.hpp"

int main(int argc, char** argv) {
  gsl_set_error_handler_off();
  saddle::set_command_line(argc, argv);
  CLI::App app{"saddle: order-parameter fixed-point equations of high-dimensional learning theory"};
  app.name("saddle");
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("saddle ") + SADDLE_VERSION + saddle::build_features());
  saddle::register_ridge(app);
  saddle::register_slr(app);
  saddle::register_rmt(app);
  saddle::register_groups(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "saddle: error: " << e.what() << " (see --help)\n";
    return 2;
  } catch (const saddle::InputError& e) {
    std::cerr << "saddle: error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "saddle: error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
