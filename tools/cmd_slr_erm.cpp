// `saddle slr erm` (placeholder until the module lands).
#include "tools/cmd_slr.hpp"

namespace saddle {
void register_slr_erm(CLI::App& slr) {}
}  // namespace saddle
