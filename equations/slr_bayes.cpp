// SLR Bayes-optimal state evolution (docs/equations/slr_bayes.md §5, (S23)-(S25)) with QMC channel expectations
// (§7b). See slr_bayes.hpp.
#include "equations/slr_bayes.hpp"

#include <omp.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <stdexcept>

#include "integrators/quadrature.hpp"
#include "integrators/special.hpp"

namespace saddle {
namespace slr {

namespace {
constexpr int kMaxBL = 8;
using Arr = std::array<double, kMaxBL>;

int inner_nodes(const BayesSetting& set) {
  if (set.inner_nodes > 0) return set.inner_nodes;
  if (std::isinf(set.nu)) return 48;
  return set.L <= 2 ? 64 : (set.L == 3 ? 14 : 7);
}
}  // namespace

std::string to_string(BayesInit i) { return i == BayesInit::Informed ? "informed" : "uninformed"; }

std::vector<int> bayes_lengths(const BayesSetting& set) {
  return set.lengths.empty() ? std::vector<int>{set.L} : set.lengths;
}

namespace {
bool all_length_one(const BayesSetting& set) {
  for (int L : bayes_lengths(set))
    if (L != 1) return false;
  return true;
}
}  // namespace

void validate(const BayesSetting& set) {
  const int maxL = (set.task == Task::Max && !std::isinf(set.nu)) ? 4 : kMaxBL;
  for (int L : bayes_lengths(set))
    if (L < 1 || L > maxL)
      throw std::invalid_argument("L must be in 1.." + std::to_string(maxL) +
                                  " for the Bayes state evolution");
  if (!(set.nu >= 0.0) || (std::isinf(set.nu) && set.task != Task::Max))
    throw std::invalid_argument("nu must be >= 0 (inf only for max-SLR)");
  if (!(set.delta >= 0.0) || !std::isfinite(set.delta))
    throw std::invalid_argument("delta must be finite and >= 0");
  if (set.n_points < 16) throw std::invalid_argument("need at least 16 QMC points");
  if (set.replicates < 2) throw std::invalid_argument("need at least 2 QMC replicates");
  if (set.inner_nodes < 0 || set.inner_nodes > 200)
    throw std::invalid_argument("inner Gauss-Hermite nodes must be in 1..200 (0: automatic)");
}

int bayes_qmc_dim(const BayesSetting& set) {
  const auto Ls = bayes_lengths(set);
  const int L = *std::max_element(Ls.begin(), Ls.end());
  return set.task == Task::Spiked ? 2 * L + 1 : 3 * L + 1;
}

BayesOutput::BayesOutput(const BayesSetting& set, double Q_k)
    : task_(set.task), L_(set.L), nu_(set.nu), V_k_(std::max(1.0 - Q_k, 1e-14)) {
  if (task_ == Task::Spiked || L_ == 1) return;
  const int n = inner_nodes(set);
  gh_ = &gauss_hermite(n);
  const double sV = std::sqrt(V_k_);
  if (!std::isinf(nu_)) {
    // Tensor GH over the L-1 Helmert coordinates of 1^perp: h = w + sqrt(V) B zeta.
    const int L = L_, d = L - 1;
    long total = 1;
    for (int j = 0; j < d; ++j) total *= n;
    node_off_.assign(static_cast<std::size_t>(total) * L, 0.0);
    node_w_.assign(total, 1.0);
    for (long k = 0; k < total; ++k) {
      long q = k;
      for (int j = 0; j < d; ++j) {
        const int i = static_cast<int>(q % n);
        q /= n;
        node_w_[k] *= gh_->w[i];
        // Helmert column j: (1,...,1, -(j+1), 0, ...)/sqrt((j+1)(j+2)).
        const double nrm = std::sqrt(static_cast<double>((j + 1) * (j + 2)));
        for (int l = 0; l <= j; ++l) node_off_[k * L + l] += sV * gh_->x[i] / nrm;
        node_off_[k * L + j + 1] -= sV * gh_->x[i] * (j + 1) / nrm;
      }
    }
  }
}

void BayesOutput::eval(const double* wchi, double* G, double* dG) const {
  const int L = L_;
  for (int i = 0; i < L * L; ++i) dG[i] = 0.0;
  if (task_ == Task::Spiked) {
    // G_eps = exp(sqrt(nu) w_eps - nu Q_k/2): closed form (constant factor dropped).
    const double sn = std::sqrt(nu_);
    double mx = -1e300;
    for (int e = 0; e < L; ++e) mx = std::max(mx, sn * wchi[e]);
    for (int e = 0; e < L; ++e) {
      G[e] = std::exp(sn * wchi[e] - mx);
      dG[e * L + e] = sn * G[e];
    }
    return;
  }
  if (L == 1) {
    G[0] = 1.0;
    return;
  }
  for (int e = 0; e < L; ++e) G[e] = 0.0;
  if (std::isinf(nu_)) {
    // P_eps = int phi(t) prod_{j != eps} Phi(t + (w_eps - w_j)/sqrt(V)) dt (S23).
    const double sV = std::sqrt(V_k_);
    for (int q = 0; q < gh_->size(); ++q) {
      const double t = gh_->x[q], wq = gh_->w[q];
      for (int e = 0; e < L; ++e) {
        Arr Ph{}, ph{};
        double prod = 1.0;
        for (int j = 0; j < L; ++j) {
          if (j == e) continue;
          const double a = t + (wchi[e] - wchi[j]) / sV;
          Ph[j] = norm_cdf(a);
          ph[j] = norm_pdf(a);
          prod *= Ph[j];
        }
        G[e] += wq * prod;
        for (int l = 0; l < L; ++l) {
          if (l == e) continue;
          double pr = 1.0;
          for (int j = 0; j < L; ++j)
            if (j != e && j != l) pr *= Ph[j];
          const double dl = -wq * ph[l] * pr / sV;
          dG[e * L + l] += dl;
          dG[e * L + e] -= dl;
        }
      }
    }
    return;
  }
  // Finite nu: G_eps/L = E_h[softmax(nu h)_eps]; dG_eps/dw_l = nu E[s_eps (delta_el - s_l)].
  Arr s{};
  const long total = static_cast<long>(node_w_.size());
  for (long k = 0; k < total; ++k) {
    double mx = -1e300, den = 0.0;
    for (int l = 0; l < L; ++l) {
      s[l] = nu_ * (wchi[l] + node_off_[k * L + l]);
      mx = std::max(mx, s[l]);
    }
    for (int l = 0; l < L; ++l) {
      s[l] = std::exp(s[l] - mx);
      den += s[l];
    }
    const double wk = node_w_[k];
    for (int l = 0; l < L; ++l) s[l] /= den;
    for (int e = 0; e < L; ++e) {
      G[e] += wk * s[e];
      for (int l = 0; l < L; ++l) dG[e * L + l] += wk * nu_ * s[e] * ((l == e) - s[l]);
    }
  }
}

namespace {
// The channel at one fixed length set.L.
BayesChannelStats bayes_channel_fixed(const BayesSetting& set, double alpha, double Q_k, double Q_v,
                                      const SobolGaussian& pts, int rep) {
  const int L = set.L;
  const double V_v = 1.0 - Q_v;
  const double Dv = std::max(set.delta + V_v, 1e-12);
  const double D1 = 1.0 + set.delta;
  const double sqrt_nu = std::sqrt(set.nu);
  const bool spiked = set.task == Task::Spiked;
  const bool max_inf = !spiked && std::isinf(set.nu);
  const double s_k = std::sqrt(std::max(Q_k * (1.0 - Q_k), 0.0));
  const double sq_k = std::sqrt(std::max(Q_k, 0.0)), sq_v = std::sqrt(std::max(Q_v, 0.0));
  const double c_yw = Q_v / D1, s_w1 = std::sqrt(std::max(Q_v - Q_v * Q_v / D1, 0.0));

  const BayesOutput out(set, Q_k);
  const int n = pts.points();
  double S_k = 0, S_v = 0, S_A = 0, S_B = 0;
  Arr wchi{}, wz{}, G{}, logN{}, N{}, gk{}, gz{};
  std::array<double, kMaxBL * kMaxBL> dGf{};
  for (int i = 0; i < n; ++i) {
    const double* u = pts.point(rep, i);
    double wgt = 1.0;
    int off;
    if (spiked) {
      for (int l = 0; l < L; ++l) wchi[l] = sq_k * u[l] + (l == 0 ? Q_k * sqrt_nu : 0.0);
      off = L;
    } else {
      Arr chis{};
      for (int l = 0; l < L; ++l) chis[l] = u[l];
      if (max_inf) {
        const int am = static_cast<int>(std::max_element(chis.begin(), chis.begin() + L) - chis.begin());
        std::swap(chis[0], chis[am]);
      } else if (L > 1) {
        double mx = -1e300, den = 0.0;
        for (int l = 0; l < L; ++l) mx = std::max(mx, set.nu * chis[l]);
        for (int l = 0; l < L; ++l) den += std::exp(set.nu * chis[l] - mx);
        wgt = L * std::exp(set.nu * chis[0] - mx) / den;
      }
      for (int l = 0; l < L; ++l) wchi[l] = Q_k * chis[l] + s_k * u[L + l];  // fields of §5
      off = 2 * L;
    }
    const double y = std::sqrt(D1) * u[off + L - 1];
    wz[0] = c_yw * y + s_w1 * u[off + L];
    for (int l = 1; l < L; ++l) wz[l] = sq_v * u[off + l - 1];

    out.eval(wchi.data(), G.data(), dGf.data());
    // N_eps = N(y; w^z_eps, Delta + V_v), in log space; Z = sum N G.
    double mx = -1e300;
    for (int e = 0; e < L; ++e) {
      const double r = y - wz[e];
      logN[e] = -r * r / (2.0 * Dv);
      mx = std::max(mx, logN[e]);
    }
    double Z = 0.0, Gs = 0.0;
    for (int e = 0; e < L; ++e) {
      N[e] = std::exp(logN[e] - mx);
      Z += N[e] * G[e];
      Gs += G[e];
    }
    if (!(Z > 0.0) || !std::isfinite(Z)) continue;  // measure-zero underflow
    double sk = 0.0, sv = 0.0;
    for (int l = 0; l < L; ++l) {
      double num = 0.0;
      for (int e = 0; e < L; ++e) num += N[e] * dGf[e * L + l];
      gk[l] = num / Z;
      gz[l] = G[l] * N[l] * (y - wz[l]) / (Dv * Z);
      sk += gk[l] * gk[l];
      sv += gz[l] * gz[l];
    }
    S_k += wgt * sk;
    S_v += wgt * sv;
    double a2 = 0.0;
    for (int l = 0; l < L; ++l) a2 += (G[l] / Gs) * (G[l] / Gs);
    S_A += wgt * a2;
    S_B += wgt * G[0] / Gs;
  }
  BayesChannelStats c;
  c.Qhat_k = alpha * S_k / n;  // (S24)
  c.Qhat_v = alpha * S_v / n;
  c.A_hat = S_A / n;
  c.B_hat = S_B / n;
  return c;
}
}  // namespace

BayesChannelStats bayes_channel(const BayesSetting& set, double alpha, double Q_k, double Q_v,
                                const SobolGaussian& pts, int rep) {
  // Variable length: every expectation is over samples, hence averaged over their lengths.
  const auto Ls = bayes_lengths(set);
  const double w = 1.0 / static_cast<double>(Ls.size());
  BayesChannelStats c;
  for (int L : Ls) {
    BayesSetting one = set;
    one.L = L;
    one.lengths.clear();
    const BayesChannelStats s = bayes_channel_fixed(one, alpha, Q_k, Q_v, pts, rep);
    c.Qhat_k += w * s.Qhat_k;
    c.Qhat_v += w * s.Qhat_v;
    c.A_hat += w * s.A_hat;
    c.B_hat += w * s.B_hat;
  }
  return c;
}

double bayes_spiked_test_error(const BayesSetting& set, double Q_k, double Q_v) {
  // (S25): the BO predictor is softmax attention with key sqrt(nu) k_hat, value v_hat.
  PopulationSetting ps;
  ps.task = Task::Spiked;
  ps.lengths = bayes_lengths(set);
  ps.nu = set.nu;
  ps.activation = Activation::Softmax;
  if (all_length_one(set)) return 1.0 - Q_v;
  return population_risk(ps, std::sqrt(set.nu) * Q_k, set.nu * Q_k, Q_v, Q_v);
}

BayesSystem::BayesSystem(BayesSetting set, double alpha, std::shared_ptr<const SobolGaussian> pts,
                         int replicate, double e_bayes)
    : set_(std::move(set)), alpha_(alpha), pts_(std::move(pts)), r_(replicate), e_bayes_(e_bayes) {}

Vec BayesSystem::map(const Vec& x) const {
  Vec xp = x;
  project(xp);
  const BayesChannelStats c = bayes_channel(set_, alpha_, xp(0), xp(1), *pts_, r_);
  Vec out(2);
  out << c.Qhat_k / (1.0 + c.Qhat_k), c.Qhat_v / (1.0 + c.Qhat_v);  // (S24)
  project(out);
  return out;
}

void BayesSystem::project(Vec& x) const {
  for (int a = 0; a < 2; ++a) {
    if (!std::isfinite(x(a))) x(a) = 0.5;
    x(a) = std::min(std::max(x(a), 0.0), 1.0 - 1e-12);
  }
  if (all_length_one(set_)) x(0) = 0.0;  // no key channel at L = 1
}

BayesValues<double> BayesSystem::evaluate(const Vec& x) const {
  Vec xp = x;
  project(xp);
  const BayesChannelStats c = bayes_channel(set_, alpha_, xp(0), xp(1), *pts_, r_);
  BayesValues<double> v;
  v.Q_k = xp(0);
  v.Q_v = xp(1);
  v.Qhat_k = c.Qhat_k;
  v.Qhat_v = c.Qhat_v;
  v.A_hat = c.A_hat;
  v.B_hat = c.B_hat;
  v.test_error = set_.task == Task::Spiked ? bayes_spiked_test_error(set_, xp(0), xp(1))
                                           : 1.0 - 2.0 * xp(1) * c.B_hat + xp(1) * c.A_hat;
  v.e_bayes = e_bayes_;
  return v;
}

Vec BayesSystem::observables(const Vec& x) const { return observables_of(evaluate(x)); }

BayesCurveOptions::BayesCurveOptions() {
  solver.method = Method::Damped;
  solver.mix = 0.5;
  solver.tol = 1e-7;
  solver.max_iter = 1000;
  solver.newton_polish = false;
  solver.stall_window = 0;
  retry = false;
}

std::vector<std::string> BayesSystem::observable_names() const { return observable_names_of<BayesValues<double>>(); }

BayesModel::BayesModel(const BayesSetting& set)
    : set_(set),
      pts_(std::make_shared<const SobolGaussian>(bayes_qmc_dim(set), set.n_points, set.replicates,
                                                 set.seed)),
      e_bayes_(bayes_risk(set.task, bayes_lengths(set), set.nu)) {}

BayesModel::BayesModel(const ParamValues& p) : BayesModel(setting_of(p)) {}

std::unique_ptr<FixedPointSystem> BayesModel::system(double alpha, int r, int) const {
  return std::make_unique<BayesSystem>(set_, alpha, pts_, r, e_bayes_);
}

bool BayesModel::distinct(const CurvePoint& a, const CurvePoint& b) const {
  for (std::size_t j = 0; j < a.x.size(); ++j)  // the state (Q_k, Q_v)
    if (std::abs(b.x[j].mean - a.x[j].mean) > 4.0 * std::hypot(b.x[j].se, a.x[j].se) + 1e-3)
      return true;
  return false;
}

namespace {
// The starts of §5 (informed, uninformed), in BayesInit order.
std::vector<CurveStart> bayes_starts(const std::vector<BayesInit>& inits) {
  std::vector<CurveStart> starts;
  for (BayesInit init : inits) {
    CurveStart st;
    st.label = to_string(init);
    st.x0 = Vec(2);
    if (init == BayesInit::Informed) st.x0 << 0.999, 0.999;
    else st.x0 << 1e-3, 1e-3;
    st.warm = false;
    starts.push_back(st);
  }
  return starts;
}
}  // namespace

std::vector<CurveStart> BayesModel::starts(const ParamValues&) {
  return bayes_starts({BayesInit::Informed, BayesInit::Uninformed});
}

BayesSetting BayesModel::setting_of(const ParamValues& p) {
  BayesSetting s;
  s.task = parse_task(p.text("task"));
  s.nu = p("nu");
  s.delta = p("delta");
  s.n_points = static_cast<int>(p("points"));
  s.replicates = static_cast<int>(p("replicates"));
  s.seed = parse_seed_text(p.text("seed"));
  s.inner_nodes = static_cast<int>(p("inner_nodes"));
  s.L = static_cast<int>(p("L"));
  const std::string& dist = p.text("L_dist");
  if (!dist.empty()) {
    s.lengths = parse_length_set(dist, kMaxBL);
    s.L = s.lengths.front();
  }
  return s;
}

void BayesModel::check(const ParamValues& p) {
  const BayesSetting s = setting_of(p);
  if (std::isinf(s.nu) && s.task != Task::Max)
    throw std::invalid_argument("--nu: inf only with --task max");
  if (static_cast<double>(s.n_points) * s.replicates > double(1 << 24))
    throw std::invalid_argument("--points x --replicates: must be <= 16777216");
  validate(s);
}

ModelCard BayesModel::card() {
  ModelCard c;
  c.command = "slr bayes";
  c.summary = "Bayes-optimal error vs alpha: state evolution from an informed and an uninformed start, hard-phase check";
  c.equations = "docs/equations/slr_bayes.md §5, (S23)-(S25)";
  c.observables_note =
      "test_error = (S25) for spiked, 1 - 2 Q_v B_hat + Q_v A_hat for max; A_hat = B_hat is the "
      "Nishimori identity; e_bayes = population Bayes risk (S9), the alpha -> inf limit; channel "
      "expectations by Sobol QMC (§7b), points x replicates random shifts, one fixed point per "
      "replicate, values mean and _se over replicates";
  ParamDomain L = interval_domain(1, kMaxBL), nu = interval_domain(0, kSlrMaxNu),
              alpha = interval_domain(kSlrMinAlpha, kSlrMaxAlpha), points = interval_domain(16, 1 << 22),
              replicates = interval_domain(2, 1024), inner = interval_domain(0, 200);
  for (ParamDomain* d : {&L, &points, &replicates, &inner}) d->integer = true;
  nu.allow_inf = true;
  c.params = {
      {"task", "spiked", {}, "The task", {"spiked", "max"}},
      {"L", "2", L, "Number of tokens (max-SLR at finite nu: 1..4)"},
      {"nu", "2", nu, "Signal strength nu (inf only for max)"},
      {"delta", "0", interval_domain(0, kSlrMaxScale), "Noise variance Delta"},
      {"alpha", "0.5:8:16", alpha, "Sample ratio N/D"},
      {"points", "8192", points, "QMC points per replicate (§7b); points x replicates <= 2^24"},
      {"replicates", "8", replicates, "QMC random shifts R (error bars need R >= 2)"},
      {"inner_nodes", "0", inner, "Gauss-Hermite nodes per axis for G_eps in max-SLR (0: automatic)"}};
  c.settings = {{"seed", "1", "Seed of the random shifts, an integer in [0, 2^64 - 1]"},
                {"L_dist", "",
                 "Variable length: L drawn uniformly from this set (e.g. 1,2,3) per sample, observed by "
                 "the BO predictor (docs/equations/slr_population.md §1.4); stands in for --L",
                 "L"}};
  c.continuation = "alpha";
  c.plot_y = "test_error";
  c.plot_references = {"e_bayes"};
  c.coexist_column = "hard_phase";
  return c;
}

std::vector<BayesPoint> bayes_curve(const BayesSetting& set, const std::vector<double>& alphas_in,
                                    const std::vector<BayesInit>& inits,
                                    const BayesCurveOptions& opt) {
  validate(set);
  std::vector<double> alphas = alphas_in;
  std::sort(alphas.begin(), alphas.end());
  BayesModel model(set);
  // A fresh start at every alpha (the scheme of §5). Warm starts are not used: in noiseless
  // spiked-SLR Q_v = 1 is a fixed point at every alpha but unstable for alpha < 1, and a warm
  // start from Q_v = 1 - 1e-12 would stay there within any absolute tolerance.
  const std::vector<CurvePoint> cps = run_curve(model, alphas, bayes_starts(inits), opt);
  std::vector<BayesPoint> out;
  for (const CurvePoint& c : cps) {
    BayesPoint p = named_point<BayesPoint>(c);
    p.alpha = c.param;
    p.init = inits[c.start];
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace slr
}  // namespace saddle
