// `saddle slr bayes` (placeholder until the module lands).
#include "tools/cmd_slr.hpp"

namespace saddle {
void register_slr_bayes(CLI::App& slr) {}
}  // namespace saddle
