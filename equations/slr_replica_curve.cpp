// Curves of the SLR replica fixed point (docs/equations/slr_replica.md §4.7) through the curve
// driver: the replica model as a CurveModel, its options, and the conversion of curve points.
#include "equations/slr_replica_curve.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "integrators/seeds.hpp"

namespace saddle {
namespace slr {

ReplicaCurveOptions::ReplicaCurveOptions() {
  solver.method = Method::Newton;
  solver.newton_steps = 8;
  solver.mix = 0.5;
  solver.tol = 1e-5;
  solver.max_iter = 300;
  solver.newton_polish = false;
  solver.stall_window = 20;
  warm_accept = 1e-2;
  retry = true;
  retry_mix = 0.2;
  retry_max_iter = 1500;
  target_se = 0.0;
  max_refine = 2;
  refine_unstable = false;
}

namespace {

// The replica model as the curve driver sees it: systems per (alpha, replicate, level), the
// QMC point set of each refinement level (4^level x the points), the replicon stability hook,
// the training loss as free energy and coexistence by the test error.
class ReplicaCurveModel : public CurveModel {
 public:
  explicit ReplicaCurveModel(const ReplicaSetting& set) : set_(set) {}
  int replicates() const override { return set_.replicates; }
  bool prepare_level(int level) override {
    if (level < static_cast<int>(pts_.size())) return true;
    ReplicaSetting s = set_;
    if (level > 0) {
      s = settings_.back();
      if (s.n_points > std::numeric_limits<int>::max() / 4) return false;
      s.n_points *= 4;
    }
    settings_.push_back(s);
    pts_.push_back(make_replica_points(s));
    jump_pts_.push_back(s.channel == ChannelKind::Sampled ? make_jump_points(s) : nullptr);
    if (s.channel == ChannelKind::Sampled) {
      fallback_settings_.push_back(fallback_setting(s));
      fallback_pts_.push_back(make_replica_points(fallback_settings_.back()));
    }
    return true;
  }
  std::unique_ptr<FixedPointSystem> system(double alpha, int r, int level) const override {
    return std::make_unique<ReplicaSystem>(settings_[level], alpha, pts_[level], r, jump_pts_[level]);
  }
  // The sampled map is piecewise constant in the jumps of the prox minimiser, and its iteration
  // can end in a limit cycle: a replicate that does not converge is solved again with the
  // pre-integrated channel (continuous map, Newton), the same expectations on a quarter as many
  // lines as points (each line costs about as much as four points). Its state is that
  // replicate's estimate; the values are evaluated as for every replicate.
  std::unique_ptr<FixedPointSystem> fallback_system(double alpha, int r, int level) const override {
    if (set_.channel != ChannelKind::Sampled) return nullptr;
    return std::make_unique<ReplicaSystem>(fallback_settings_[level], alpha, fallback_pts_[level], r);
  }
  // A redrawn replicate (sampled channel): the same points with a new random shift, from a seed
  // derived from (seed, level, replicate, attempt); its state is the replicate's estimate and its
  // values are evaluated as for every replicate. The pre-integrated channel's map is continuous:
  // none.
  std::unique_ptr<FixedPointSystem> redraw_system(double alpha, int r, int level, int attempt) const override {
    if (set_.channel != ChannelKind::Sampled) return nullptr;
    ReplicaSetting s = settings_[level];
    s.replicates = 1;
    s.seed = derived_seed(s.seed, static_cast<std::uint64_t>(level), static_cast<std::uint64_t>(r),
                          static_cast<std::uint64_t>(attempt));
    return std::make_unique<ReplicaSystem>(s, alpha, make_replica_points(s), 0);
  }
  int refine_on() const override { return index_of("test_error"); }
  Stability stability(const CurvePoint& p) const override { return verdict(p).stability; }
  // The one RS verdict (rs_verdict): the replicon and the jump term with its error bar, whatever
  // the channel (the sampled channel measures the jump term by a pre-integrated pass).
  RsVerdict verdict(const CurvePoint& p) const {
    const Estimate& at = p.entry(index_of("at_eigenvalue"));
    const Estimate& js = p.entry(index_of("jump_share"));
    return rs_verdict(at.mean, at.se, js.mean, js.se);
  }
  double free_energy(const CurvePoint& p) const override {
    return p.entry(index_of("train_loss")).mean;
  }
  bool distinct(const CurvePoint& a, const CurvePoint& b) const override {
    const std::size_t i = index_of("test_error");
    const Estimate &ea = a.entry(i), &eb = b.entry(i);
    return std::abs(eb.mean - ea.mean) > 4.0 * std::hypot(eb.se, ea.se) + 1e-3;
  }
  int n_points(int level) const { return settings_[level].n_points; }

  // Index of a named value in CurvePoint::entry (state then observables).
  static int index_of(const std::string& name) {
    static const std::vector<std::string> names = replica_value_names();
    for (std::size_t i = 0; i < names.size(); ++i)
      if (names[i] == name) return static_cast<int>(i);
    throw std::logic_error("replica value '" + name + "' not found");
  }

 private:
  ReplicaSetting set_;
  std::vector<ReplicaSetting> settings_;
  std::vector<std::shared_ptr<const SobolGaussian>> pts_;
  std::vector<std::shared_ptr<const SobolGaussian>> jump_pts_;  // sampled: the jump-term pass
  std::vector<ReplicaSetting> fallback_settings_;  // sampled: the pre-integrated fallback
  std::vector<std::shared_ptr<const SobolGaussian>> fallback_pts_;
};

}  // namespace

std::vector<CurveStart> replica_starts(const std::vector<ReplicaInit>& inits, const Vec& informed,
                                       const Vec& uninformed) {
  std::vector<CurveStart> starts;
  for (ReplicaInit init : inits) {
    CurveStart st;
    st.label = to_string(init);
    st.x0 = init == ReplicaInit::Informed ? informed : uninformed;
    st.direction = init == ReplicaInit::Informed ? Direction::Backward : Direction::Forward;
    starts.push_back(st);
  }
  return starts;
}

std::vector<ReplicaPoint> replica_curve(const ReplicaSetting& set, const std::vector<double>& alphas_in,
                                        const std::vector<ReplicaInit>& inits,
                                        const ReplicaCurveOptions& opt) {
  validate(set);
  std::vector<double> alphas = alphas_in;
  std::sort(alphas.begin(), alphas.end());
  ReplicaCurveModel model(set);
  const std::vector<CurvePoint> cps =
      run_curve(model, alphas, replica_starts(inits, replica_informed_start(set), replica_uninformed_start(set)), opt);
  std::vector<ReplicaPoint> out;
  for (const CurvePoint& c : cps) {
    ReplicaPoint p = named_point<ReplicaPoint>(c);
    p.alpha = c.param;
    p.init = inits[c.start];
    p.n_points = model.n_points(c.level);
    p.rs_reason = model.verdict(c).reason;
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace slr
}  // namespace saddle
