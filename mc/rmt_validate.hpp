// The deterministic equivalent of nonlinear attention (docs/equations/rmt.md §6 (R5)) and the
// closed-form ridge baseline (§5 (LR3)) against the finite-size simulation of §8
// (mc/rmt_sim.hpp), on the built-in cases of `saddle validate rmt`: tanh and ReLU, c = 1/2 and 2,
// no weights (w = 0) and aligned weights w_K = w_Q = w e1 (w = 1), snr = 1, gamma = 1e-3, 0.1, 1,
// diagonal removed.
// Verdict per (case, gamma, model): pass if -4 se - allowance <= mc - theory <= 4 se; the
// allowance 0.1/sqrt(p) applies to the true model only (§8.3: it sits 0.002-0.006 below the DE at
// p = 256-512, shrinking like 1/sqrt p). For the true and surrogate models the simulated value is
// the paired estimate E_model - E_ridge (same draws) + (LR3), a control variate 5-10x less noisy
// than the plain mean; the ridge baseline is compared through its plain mean.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "mc/rmt_sim.hpp"

namespace saddle {
namespace rmt {
namespace mc {

struct RmtValidationCase {
  std::string activation;
  double c = 0.5, w = 0.0;
};
// The 8 built-in cases, in the order of the table.
std::vector<RmtValidationCase> builtin_rmt_cases();
// The gamma grid and the signal of every case.
std::vector<double> rmt_validation_gammas();
constexpr double kRmtValidationSnr = 1.0;

struct RmtValidationRow {
  int case_number = 0;  // 1-based
  std::string activation;
  double c = 0, snr = 0, w = 0, gamma = 0;
  Model model = Model::True;
  int n = 0, p = 0, draws = 0;
  double theory = 0, mc_mean = 0, mc_se = 0, diff = 0, z = 0, allowance = 0;
  bool pass = false;
};

// Runs every built-in case (cases in parallel, draws inside each in parallel; solver/parallel.hpp)
// with n tokens and `draws` draws from `seed`; rows in case, gamma, model order.
// An interrupt (solver/interrupt.hpp): with `complete_cases` given, the rows of the cases complete
// before the first unfinished one, and their number (the number of cases when none was stopped);
// without it, Interrupted is thrown. on_complete(rows, k), when given, is called (one call at a
// time) each time the leading complete cases grow to k, with their rows: what a stop keeps.
std::vector<RmtValidationRow> run_rmt_validation(int n, int draws, std::uint64_t seed,
                                                 std::size_t* complete_cases = nullptr,
    const std::function<void(const std::vector<RmtValidationRow>&, std::size_t)>& on_complete = {});
// The number of built-in cases.
std::size_t rmt_validation_cases();

}  // namespace mc
}  // namespace rmt
}  // namespace saddle
