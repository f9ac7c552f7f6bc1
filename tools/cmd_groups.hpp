// Registration hooks of the `mc` and `validate` command groups (Monte Carlo and theory-vs-MC).
#pragma once
#include <CLI/CLI.hpp>

namespace saddle {
void register_mc_rmt(CLI::App& mc);
void register_validate_rmt(CLI::App& validate);
void register_mc_slr(CLI::App& mc);
void register_validate_slr(CLI::App& validate);
}  // namespace saddle
