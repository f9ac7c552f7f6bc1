// `saddle slr population` (placeholder until the module lands).
#include "tools/cmd_slr.hpp"

namespace saddle {
void register_slr_population(CLI::App& slr) {}
}  // namespace saddle
