// The setting of the SLR replica-symmetric ERM fixed point (docs/equations/slr_replica.md §4):
// task, lengths, signal, ridge, noise, activation, the V-hat form, the channel integration
// (pre-integrated or sampled, §4.9, §7b), the proximal search, and the QMC point set.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "equations/slr_model.hpp"
#include "equations/slr_prox_line.hpp"
#include "equations/slr_replica_prox.hpp"
#include "integrators/qmc.hpp"

namespace saddle {
namespace slr {

enum class VhatForm { Stein, Hessian };
std::string to_string(VhatForm f);
VhatForm parse_vhat_form(const std::string& s);  // "stein" | "hessian"; throws invalid_argument

// How the channel expectations are integrated: Sampled (default, §7b): plain randomly shifted
// QMC over every coordinate; Preintegrated (opt-in, `--channel preint`, §4.9): one direction of
// the key noise integrated exactly along a line (its jumps located), QMC over the rest.
enum class ChannelKind { Preintegrated, Sampled };
std::string to_string(ChannelKind c);  // "preint" | "sampled"
ChannelKind parse_channel_kind(const std::string& s);  // "sampled" | "preint"; throws

struct ReplicaSetting {
  Task task = Task::Spiked;
  int L = 2;
  // Variable length (docs/equations/slr_population.md §1.4, docs/equations/slr_replica.md §4.6):
  // when non-empty, each sample's L is drawn uniformly from this set and every channel expectation is averaged over it (one shared k, v); L is ignored.
  std::vector<int> lengths;
  double nu = 2.0;          // signal; +inf allowed for max
  double lambda = 0.1;      // ridge, lambda_k = lambda_v (S13)
  double delta = 0.0;       // noise variance Delta (S4)
  Activation activation = Activation::Softmax;  // softmax or linear
  VhatForm vhat = VhatForm::Stein;
  ChannelKind channel = ChannelKind::Sampled;
  replica::ProxOptions prox;
  replica::LineOptions line;  // the pre-integrated channel's line rule
  // QMC (§7b): n points per replicate (pre-integrated: lines), R replicates, seed of the shifts.
  int n_points = 4096;
  int replicates = 8;
  std::uint64_t seed = 1;
};

// Throws std::invalid_argument when the setting is outside what is implemented (L range,
// activation, negative lambda/delta/nu, n_points, replicates, line nodes).
void validate(const ReplicaSetting& set);

// The lengths of a setting: {L}, or the variable-length set.
std::vector<int> replica_lengths(const ReplicaSetting& set);

// True when the k channel is empty: softmax with every length 1 (sigma == 1, §4.8).
bool replica_k_inactive(const ReplicaSetting& set);

// QMC point dimension for one length: sampled 2L+1 (spiked), 3L+1 (max); pre-integrated one less
// (the line direction), and one less again for softmax (the mean of the key fields does not
// enter; §4.9).
int replica_qmc_dim(const ReplicaSetting& set, int L);
// For a setting: the largest over its lengths (shorter lengths use the leading coordinates).
int replica_qmc_dim(const ReplicaSetting& set);

// The QMC point set of a setting (all replicates).
std::shared_ptr<const SobolGaussian> make_replica_points(const ReplicaSetting& set);

// The pre-integrated pass that measures the jump terms (S20b) of a sampled setting at its
// solutions: the same setting with the pre-integrated channel on `lines` lines, and its point
// set with jump_lines(set) lines (n_points / 16, at least 256).
ReplicaSetting jump_setting(const ReplicaSetting& set, int lines);
int jump_lines(const ReplicaSetting& set);
// The pre-integrated fallback of a sampled setting (slr_replica_curve.cpp): n_points / 4 lines
// (at least 256).
ReplicaSetting fallback_setting(const ReplicaSetting& set);
std::shared_ptr<const SobolGaussian> make_jump_points(const ReplicaSetting& set);

}  // namespace slr
}  // namespace saddle
