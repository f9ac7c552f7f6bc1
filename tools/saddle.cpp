// main() of the `saddle` program: runs saddle::run_cli (tools/app.cpp), which builds the CLI11
// app and turns every input error into one line on stderr with exit code 2 (no partial CSV on
// stdout); under MPI only rank 0 reports the error. Exit codes (README "Errors and exit codes"):
// 0 ok, 1 validation disagreement or internal error, 2 bad input, 3 --strict and a point did not
// converge, 4 the CSV is complete but its --plot figure failed, 130 interrupted by SIGINT/SIGTERM.
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#ifdef SADDLE_HAVE_MPI
#include <mpi.h>
#endif

#include "tools/app.hpp"

namespace {
int rank0 = 1;  // 0 on MPI ranks other than 0: they stay silent about errors

int run(int argc, char** argv);
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
  std::string message;
  const int rc = saddle::run_cli(std::vector<std::string>(argv, argv + argc), &message);
  if (!message.empty() && rank0) std::cerr << message << "\n";
  return rc;
}
}  // namespace
