// `saddle slr erm --symmetry 1rsb`: the one-step replica-symmetry-broken fixed point at zero
// temperature (docs/equations/slr_rsb.md), run on the plan that plan_slr_erm has checked
// (tools/commands/slr_erm_options.hpp: the 1RSB settings and curve options are part of it).
#pragma once
#include "tools/commands/slr_erm_options.hpp"

namespace saddle {

// Runs the 1RSB curves (one chain per setting, as RS) and writes the CSV.
void run_erm_rsb(const ErmCli& o, const ErmPlan& plan);

}  // namespace saddle
