// main() of the `saddle` program: builds the CLI11 app from the subcommand modules, and turns
// every input error into one line on stderr with exit code 2 (no partial CSV on stdout). Exit
// codes (README "Errors and exit codes"): 0 ok, 1 validation disagreement or internal error,
// 2 bad input, 3 --strict and a point did not converge, 130 interrupted by SIGINT/SIGTERM.
#include <gsl/gsl_errno.h>

#include <cstdlib>
#include <new>
#include <iostream>
#include <string>

#ifdef SADDLE_HAVE_MPI
#include <mpi.h>
#endif

#include "saddle_version.hpp"
#include "tools/cli_common.hpp"
#include "tools/cmd_figures.hpp"
#include "tools/model_command.hpp"
#include "tools/runner.hpp"

namespace {
int rank0 = 1;  // 0 on MPI ranks other than 0: they stay silent about errors

int run(int argc, char** argv);

// An error message as one line: control characters (a newline in a file name or a title) are
// shown as '?', so stderr always gets exactly one line per error.
std::string one_line(const char* what) {
  std::string s = what;
  for (char& ch : s)
    if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f) ch = '?';
  return s;
}
}  // namespace

int main(int argc, char** argv) {
#ifdef SADDLE_HAVE_MPI
  // Initialise MPI only under a launcher (mpirun sets these), so plain runs stay MPI-free.
  const bool under_mpi = std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE") ||
                         std::getenv("PMIX_RANK");
  if (under_mpi) {
    MPI_Init(&argc, &argv);
    int r = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    rank0 = r == 0;
  }
  int rc = run(argc, argv);
  if (under_mpi) {
    if (rc != 0) MPI_Abort(MPI_COMM_WORLD, rc);
    MPI_Finalize();
  }
  return rc;
#else
  return run(argc, argv);
#endif
}

namespace {
int run(int argc, char** argv) {
  gsl_set_error_handler_off();
  saddle::set_command_line(argc, argv);
  CLI::App app{"saddle: order-parameter fixed-point equations of high-dimensional learning theory"};
  app.name("saddle");
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("saddle ") + SADDLE_VERSION + saddle::build_features());
  saddle::register_models(app);  // ridge, ridge-classifier (tools/models.cpp)
  saddle::register_slr(app);
  saddle::register_rmt(app);
  saddle::register_groups(app);
  saddle::register_merge(app);
  saddle::register_plot(app);
  saddle::register_figures(app);
  saddle::reject_empty_values(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    if (rank0) std::cerr << "saddle: error: " << one_line(e.what()) << " (see --help)\n";
    return 2;
  } catch (const saddle::InputError& e) {
    if (rank0) std::cerr << "saddle: error: " << one_line(e.what()) << "\n";
    return saddle::kExitBadInput;
  } catch (const saddle::StrictFailure& e) {
    if (rank0) std::cerr << "saddle: error: " << one_line(e.what()) << "\n";
    return saddle::kExitStrict;
  } catch (const saddle::Interrupted& e) {
    if (rank0) std::cerr << "saddle: " << one_line(e.what()) << "\n";
    return saddle::kExitInterrupted;
  } catch (const std::bad_alloc&) {
    if (rank0) std::cerr << "saddle: error: out of memory (reduce the grid or the sizes)\n";
    return 1;
  } catch (const std::exception& e) {
    if (rank0) std::cerr << "saddle: error: " << one_line(e.what()) << "\n";
    return 1;
  }
  return 0;
}
}  // namespace
