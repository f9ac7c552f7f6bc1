// The `saddle slr` command group: each SLR subcommand registers itself on the group.
#pragma once
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "equations/slr_model.hpp"
#include "tools/cli/cli_common.hpp"

namespace saddle {
// Length laws of an SLR command: one fixed length per value of the `--L` sweep, or the single
// variable-length set of `--L-dist` (uniform per sample, docs/equations/slr_population.md §1.4). The two are mutually
// exclusive (`--L` must be at its default "2" when `--L-dist` is given). Lengths in 1..max_L.
std::vector<std::vector<int>> parse_length_laws(const std::string& L, const std::string& L_dist,
                                                double max_L);
// `--task spiked|max`, with InputError on anything else.
slr::Task parse_task_option(const std::string& task);
// The rule of a `--nu` sweep: >= 0, inf allowed only for max-SLR.
ParamDomain nu_rule(slr::Task task);
// Domain of the replica commands (equations/slr_model.hpp).
using slr::kSlrMaxAlpha;
using slr::kSlrMaxNu;
using slr::kSlrMaxScale;
using slr::kSlrMinAlpha;
// The CSV `L` value of a length law: "3", or "1|2|3" for a variable length.
std::string length_key(const std::vector<int>& law);

void register_slr_population(CLI::App& slr);  // tools/commands/cmd_slr_population.cpp (docs/equations/slr_population.md §1-§3, §7a)
}  // namespace saddle
