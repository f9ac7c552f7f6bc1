// Curves of the SLR replica fixed point (docs/equations/slr_replica.md §4.7) through the curve
// driver: the replica model as a CurveModel, its options, and the conversion of curve points.
#include "equations/slr_replica_curve.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "integrators/seeds.hpp"
#include "equations/slr_model.hpp"

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

// The replica model as the curve driver sees it: systems per (alpha, replicate, level), the
// QMC point set of each refinement level (4^level x the points), the replicon stability hook,
// the training loss as free energy and coexistence by the test error.
namespace {

// Index of a named value in CurvePoint::entry (state then observables).
int index_of(const std::string& name) {
  static const std::vector<std::string> names = replica_value_names();
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return static_cast<int>(i);
  throw std::logic_error("replica value '" + name + "' not found");
}

int int_of(const ParamValues& p, const char* name) { return static_cast<int>(p(name)); }

}  // namespace

ReplicaModel::ReplicaModel(const ReplicaSetting& set) : set_(set) {}
ReplicaModel::ReplicaModel(const ParamValues& p) : ReplicaModel(setting_of(p)) {}

bool ReplicaModel::prepare_level(int level) {
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

std::unique_ptr<FixedPointSystem> ReplicaModel::system(double alpha, int r, int level) const {
  return std::make_unique<ReplicaSystem>(settings_[level], alpha, pts_[level], r, jump_pts_[level]);
}

// The sampled map is piecewise constant in the jumps of the prox minimiser, and its iteration
// can end in a limit cycle: a replicate that does not converge is solved again with the
// pre-integrated channel (continuous map, Newton), the same expectations on a quarter as many
// lines as points (each line costs about as much as four points). Its state is that
// replicate's estimate; the values are evaluated as for every replicate.
std::unique_ptr<FixedPointSystem> ReplicaModel::fallback_system(double alpha, int r, int level) const {
  if (set_.channel != ChannelKind::Sampled) return nullptr;
  return std::make_unique<ReplicaSystem>(fallback_settings_[level], alpha, fallback_pts_[level], r);
}

// A redrawn replicate (sampled channel): the same points with a new random shift, from a seed
// derived from (seed, level, replicate, attempt); its state is the replicate's estimate and its
// values are evaluated as for every replicate. The pre-integrated channel's map is continuous:
// none.
std::unique_ptr<FixedPointSystem> ReplicaModel::redraw_system(double alpha, int r, int level, int attempt) const {
  if (set_.channel != ChannelKind::Sampled) return nullptr;
  ReplicaSetting s = settings_[level];
  s.replicates = 1;
  s.seed = derived_seed(s.seed, static_cast<std::uint64_t>(level), static_cast<std::uint64_t>(r),
                        static_cast<std::uint64_t>(attempt));
  return std::make_unique<ReplicaSystem>(s, alpha, make_replica_points(s), 0);
}

int ReplicaModel::refine_on() const { return index_of("test_error"); }

// The replicon and the jump term with its error bar, whatever the channel (the sampled channel
// measures the jump term by a pre-integrated pass).
RsVerdict ReplicaModel::verdict(const CurvePoint& p) const {
  const Estimate& at = p.entry(index_of("at_eigenvalue"));
  const Estimate& js = p.entry(index_of("jump_share"));
  return rs_verdict(at.mean, at.se, js.mean, js.se);
}

double ReplicaModel::free_energy(const CurvePoint& p) const { return p.entry(index_of("train_loss")).mean; }

bool ReplicaModel::distinct(const CurvePoint& a, const CurvePoint& b) const {
  const std::size_t i = index_of("test_error");
  const Estimate &ea = a.entry(i), &eb = b.entry(i);
  return std::abs(eb.mean - ea.mean) > 4.0 * std::hypot(eb.se, ea.se) + 1e-3;
}

std::vector<std::string> ReplicaModel::notes(const CurvePoint& p) const {
  return {to_string(verdict(p).reason), std::to_string(n_points(p.level))};
}

std::vector<ModelParam> replica_card_params() {
  ParamDomain L = interval_domain(1, replica::kMaxL), nu = interval_domain(0, kSlrMaxNu),
              alpha = interval_domain(kSlrMinAlpha, kSlrMaxAlpha), scale = interval_domain(0, kSlrMaxScale),
              replicates = interval_domain(2, 1024), grid1 = interval_domain(3, 513),
              grid2 = interval_domain(3, 41), starts = interval_domain(1, 8);
  for (ParamDomain* d : {&L, &replicates, &grid1, &grid2, &starts}) d->integer = true;
  nu.allow_inf = true;
  return {{"task", "spiked", {}, "The task", {"spiked", "max"}},
          {"L", "2", L, "Number of tokens"},
          {"nu", "2", nu, "Signal strength nu (inf only for max)"},
          {"lambda", "0.1", scale, "Ridge lambda (S13)"},
          {"delta", "0", scale, "Noise variance Delta"},
          {"alpha", "0.5:8:16", alpha, "Sample ratio N/D"},
          {"activation", "softmax,linear", {}, "The attention", {"softmax", "linear"}},
          {"replicates", "8", replicates, "QMC random shifts R (error bars need R >= 2); points x R <= 2^24"},
          {"grid1", "25", grid1, "Prox grid points, 1-D search"},
          {"grid2", "15", grid2, "Prox grid points per axis, 2-D search"},
          {"starts", "3", starts, "Newton starts of the prox from the best grid minima"}};
}

std::vector<ModelSetting> replica_card_settings(const std::string& points_help) {
  ModelSetting points{"points", "", points_help};
  points.column = false;  // the column `points` is what a point used (after refinement)
  return {{"seed", "1", "Seed of the random shifts, an integer in [0, 2^64 - 1]"},
          {"L_dist", "",
           "Variable length: L drawn uniformly from this set (e.g. 1,2,3) per sample, one shared (k, v) "
           "(docs/equations/slr_replica.md §4.6); stands in for --L",
           "L"},
          points};
}

ReplicaSetting replica_common_setting(const ParamValues& p) {
  ReplicaSetting s;
  s.task = parse_task(p.text("task"));
  s.nu = p("nu");
  s.lambda = p("lambda");
  s.delta = p("delta");
  s.activation = parse_activation(p.text("activation"));
  s.replicates = int_of(p, "replicates");
  s.prox.grid1 = int_of(p, "grid1");
  s.prox.grid2 = int_of(p, "grid2");
  s.prox.n_starts = int_of(p, "starts");
  s.seed = parse_seed_text(p.text("seed"));
  s.L = int_of(p, "L");
  if (!p.text("L_dist").empty()) {
    s.lengths = parse_length_set(p.text("L_dist"), replica::kMaxL);
    s.L = s.lengths.front();
    if (s.lengths.size() == 1) s.lengths.clear();
  }
  if (std::isinf(s.nu) && s.task != Task::Max) throw std::invalid_argument("--nu: inf only with --task max");
  return s;
}

// The points of a run: --points when given (an integer in [16, 4194304]), else `fallback`.
int replica_points_of(const ParamValues& p, int fallback) {
  const std::string& t = p.text("points");
  if (t.empty()) return fallback;
  std::size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(t, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != t.size() || t.empty() || v < 16 || v > (1 << 22))
    throw std::invalid_argument("--points: '" + t + "' is not an integer in [16, 4194304]");
  return static_cast<int>(v);
}

ModelCard ReplicaModel::card() {
  ModelCard c;
  c.command = "slr erm";
  c.summary = "Ridge ERM test/train error vs alpha: replica fixed point";
  c.equations = "docs/equations/slr_replica.md §4, §7b";
  c.observables_note =
      "test_error (S7), train_error = E(y - f)^2 incl. Delta (§4.6), train_loss = objective (S13)/N at the "
      "RS minimiser; Vhat_* = the form driving the iteration (--vhat), Vhat_*_stein (S20') and "
      "Vhat_*_hessian (S20) both reported, Vhat_*_jump = the jump terms (S20b); at_eigenvalue = "
      "replicon (de Almeida-Thouless) eigenvalue from the Hessian-form Jacobian; jump_share = max over "
      "k, v of Vhat_jump / (lambda + |Vhat_hessian|), the relative change of V due to jumps of the "
      "proximal minimiser; channel expectations by Sobol QMC (§7b), points x replicates random shifts "
      "(sampled channel: a replicate that cycles is redrawn at most 2 times, then solved on the "
      "pre-integrated map on points/4 lines, path +redraw/+fallback), one fixed point per replicate, "
      "values mean and _se over replicates";
  c.params = replica_card_params();
  ParamDomain nodes = interval_domain(4, 64);
  nodes.integer = true;
  c.params.insert(c.params.begin() + 7,
                  {{"vhat", "stein", {}, "V-hat form driving the iteration: stein (S20') | hessian (S20)",
                    {"stein", "hessian"}},
                   {"channel", "sampled", {},
                    "Channel integration: sampled (plain QMC over every coordinate, §7b; a replicate that "
                    "cycles is solved again with the pre-integrated map) | preint (one key-noise direction "
                    "integrated exactly across the jumps of the proximal minimiser, §4.9)",
                    {"sampled", "preint"}}});
  c.params.push_back({"line_nodes", "6", nodes,
                      "Pre-integration (the preint channel, the fallback and the jump pass): Gauss-Hermite "
                      "nodes per line"});
  c.settings = replica_card_settings(
      "QMC points per replicate (§7b), an integer in [16, 4194304]; default 4096 (sampled), 1024 lines "
      "(preint); refinement multiplies them by 4 per level (column points)");
  c.settings.push_back({"symmetry", "rs",
                        "rs: the replica-symmetric fixed point; the one-step replica-symmetry-broken "
                        "one is `saddle slr erm-1rsb`"});
  c.settings.back().column = false;
  c.continuation = "alpha";
  c.plot_y = "test_error";
  c.target_se = 0.002;
  c.stability_column = "rs_stability";
  c.columns_note =
      "rs_stability = stable (replicon + 2 se < 1 and no jump term), unstable (replicon - 2 se > 1, or "
      "jump_share - 2 se > 0.03: replica symmetry is broken and the RS value is not the ERM answer) or "
      "marginal; rs_reason = why a point is not stable (replicon, jumps) or empty; points = QMC points "
      "per replicate behind the point (after refinement)";
  c.default_init = "informed";
  c.sorted_continuation = true;
  c.map_radius = false;  // a Jacobian pass per replicate and point (finite differences for the Hessian form)
  return c;
}

ReplicaSetting ReplicaModel::setting_of(const ParamValues& p) {
  ReplicaSetting s = replica_common_setting(p);
  s.vhat = parse_vhat_form(p.text("vhat"));
  s.channel = parse_channel_kind(p.text("channel"));
  s.line.nodes = int_of(p, "line_nodes");
  // Default QMC points per replicate: 4096 draws (sampled), 1024 lines (pre-integrated: each line
  // is a 1-D rule of about line_nodes prox solves, §4.9; at 256 lines the softmax L = 2 curve
  // reads test errors ~0.002 too high at alpha = 5..8, measured against 4096 lines).
  s.n_points = replica_points_of(p, s.channel == ChannelKind::Sampled ? 4096 : 1024);
  return s;
}

void ReplicaModel::check(const ParamValues& p) {
  if (p.text("symmetry") != "rs")
    throw std::invalid_argument(p.text("symmetry") == "1rsb"
                                    ? "--symmetry 1rsb: the 1RSB fixed point is its own command, `saddle slr erm-1rsb`"
                                    : "--symmetry: expected rs, got '" + p.text("symmetry") +
                                          "' (the 1RSB fixed point is `saddle slr erm-1rsb`)");
  const ReplicaSetting s = setting_of(p);
  if (static_cast<double>(s.n_points) * s.replicates > double(1 << 24))
    throw std::invalid_argument("--points x --replicates: must be <= 16777216");
  validate(s);
}

std::vector<CurveStart> ReplicaModel::starts(const ParamValues& p) {
  const ReplicaSetting s = setting_of(p);
  return replica_starts({ReplicaInit::Informed, ReplicaInit::Uninformed}, replica_informed_start(s),
                        replica_uninformed_start(s));
}

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
  ReplicaModel model(set);
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
