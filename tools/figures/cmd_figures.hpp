// `saddle figures`: the papers' figures on demand (tools/figures/cmd_figures.cpp); the panel table is
// tools/figures/figures_panels.cpp.
#pragma once
#include <CLI/CLI.hpp>

namespace saddle {

void register_figures(CLI::App& app);

}  // namespace saddle
