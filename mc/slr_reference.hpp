// The committed reference for the RS-unstable windows of spiked SLR (L = 3, nu
// = 2, lambda = 0.1, Delta = 0): ERM extrapolated to infinite size (`mc slr --D
// ... --extrapolate --restarts 4 --keep lowest`) and the 1RSB fixed point (`slr
// erm --symmetry 1rsb`) at the same points. The numbers are those of
// data/validation/erm_inf/ (the commands are in its README.md); they are
// compiled in so that `figures` and `validate slr` need neither the source tree
// nor minutes of simulation, and tests/mc/test_slr_reference.cpp checks that
// they equal the committed CSVs.
#pragma once
#include <string>
#include <vector>

namespace saddle {
namespace slr {
namespace mc {

// The setting every reference point shares.
struct ReferenceSetting {
  const char *task = "spiked";
  int L = 3;
  double nu = 2, lambda = 0.1, delta = 0;
};
ReferenceSetting reference_setting();

struct ExtrapolatedValue {
  double value = 0, se = 0;
  double exponent = 1; // the fit's p in a + b D^-p
  double fit_p = 1;    // goodness-of-fit p-value of the chosen fit
};

// ERM (lowest training loss of the restarts) at D = inf.
struct ErmInfPoint {
  std::string activation; // "linear" or "softmax"
  double alpha = 0;
  std::string sizes; // the --D list
  int seeds = 0;
  ExtrapolatedValue test_error, train_loss, train_error;
};

// The 1RSB fixed point (means over QMC replicates).
struct RsbReferencePoint {
  std::string activation;
  double alpha = 0;
  bool converged = false;
  double residual = 0;
  double test_error = 0, test_error_se = 0;
  double train_loss = 0,
         train_loss_se = 0; // (S13a) per sample; the free energy at convergence
  double train_error = 0, train_error_se = 0;
  double x_parisi = 0, dq_k = 0, dq_v = 0;
};

const std::vector<ErmInfPoint> &erm_inf_reference();
const std::vector<RsbReferencePoint> &rsb_reference();

// The point of each table at (activation, alpha), or nullptr.
const ErmInfPoint *find_erm_inf(const std::string &activation, double alpha);
const RsbReferencePoint *find_rsb(const std::string &activation, double alpha);

} // namespace mc
} // namespace slr
} // namespace saddle
