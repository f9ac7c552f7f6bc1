// The committed reference of the RS-unstable windows (mc/slr_reference.hpp).
// The two tables between the GENERATED markers are printed by
// data/validation/erm_inf/make_table.py --cpp from the committed CSVs of that
// directory (tests/mc/test_slr_reference.cpp checks them against the CSVs);
// edit the CSVs' commands, never the numbers here.
#include "mc/slr_reference.hpp"

#include <cmath>

namespace saddle {
namespace slr {
namespace mc {

ReferenceSetting reference_setting() { return {}; }

const std::vector<ErmInfPoint> &erm_inf_reference() {
  // activation, alpha, sizes, seeds, {value, se, exponent, fit p} for
  // test_error, train_loss, train_error
  static const std::vector<ErmInfPoint> table = {
      // GENERATED erm_inf BEGIN
      // GENERATED erm_inf END
  };
  return table;
}

const std::vector<RsbReferencePoint> &rsb_reference() {
  // activation, alpha, converged, residual, test_error, se, train_loss, se,
  // train_error, se, x_parisi, dq_k, dq_v
  static const std::vector<RsbReferencePoint> table = {
      // GENERATED rsb BEGIN
      // GENERATED rsb END
  };
  return table;
}

namespace {
bool same_alpha(double a, double b) {
  return std::fabs(a - b) <= 1e-9 * std::fmax(1.0, std::fabs(a));
}
} // namespace

const ErmInfPoint *find_erm_inf(const std::string &activation, double alpha) {
  for (const auto &p : erm_inf_reference())
    if (p.activation == activation && same_alpha(p.alpha, alpha))
      return &p;
  return nullptr;
}

const RsbReferencePoint *find_rsb(const std::string &activation, double alpha) {
  for (const auto &p : rsb_reference())
    if (p.activation == activation && same_alpha(p.alpha, alpha))
      return &p;
  return nullptr;
}

} // namespace mc
} // namespace slr
} // namespace saddle
