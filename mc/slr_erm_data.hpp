// Data of the direct SLR simulation (docs/equations/slr_population.md §1.5 feature-space sampling,
// (S4), (S9)): the setting, the teacher, the training set, the fresh test set with the test and
// Bayes errors of a predictor, and the population-mode predictor with prescribed overlaps.
//  * teacher k*, v* (orthogonalised, norms sqrt(D)); tokens x_l ~ N(0, I_D); spiked spike
//    (sqrt(nu)/sqrt(D)) k* on x_{eps*}; max-SLR eps* by inverse cdf of softmax(nu chi*) (argmax at
//    nu = inf); variable L drawn per sample; label (S4) y = z*_{eps*} + sqrt(Delta) xi0.
// Randomness: seed i of a run draws from the streams (seed, i, purpose) of mc/random.hpp. A set
// of samples is drawn in two passes: a short sequential pass that only advances the stream and
// records its state at the start of every chunk of samples, then the chunks are formed (and
// evaluated) in parallel (solver/parallel.hpp). The samples are exactly those of one sequential
// pass, so results do not depend on the number of threads.
#pragma once
#include <cstdint>
#include <vector>

#include "equations/slr_activation.hpp"
#include "equations/slr_model.hpp"
#include "mc/random.hpp"

namespace saddle {
namespace slr {
namespace mc {

// The data law and the predictor (everything but the sizes): the SLR setting of the population
// equations (task, length law, nu (+inf allowed for max-SLR), activation, erf offset b) and the
// label noise variance Delta (S4).
struct SimSetting : PopulationSetting {
  double delta = 0.0;
};

// Throws std::invalid_argument on an inconsistent setting (L < 1, nu < 0, nu = inf for spiked,
// delta < 0, NaN, ...).
void check_setting(const SimSetting& set);

// Purposes of the random streams (seed, index, purpose) of one seed.
enum Purpose : std::uint64_t {
  kTeacher = 1, kTrain = 2, kTest = 3, kInit = 4, kDirections = 5,
  kRestart = 1000  // + restart index (restarts > 1)
};

// ---------------------------------------------------------------------------------------------
// Teacher and data (feature space, §1.5).
struct Teacher {
  int D = 0;
  std::vector<double> kstar, vstar;  // |k*|^2 = |v*|^2 = D, k*.v* = 0
};
Teacher draw_teacher(int D, std::uint64_t seed, std::uint64_t index);

// N samples with their token rows stored as floats (T x D row-major, T = total tokens); the
// teacher fields and labels are computed in double from the stored (float) rows, so the stored
// data are exactly the data the model sees.
struct Dataset {
  int D = 0;
  int N = 0;
  std::vector<float> X;       // rows x_{mu,l}
  std::vector<int> offset;    // sample mu has rows offset[mu] .. offset[mu+1]-1
  std::vector<double> y;      // labels (S4)
  std::vector<int> eps;       // location eps* (0-based)
  int length(int mu) const { return offset[mu + 1] - offset[mu]; }
  const float* row(int t) const { return X.data() + static_cast<std::size_t>(t) * D; }
};
// Draws N samples with the stream (seed, index, purpose): first the N lengths, then per sample
// its L D token entries, eps* (spiked: uniform; max: one uniform after the tokens) and the label
// noise. chunked: in two passes, the chunks formed in parallel; otherwise in one sequential pass
// (for a caller whose cores are busy with other seeds: no extra pass). The same data either way.
Dataset draw_dataset(const SimSetting& set, const Teacher& teacher, int N, std::uint64_t seed,
                     std::uint64_t index, std::uint64_t purpose, bool chunked = true);

// ---------------------------------------------------------------------------------------------
// Fresh test samples, never stored: the stream (seed, index, kTest), per sample its length, L D
// token entries, eps* and label noise. plan_test_set is the sequential pass (it only advances the
// stream: about a third of the cost of forming the samples), test_errors forms and evaluates the
// chunks in parallel. A plan does not depend on the predictor, so it can be made while the
// predictor is being trained.
struct TestPlan {
  int n = 0;                // samples
  int chunk = 0;            // samples per chunk (the last one may be shorter)
  std::vector<Rng> starts;  // stream state at the first sample of each chunk
};
// chunked = false: one chunk, no sequential pass (the errors are then evaluated in one pass);
// the same samples and the same sums either way.
TestPlan plan_test_set(const SimSetting& set, int D, int n, std::uint64_t seed,
                       std::uint64_t index, bool chunked = true);

// Mean squared errors (y - f)^2 of the predictor (k, v) and of the Bayes predictor (S9)
// sum_l p_l z*_l (p = softmax(c_nu chi*), one-hot argmax at c_nu = inf) on the planned samples,
// and the per-sample variances of the squared errors (for a pooled standard error). Sums are
// formed in sample order.
struct TestErrors {
  double mse = 0, mse_bayes = 0, var = 0, var_bayes = 0;
};
TestErrors test_errors(const SimSetting& set, const Teacher& T, const std::vector<double>& k,
                       const std::vector<double>& v, const TestPlan& plan);

// Population mode (§6 "Population module"): k = m_k k* + sqrt(q_k - m_k^2) u_k, v = m_v v* +
// sqrt(q_v - m_v^2) u_v with u_k, u_v orthogonal to each other and to k*, v*, |u|^2 = D (the
// stream (seed, index, kDirections)).
void prescribed_kv(const Teacher& T, double m_k, double q_k, double m_v, double q_v,
                   std::uint64_t seed, std::uint64_t index, std::vector<double>& k,
                   std::vector<double>& v);

}  // namespace mc
}  // namespace slr
}  // namespace saddle
