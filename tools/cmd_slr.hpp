// The `saddle slr` command group: each SLR subcommand registers itself on the group.
#pragma once
#include <CLI/CLI.hpp>

namespace saddle {
void register_slr_population(CLI::App& slr);  // tools/cmd_slr_population.cpp (spec §1-§3, §7a)
void register_slr_erm(CLI::App& slr);         // tools/cmd_slr_erm.cpp (spec §4, §7b)
void register_slr_bayes(CLI::App& slr);       // tools/cmd_slr_bayes.cpp (spec §5)
}  // namespace saddle
