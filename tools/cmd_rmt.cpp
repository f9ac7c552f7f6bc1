// `saddle rmt` (placeholder until the module lands).
#include "tools/cli_common.hpp"

namespace saddle {
void register_rmt(CLI::App& app) {}
}  // namespace saddle
