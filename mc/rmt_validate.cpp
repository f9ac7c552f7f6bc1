// The built-in validation cases of nonlinear attention: see mc/rmt_validate.hpp
// (docs/equations/rmt.md §5, §6, §8.3).
#include "mc/rmt_validate.hpp"

#include <cmath>

#include "equations/rmt_attention.hpp"
#include "equations/rmt_ridge.hpp"
#include "solver/interrupt.hpp"
#include "solver/parallel.hpp"

namespace saddle {
namespace rmt {
namespace mc {

std::vector<RmtValidationCase> builtin_rmt_cases() {
  std::vector<RmtValidationCase> cases;
  for (const char* act : {"tanh", "relu"})
    for (double c : {0.5, 2.0})
      for (double w : {0.0, 1.0}) cases.push_back({act, c, w});
  return cases;
}

std::vector<double> rmt_validation_gammas() { return {1e-3, 0.1, 1.0}; }

std::size_t rmt_validation_cases() { return builtin_rmt_cases().size(); }

std::vector<RmtValidationRow> run_rmt_validation(int n, int draws, std::uint64_t seed,
                                                 std::size_t* complete_cases,
    const std::function<void(const std::vector<RmtValidationRow>&, std::size_t)>& on_complete) {
  const std::vector<RmtValidationCase> cases = builtin_rmt_cases();
  const std::vector<double> gammas = rmt_validation_gammas();
  const double snr = kRmtValidationSnr;
  std::vector<std::vector<RmtValidationRow>> per_case(cases.size());
  auto run_case = [&](std::size_t ci) {
    const RmtValidationCase& cs = cases[ci];
    SimSetting s;
    s.n = n;
    s.c = cs.c;
    s.snr = snr;
    s.act = parse_activation(cs.activation);
    s.h = hermite_data(s.act);
    s.wk << cs.w, 0, 0;
    s.wq << cs.w, 0, 0;
    s.gammas = gammas;
    s.models = {Model::True, Model::Surrogate, Model::Ridge};
    s.draws = draws;
    s.seed = seed;
    const SimSummary sum = simulate(s);
    Geometry geo;
    geo.mu << std::sqrt(snr), 0, 0;
    geo.wk = s.wk;
    geo.wq = s.wq;
    for (std::size_t k = 0; k < gammas.size(); ++k) {
      const double g = gammas[k];
      const AttentionResult de = solve_attention(make_params(s.c, g, s.h, false, geo));
      const double rr = ridge_baseline(s.c, g, snr).error;
      for (int mi = 0; mi < 3; ++mi) {
        RmtValidationRow row;
        row.case_number = static_cast<int>(ci) + 1;
        row.activation = cs.activation;
        row.c = cs.c;
        row.snr = snr;
        row.w = cs.w;
        row.gamma = g;
        row.model = s.models[mi];
        row.n = n;
        row.p = s.p();
        row.draws = draws;
        if (row.model == Model::Ridge) {
          row.theory = rr;
          row.mc_mean = sum.error[mi][k].mean;
          row.mc_se = sum.error[mi][k].se;
        } else {
          row.theory = de.error;
          row.mc_mean = sum.diff_ridge[mi][k].mean + rr;
          row.mc_se = sum.diff_ridge[mi][k].se;
          if (row.model == Model::True) row.allowance = 0.1 / std::sqrt(static_cast<double>(s.p()));
        }
        row.diff = row.mc_mean - row.theory;
        row.z = row.mc_se > 0 ? row.diff / row.mc_se : 0.0;
        row.pass = (row.model == Model::Ridge || de.converged) && std::isfinite(row.mc_mean) &&
                   row.diff <= 4.0 * row.mc_se && row.diff >= -4.0 * row.mc_se - row.allowance;
        per_case[ci].push_back(row);
      }
    }
  };
  const std::size_t complete = parallel_cases(cases.size(), complete_cases != nullptr, run_case, [&](std::size_t k) {
    if (on_complete) on_complete(leading_rows(per_case, k), k);
  });
  if (complete_cases) *complete_cases = complete;
  return leading_rows(per_case, complete);
}

}  // namespace mc
}  // namespace rmt
}  // namespace saddle
