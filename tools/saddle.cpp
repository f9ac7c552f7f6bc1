// main() of the `saddle` program: runs saddle::run_cli (tools/cli/app.cpp), which builds the CLI11
// app and turns every input error into one line on stderr with exit code 2 (no partial CSV on
// stdout); under MPI only rank 0 reports the error. Exit codes (README "Errors and exit codes"):
// 0 ok, 1 validation disagreement or internal error, 2 bad input, 3 --strict and a point did not
// converge, 4 the CSV is complete but its --plot figure failed, 130 interrupted by SIGINT/SIGTERM.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#ifdef SADDLE_HAVE_MPI
#include <mpi.h>
#endif

#include "tools/cli/app.hpp"
#include "tools/cli/cli_common.hpp"
#include "tools/runner/runner.hpp"

namespace {
// Runs the program; returns its exit code, and its error message in `message` (printed by main).
int run(int argc, char** argv, std::string& message) {
  return saddle::run_cli(std::vector<std::string>(argv, argv + argc), &message);
}
}  // namespace

int main(int argc, char** argv) {
  std::string message;
  saddle::set_program_process();
#ifdef SADDLE_HAVE_MPI
  // Initialise MPI only under a launcher (mpirun sets these), so plain runs stay MPI-free.
  const bool under_mpi = std::getenv("OMPI_COMM_WORLD_SIZE") || std::getenv("PMI_SIZE") ||
                         std::getenv("PMIX_RANK");
  if (under_mpi) {
    MPI_Init(&argc, &argv);
    int r = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    // Rank 0 writes; the others compute their chains of a grid run (tools/runner/runner.hpp) and run any
    // other command silently (its table would be the same), so each output appears once.
    if (r != 0) {
      saddle::set_output_rank(false);
      if (!std::freopen("/dev/null", "w", stdout)) std::fclose(stdout);
    }
    const int rc = run(argc, argv, message);
    // Every rank leaves the command (the grid runner ends on every rank with rank 0's outcome),
    // so all agree on one exit code here: rank 0's, or the worst of the others when rank 0
    // succeeded. Exit codes rather than MPI_Abort: an interrupted or refused run ends like a
    // single process (exit 130 or 2, one message), not in a launcher's abort report.
    int rc0 = rc, worst = rc;
    MPI_Bcast(&rc0, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (!message.empty() && (r == 0 || (rc0 == 0 && rc != 0))) std::cerr << message << "\n";
    MPI_Finalize();
    return rc0 != 0 ? rc0 : worst;
  }
#endif
  const int rc = run(argc, argv, message);
  if (!message.empty()) std::cerr << message << "\n";
  return rc;
}
