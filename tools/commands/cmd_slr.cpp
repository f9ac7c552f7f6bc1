// `saddle slr`: the command group of single-location regression (docs/equations/README.md).
#include "tools/commands/cmd_slr.hpp"

#include "tools/cli/cli_common.hpp"

namespace saddle {
std::vector<std::vector<int>> parse_length_laws(const std::string& L, const std::string& L_dist,
                                                double max_L) {
  ParamDomain Lr;
  Lr.integer = true;
  Lr.min = 1;
  Lr.max = max_L;
  std::vector<std::vector<int>> laws;
  if (!L_dist.empty()) {
    if (L != "2") throw InputError("--L and --L-dist are mutually exclusive");
    std::vector<int> set;
    for (double v : parse_sweep(L_dist, "L-dist", Lr)) set.push_back(static_cast<int>(v));
    laws.push_back(set);
  } else {
    for (double v : parse_sweep(L, "L", Lr)) laws.push_back({static_cast<int>(v)});
  }
  return laws;
}

slr::Task parse_task_option(const std::string& task) {
  return as_input([&] { return slr::parse_task(task); }, "--task");
}

ParamDomain nu_rule(slr::Task task) {
  ParamDomain r = nonneg_rule();
  r.allow_inf = task == slr::Task::Max;
  return r;
}

std::string length_key(const std::vector<int>& law) {
  std::string k;
  for (int L : law) k += (k.empty() ? "" : "|") + std::to_string(L);
  return k;
}

void register_slr(CLI::App& app) {
  CLI::App* slr = app.add_subcommand("slr", "Single-location regression (docs/equations/README.md)");
  slr->require_subcommand(1);
  register_slr_population(*slr);
  // slr erm, slr erm-1rsb, slr bayes: registered models (tools/cli/models.cpp)
}
}  // namespace saddle
