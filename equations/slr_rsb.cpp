// The 1RSB fixed point of SLR ridge ERM at zero temperature (docs/equations/slr_rsb.md): the
// fixed-point system (prior (R3)-(R4) on top of the nested channel of slr_rsb_channel.cpp), its
// values, starts, and the curve model of the curve driver.
#include "equations/slr_rsb.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "equations/slr_replica_curve.hpp"

namespace saddle {
namespace slr {

void validate(const RsbSetting& set) {
  validate(set.rs);
  if (set.n_inner < 2 || set.n_inner % 2 != 0 || set.n_inner > 4096)
    throw std::invalid_argument("inner points must be even and in 2..4096");
  if (!(set.x_min > 0.0) || !(set.x_max > set.x_min) || !std::isfinite(set.x_max))
    throw std::invalid_argument("the Parisi bracket needs 0 < x_min < x_max < inf");
  if (!(set.dq_floor > 0.0) || !(set.dq_floor < 1e-3))
    throw std::invalid_argument("dq_floor must be in (0, 1e-3)");
  if (set.n_inner_stability < 2 || set.n_inner_stability % 2 != 0 || set.n_inner_stability > 4096)
    throw std::invalid_argument("stability inner points must be even and in 2..4096");
}

RsbSystem::RsbSystem(RsbSetting set, double alpha, std::shared_ptr<const SobolGaussian> outer,
                     std::shared_ptr<const RsbInnerPoints> inner, int replicate)
    : set_(std::move(set)),
      alpha_(alpha),
      outer_(std::move(outer)),
      inner_(std::move(inner)),
      r_(replicate) {}

std::vector<std::string> RsbSystem::names() const {
  std::vector<std::string> n;
  RsbValues<double>().visit_state([&](const char* name, double) { n.push_back(name); });
  return n;
}

void RsbSystem::project(Vec& x) const {
  const bool k_off = replica_k_inactive(set_.rs);
  for (int a = 0; a < 2; ++a) {
    double& m = x(4 * a);
    double& q = x(4 * a + 1);
    double& V = x(4 * a + 2);
    double& dq = x(4 * a + 3);
    if (!std::isfinite(V) || V < 1e-12) V = std::isfinite(V) && V < 1e-12 ? 1e-12 : 1e8;
    V = std::min(V, 1e8);
    if (!std::isfinite(m)) m = 0.0;
    if (!std::isfinite(dq) || dq < set_.dq_floor) dq = set_.dq_floor;
    if (!std::isfinite(q)) q = m * m + 1.0 + dq;
    // q0 = q - dq >= m^2 (the inter-state overlap is a covariance)
    q = std::max(q, m * m * (1.0 + 1e-12) + 1e-12 + dq);
  }
  double& lx = x(8);  // log x
  if (!std::isfinite(lx)) lx = 0.0;
  lx = std::min(std::max(lx, std::log(set_.x_min)), std::log(set_.x_max));
  if (k_off) x(0) = x(1) = x(3) = 0.0;
}

RsbChannel RsbSystem::channel(const Vec& x) const {
  Vec xp = x;
  project(xp);
  return rsb_channel(set_, alpha_, xp.data(), *outer_, *inner_, r_);
}

Vec RsbSystem::map(const Vec& x) const {
  Vec xp = x;
  project(xp);
  const RsbChannel c = rsb_channel(set_, alpha_, xp.data(), *outer_, *inner_, r_);
  Vec out(kRsbDim);
  rsb_prior_update(set_.rs.lambda, c, out.data());
  if (replica_k_inactive(set_.rs)) {
    out(0) = out(1) = out(3) = 0.0;
    out(2) = set_.rs.lambda > 0.0 ? 1.0 / set_.rs.lambda : xp(2);
  }
  return out;
}

double RsbSystem::energy(const Vec& x) const {
  Vec xp = x;
  project(xp);
  const RsbChannel c = rsb_channel(set_, alpha_, xp.data(), *outer_, *inner_, r_);
  return rsb_prior_energy(set_.rs.lambda, alpha_, xp.data()) + c.channel_energy;
}

std::vector<std::string> RsbSystem::observable_names() const { return observable_names_of<RsbValues<double>>(); }

RsbValues<double> RsbSystem::evaluate(const Vec& x) const {
  Vec xp = x;
  project(xp);
  const RsbChannel c = rsb_channel(set_, alpha_, xp.data(), *outer_, *inner_, r_);
  const RsbStability st =
      rsb_stability(set_, alpha_, xp.data(), *outer_, r_, set_.n_inner_stability);
  const double lambda = set_.rs.lambda;
  RsbValues<double> v;
  v.m_k = xp(0);
  v.q_k = xp(1);
  v.V_k = xp(2);
  v.dq_k = xp(3);
  v.m_v = xp(4);
  v.q_v = xp(5);
  v.V_v = xp(6);
  v.dq_v = xp(7);
  v.log_x = xp(8);
  v.x_parisi = std::exp(xp(8));
  v.mhat_k = c.mhat[0];
  v.qhat_k = c.qhat1[0];
  v.Vhat_k = c.Vhat0[0] + c.x * std::max(c.qhat1[0] - c.qhat0[0], 0.0);  // 1/V - lambda (R4)
  v.mhat_v = c.mhat[1];
  v.qhat_v = c.qhat1[1];
  v.Vhat_v = c.Vhat0[1] + c.x * std::max(c.qhat1[1] - c.qhat0[1], 0.0);
  v.Vhat_k_hessian = c.Vhat_hessian[0];
  v.Vhat_v_hessian = c.Vhat_hessian[1];
  const double Prs[6] = {xp(0), xp(1), xp(2), xp(4), xp(5), xp(6)};
  v.test_error = replica_test_error(set_.rs, Prs);  // (S7) at the self-overlaps q = q1
  v.train_error = c.train_mse;
  v.train_loss = 0.5 * c.train_mse + lambda * (xp(1) + xp(5)) / (2.0 * alpha_);  // (R6)
  v.free_energy = rsb_prior_energy(lambda, alpha_, xp.data()) + c.channel_energy;  // (R1)
  v.at_eigenvalue = st.at1;
  v.at0_eigenvalue = st.at0;
  auto share = [&](double h, double st) {
    const double d = lambda + std::abs(h);
    return d > 0.0 ? std::abs(h - st) / d : 0.0;
  };
  const double sk = share(v.Vhat_k_hessian, v.Vhat_k), sv = share(v.Vhat_v_hessian, v.Vhat_v);
  v.jump_share = replica_k_inactive(set_.rs) ? sv : std::max(sk, sv);
  v.inner_ess = c.ess;
  // The inner Stein identity Vhat0 - Vhat1 = x qhat0 (R4), relative to lambda + |Vhat0|: a check
  // of the inner quadrature (0 for exact integrals).
  double gap = 0.0;
  for (int a = replica_k_inactive(set_.rs) ? 1 : 0; a < 2; ++a)
    gap = std::max(gap, std::abs(c.Vhat0[a] - c.Vhat1[a] - c.x * c.qhat0[a]) /
                            (lambda + std::abs(c.Vhat0[a])));
  v.stein_gap = gap;
  const double den = c.prior_complexity + c.kl;
  v.x_balance = den > 0.0 ? (c.prior_complexity - c.kl) / den : 0.0;
  v.x_edge = v.x_parisi <= set_.x_min * (1.0 + 1e-9)   ? -1.0
             : v.x_parisi >= set_.x_max * (1.0 - 1e-9) ? 1.0
                                                       : 0.0;
  return v;
}

Vec RsbSystem::observables(const Vec& x) const { return observables_of(evaluate(x)); }

double RsbSystem::free_energy(const Vec& x) const { return energy(x); }

Vec rsb_from_rs(const Vec& rs, double frac, double x_parisi) {
  Vec x(kRsbDim);
  for (int a = 0; a < 2; ++a) {
    const double m = rs(3 * a), q = rs(3 * a + 1), V = rs(3 * a + 2);
    x(4 * a) = m;
    x(4 * a + 1) = q;
    x(4 * a + 2) = V;
    x(4 * a + 3) = frac * std::max(q - m * m, 0.0);
  }
  x(8) = std::log(x_parisi);
  return x;
}

Vec rsb_informed_start(const RsbSetting& set) {
  return rsb_from_rs(replica_informed_start(set.rs), 0.3, 1.0);
}

Vec rsb_uninformed_start(const RsbSetting& set) {
  return rsb_from_rs(replica_uninformed_start(set.rs), 0.3, 1.0);
}

// The RS options (tol, max_iter, stall window, warm_accept, retry, refinement) with Anderson in
// place of Newton steps and a faster retry.
RsbCurveOptions::RsbCurveOptions() : CurveOptions(static_cast<const CurveOptions&>(ReplicaCurveOptions())) {
  solver.method = Method::Anderson;
  solver.mix = 0.3;
  solver.anderson_depth = 3;
  retry_mix = 0.5;
  retry_max_iter = 400;
}

std::vector<std::string> rsb_value_names() {
  std::vector<std::string> n;
  RsbValues<double>().visit([&](const char* name, double) { n.push_back(name); });
  return n;
}

// The 1RSB model as the curve driver sees it (as the RS model: systems per (alpha, replicate,
// level), 4x the outer points per refinement level; the inner set is the same at every level).
namespace {

int index_of(const std::string& name) {
  static const std::vector<std::string> names = rsb_value_names();
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == name) return static_cast<int>(i);
  throw std::logic_error("1RSB value '" + name + "' not found");
}

}  // namespace

RsbModel::RsbModel(const RsbSetting& set) : set_(set), inner_(make_rsb_inner_points(set)) {}
RsbModel::RsbModel(const ParamValues& p) : RsbModel(setting_of(p)) {}

bool RsbModel::prepare_level(int level) {
  if (level < static_cast<int>(pts_.size())) return true;
  RsbSetting s = set_;
  if (level > 0) {
    s = settings_.back();
    if (s.rs.n_points > std::numeric_limits<int>::max() / 4) return false;
    s.rs.n_points *= 4;
  }
  settings_.push_back(s);
  pts_.push_back(make_replica_points(s.rs));
  return true;
}

std::unique_ptr<FixedPointSystem> RsbModel::system(double alpha, int r, int level) const {
  return std::make_unique<RsbSystem>(settings_[level], alpha, pts_[level], inner_, r);
}

int RsbModel::refine_on() const { return index_of("test_error"); }

Stability RsbModel::stability(const CurvePoint& p) const {
  const Estimate& a1 = p.entry(index_of("at_eigenvalue"));
  const Estimate& a0 = p.entry(index_of("at0_eigenvalue"));
  const Estimate& a = a1.mean >= a0.mean ? a1 : a0;
  return rs_stability(a.mean, a.se);
}

double RsbModel::free_energy(const CurvePoint& p) const { return p.entry(index_of("free_energy")).mean; }

bool RsbModel::distinct(const CurvePoint& a, const CurvePoint& b) const {
  const std::size_t i = index_of("test_error");
  const Estimate &ea = a.entry(i), &eb = b.entry(i);
  return std::abs(eb.mean - ea.mean) > 4.0 * std::hypot(eb.se, ea.se) + 1e-3;
}

std::vector<std::string> RsbModel::notes(const CurvePoint& p) const { return {std::to_string(n_points(p.level))}; }

ModelCard RsbModel::card() {
  ModelCard c;
  c.command = "slr erm-1rsb";
  c.summary = "Ridge ERM test/train error vs alpha: one-step replica-symmetry-broken (1RSB) fixed point at zero "
              "temperature, for the RS-unstable windows";
  c.equations = "docs/equations/slr_rsb.md";
  c.observables_note =
      "q_k, q_v = q1 (self-overlap), V = intra-state susceptibility, dq = q1 - q0 (0 up to noise: the 1RSB "
      "point has collapsed onto RS), log_x and x_parisi = the Parisi parameter x = beta x_beta (R5; x_edge = "
      "-1/+1 at the ends of [1e-3, 1e3]); mhat, qhat = qhat1 = alpha E<|g|^2>, Vhat = 1/V - lambda (R4), "
      "Vhat_*_hessian = alpha E<tr J> (misses the jumps of the prox minimiser); test_error (S7) at q = q1, "
      "train_error = E<(y - f)^2> incl. Delta with the tilted inner measure (R6), train_loss = train_error/2 "
      "+ lambda (q_k + q_v)/(2 alpha), free_energy = the 1RSB ground-state energy per sample (R1), equal to "
      "train_loss at the fixed point; at_eigenvalue = intra-state replicon, at0_eigenvalue = inter-state "
      "replicon (R7); inner_ess = effective share of inner points under the tilt exp(-x M); stein_gap = "
      "|Vhat0 - Vhat1 - x qhat0|/(lambda + |Vhat0|), a check of the inner Stein identity (noise level "
      "0.01-0.1); x_balance = the extremum condition (R5), 0 at the fixed point; outer Sobol QMC points x "
      "replicates random shifts, inner antithetic moment-matched Sobol points per outer point (R2), one "
      "fixed point per replicate, values mean and _se over replicates";
  c.params = replica_card_params();
  ParamDomain inner = interval_domain(2, 4096);
  inner.integer = true;
  c.params.push_back({"inner_points", "32", inner, "Inner QMC points per outer point (antithetic pairs; even)"});
  c.settings = replica_card_settings(
      "Outer QMC points per replicate (§7b), an integer in [16, 4194304]; default 1024; refinement "
      "multiplies them by 4 per level (column points); points x inner-points x replicates <= 2^24");
  c.continuation = "alpha";
  c.plot_y = "test_error";
  c.stability_column = "rs_stability";
  c.columns_note =
      "rs_stability = stability of the 1RSB point from the larger of the two replicons (stable < 1 - 2 se, "
      "unstable > 1 + 2 se, else marginal); points = outer QMC points per replicate behind the point (after "
      "refinement)";
  c.default_init = "informed";
  c.sorted_continuation = true;
  c.map_radius = false;  // 18 nested maps per replicate and point (finite differences)
  return c;
}

RsbSetting RsbModel::setting_of(const ParamValues& p) {
  RsbSetting s;
  s.rs = replica_common_setting(p);
  s.rs.n_points = replica_points_of(p, 1024);
  s.n_inner = static_cast<int>(p("inner_points"));
  return s;
}

void RsbModel::check(const ParamValues& p) {
  const RsbSetting s = setting_of(p);
  if (s.n_inner % 2 != 0) throw std::invalid_argument("--inner-points: must be even");
  // Memory and time per map evaluation grow as outer x inner points (x 16 after 2 refinements).
  if (static_cast<double>(s.rs.n_points) * s.n_inner * s.rs.replicates > double(1 << 24))
    throw std::invalid_argument("--points x --inner-points x --replicates: must be <= 16777216");
  validate(s);
}

std::vector<CurveStart> RsbModel::starts(const ParamValues& p) {
  const RsbSetting s = setting_of(p);
  return replica_starts({ReplicaInit::Informed, ReplicaInit::Uninformed}, rsb_informed_start(s),
                        rsb_uninformed_start(s));
}

std::vector<RsbPoint> rsb_curve(const RsbSetting& set, const std::vector<double>& alphas_in,
                                const std::vector<ReplicaInit>& inits, const RsbCurveOptions& opt) {
  validate(set);
  std::vector<double> alphas = alphas_in;
  std::sort(alphas.begin(), alphas.end());
  RsbModel model(set);
  const std::vector<CurvePoint> cps =
      run_curve(model, alphas, replica_starts(inits, rsb_informed_start(set), rsb_uninformed_start(set)), opt);
  std::vector<RsbPoint> out;
  for (const CurvePoint& c : cps) {
    RsbPoint p = named_point<RsbPoint>(c);
    p.alpha = c.param;
    p.init = inits[c.start];
    p.n_points = model.n_points(c.level);
    p.n_inner = set.n_inner;
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace slr
}  // namespace saddle
