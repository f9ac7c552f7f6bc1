// Theory against direct simulation for SLR (`saddle validate slr`; docs/equations/slr_population.md §3, docs/equations/slr_replica.md §4, §6):
//  * population cases: (S7) via population_risk() against the population mode of mc/slr_erm
//    (explicit k, v at finite D; exact at any D, so no finite-size allowance), for all four
//    activations, spiked and max, fixed and variable L;
//  * Bayes cases: (S9) via bayes_risk() against the Bayes predictor sum_l p_l z*_l simulated on
//    the same fresh samples (exact at any D);
//  * ERM cases: the replica fixed point (equations/slr_replica.hpp, informed continuation) against
//    L-BFGS ERM at finite D, over seeds: overlaps, test and training error.
// Verdict per (case, quantity): pass when |mc - theory| <= 4 sqrt(se_mc^2 + se_th^2) + allowance,
// where the allowance is stated per case with its reason; "known_gap" marks a documented
// disagreement with its diagnosis (docs/equations/slr_replica.md §6, docs/mc_slr.md) that does not change the exit status;
// "rs_unstable" marks a disagreement where the replica point is locally unstable (replicon
// eigenvalue above 1 by more than 2 s.e.), where RS is not expected to hold (not a failure).
// Reference cases (no simulation, mc/slr_reference.hpp): in the RS-unstable windows the committed
// 1RSB fixed point against the committed ERM extrapolated to D = inf: pass as above (allowance 0),
// "rsb_gap" where a converged 1RSB point disagrees beyond 4 s.e. (1RSB is not exact there either),
// "rsb_unconverged" where the 1RSB iteration did not converge (no theory value to compare).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "mc/slr_erm.hpp"

namespace saddle {
namespace slr {
namespace mc {

enum class CaseKind { Population, Erm, Reference };

struct KnownGap {
  std::string quantity;  // e.g. "train_error"
  std::string reason;
};

struct ValidationCase {
  std::string name;
  CaseKind kind = CaseKind::Population;
  SimSetting set;
  int D = 64, seeds = 8, n_test = 20000;
  // population
  double m_k = 0, q_k = 0, m_v = 0, q_v = 0;
  // ERM
  double lambda = 0.1, alpha = 1.0;
  Init init = Init::Random;
  int replica_points = 4096, replica_replicates = 8;
  // finite-size allowance (absolute) and its reason
  double allowance = 0.0;
  std::string allowance_reason;
  std::vector<KnownGap> known_gaps;
};

struct ValidationRow {
  std::string case_name, kind, quantity, source;  // source: theory | mc
  double value = 0, se = 0;
  double z = 0, allowance = 0;  // mc rows only
  std::string verdict;  // mc rows: pass | FAIL | known_gap | rs_unstable | no_theory | rsb_gap | rsb_unconverged
  std::string note;
};

// The built-in cases (quick: a subset that runs in a few seconds on two cores).
std::vector<ValidationCase> builtin_slr_cases(bool quick);

// Domain of a case: the population module's (nu <= kPopulationMaxNu, max-SLR: or inf; (m_k, q_k)
// as check_population_domain; |erf b| <= kPopulationMaxErfB; equations/slr_population.hpp),
// |m_v| <= 1e3, q_v <= 1e6; ERM cases: the replica's (L <= 4, softmax or linear, alpha in [1e-3, 1e4], lambda and delta in [0, 1e4]);
// D >= 4, seeds >= 2, n_test >= 1. Throws std::invalid_argument naming the bound.
constexpr double kValidationMaxV = 1e3, kValidationMinAlpha = 1e-3, kValidationMaxAlpha = 1e4,
                 kValidationMaxScale = 1e4;
void check_case(const ValidationCase& c);

// Runs the cases (theory and simulation; groups of replica curves, then cases, in parallel) and
// returns two rows per compared quantity, in case order. Checks every case first (check_case).
// An interrupt (solver/interrupt.hpp) stops it within the polls of the solvers: with
// `complete_cases` given, the rows of the cases that were complete before the first unfinished
// one are returned and *complete_cases says how many (cases.size() when none was stopped);
// without it, Interrupted is thrown. on_complete(rows, k), when given, is called (one call at a
// time) each time the leading complete cases grow to k, with their rows: what a stop keeps.
std::vector<ValidationRow> run_slr_validation(const std::vector<ValidationCase>& cases,
                                              std::uint64_t seed, std::size_t* complete_cases = nullptr,
    const std::function<void(const std::vector<ValidationRow>&, std::size_t)>& on_complete = {});

// Verdict of one comparison: pass iff |mc - theory| <= 4 sqrt(se_mc^2 + se_th^2) + allowance, or
// |mc - theory| <= 1e-12 (double rounding); z = difference / combined s.e.
std::string slr_verdict(double theory, double theory_se, double mc, double mc_se, double allowance,
                        double* z);

}  // namespace mc
}  // namespace slr
}  // namespace saddle
