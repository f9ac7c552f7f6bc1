// The setting of the SLR replica fixed point: names, validation, lengths, QMC dimension and points
// (docs/equations/slr_replica.md §4, §4.9, §7b).
#include "equations/slr_replica_setting.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace saddle {
namespace slr {

std::string to_string(VhatForm f) { return f == VhatForm::Stein ? "stein" : "hessian"; }

VhatForm parse_vhat_form(const std::string& s) {
  if (s == "stein") return VhatForm::Stein;
  if (s == "hessian") return VhatForm::Hessian;
  throw std::invalid_argument("unknown V-hat form '" + s + "' (expected stein or hessian)");
}

std::string to_string(ChannelKind c) {
  return c == ChannelKind::Preintegrated ? "preint" : "sampled";
}

ChannelKind parse_channel_kind(const std::string& s) {
  if (s == "preint" || s == "preintegrated") return ChannelKind::Preintegrated;
  if (s == "sampled") return ChannelKind::Sampled;
  throw std::invalid_argument("unknown channel '" + s + "' (expected sampled or preint)");
}

std::vector<int> replica_lengths(const ReplicaSetting& set) {
  return set.lengths.empty() ? std::vector<int>{set.L} : set.lengths;
}

bool replica_k_inactive(const ReplicaSetting& set) {
  if (set.activation != Activation::Softmax) return false;
  for (int L : replica_lengths(set))
    if (L != 1) return false;
  return true;
}

void validate(const ReplicaSetting& set) {
  for (int L : replica_lengths(set))
    if (L < 1 || L > replica::kMaxL)
      throw std::invalid_argument("L must be in 1.." + std::to_string(replica::kMaxL) +
                                  " for the replica equations");
  if (set.activation != Activation::Softmax && set.activation != Activation::Linear)
    throw std::invalid_argument("the replica equations support softmax and linear activations");
  if (!(set.nu >= 0.0) || (std::isinf(set.nu) && set.task != Task::Max))
    throw std::invalid_argument("nu must be >= 0 (inf only for max-SLR)");
  if (!(set.lambda >= 0.0) || !std::isfinite(set.lambda))
    throw std::invalid_argument("lambda must be finite and >= 0");
  if (!(set.delta >= 0.0) || !std::isfinite(set.delta))
    throw std::invalid_argument("delta must be finite and >= 0");
  if (set.n_points < 16) throw std::invalid_argument("need at least 16 QMC points");
  if (set.replicates < 2) throw std::invalid_argument("need at least 2 QMC replicates");
  if (set.prox.grid1 < 3 || set.prox.grid2 < 3 || set.prox.n_starts < 1)
    throw std::invalid_argument("prox grid needs >= 3 points and >= 1 start");
  if (set.line.nodes < 4 || set.line.nodes > 64)
    throw std::invalid_argument("line nodes must be in 4..64");
}

int replica_qmc_dim(const ReplicaSetting& set, int L) {
  const int sampled = set.task == Task::Spiked ? 2 * L + 1 : 3 * L + 1;
  if (set.channel == ChannelKind::Sampled) return sampled;
  // Pre-integrated: z side L + 1, key noise L - 1 outside the line (softmax: L - 2, the mean of
  // the key fields does not enter; none at L = 1), max: the teacher fields chi* (L).
  const int key = set.activation == Activation::Softmax ? std::max(L - 2, 0) : L - 1;
  return (L + 1) + key + (set.task == Task::Max ? L : 0);
}

int replica_qmc_dim(const ReplicaSetting& set) {
  int d = 1;
  for (int L : replica_lengths(set)) d = std::max(d, replica_qmc_dim(set, L));
  return d;
}

ReplicaSetting jump_setting(const ReplicaSetting& set, int lines) {
  ReplicaSetting js = set;
  js.channel = ChannelKind::Preintegrated;
  js.n_points = lines;
  return js;
}

int jump_lines(const ReplicaSetting& set) { return std::max(256, set.n_points / 16); }

ReplicaSetting fallback_setting(const ReplicaSetting& set) {
  return jump_setting(set, std::max(256, set.n_points / 4));
}

std::shared_ptr<const SobolGaussian> make_jump_points(const ReplicaSetting& set) {
  return make_replica_points(jump_setting(set, jump_lines(set)));
}

std::shared_ptr<const SobolGaussian> make_replica_points(const ReplicaSetting& set) {
  return std::make_shared<const SobolGaussian>(replica_qmc_dim(set), set.n_points, set.replicates,
                                               set.seed);
}

}  // namespace slr
}  // namespace saddle
