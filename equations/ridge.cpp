// Ridge fixture: replica-symmetric channel/prior updates and the closed-form fixed point
// (docs/equations/ridge.md §4.8 with softmax at L = 1; prior (S14)).
#include "equations/ridge.hpp"

#include <algorithm>
#include <cmath>

namespace saddle {
namespace ridge {

Hats channel(const Params& p, double m, double q, double V) {
  const double a = p.alpha / (1.0 + V);
  return {a, p.alpha * (1.0 + p.delta - 2.0 * m + q) / ((1.0 + V) * (1.0 + V)), a};
}

ClosedForm closed_form(const Params& p) {
  const double b = p.lambda + p.alpha - 1.0;
  // Positive root of lambda V^2 + b V - 1 = 0, in the cancellation-free form.
  const double V = 2.0 / (b + std::sqrt(b * b + 4.0 * p.lambda));
  const double m = p.alpha * V / (1.0 + V);
  const double theta = p.alpha * V * V / ((1.0 + V) * (1.0 + V));
  const double q = (m * m + theta * (1.0 - 2.0 * m + p.delta)) / (1.0 - theta);
  const double e = 1.0 - 2.0 * m + q;
  return {m, q, V, e, (e + p.delta) / ((1.0 + V) * (1.0 + V))};
}

Vec RidgeSystem::map(const Vec& x) const {
  const Hats h = channel(p_, x[0], x[1], x[2]);
  const double V = 1.0 / (p_.lambda + h.Vhat);  // (S14)
  Vec out(3);
  out << h.mhat * V, (h.mhat * h.mhat + h.qhat) * V * V, V;
  return out;
}

void RidgeSystem::project(Vec& x) const {
  x[2] = std::max(x[2], 1e-300);          // V > 0
  x[1] = std::max(x[1], x[0] * x[0]);     // q >= m^2
}

RidgeValues<double> RidgeSystem::evaluate(const Vec& x) const {
  const Hats h = channel(p_, x[0], x[1], x[2]);
  RidgeValues<double> v;
  v.m = x[0];
  v.q = x[1];
  v.V = x[2];
  v.mhat = h.mhat;
  v.qhat = h.qhat;
  v.Vhat = h.Vhat;
  v.test_error = 1.0 - 2.0 * x[0] + x[1];
  v.train_error = (v.test_error + p_.delta) / ((1.0 + x[2]) * (1.0 + x[2]));
  return v;
}

Vec RidgeSystem::observables(const Vec& x) const {
  RidgeValues<double> v = evaluate(x);
  std::vector<double> o;
  v.visit_observables([&](const char*, double d) { o.push_back(d); });
  return Eigen::Map<const Vec>(o.data(), static_cast<Eigen::Index>(o.size()));
}

RidgeModel::RidgeModel(const ParamValues& p) : lambda_(p("lambda")), delta_(p("delta")) {}

std::unique_ptr<FixedPointSystem> RidgeModel::system(double alpha, int, int) const {
  return std::make_unique<RidgeSystem>(Params{alpha, lambda_, delta_});
}

std::vector<CurveStart> RidgeModel::starts(const ParamValues&) {
  CurveStart st;
  st.label = "cold";
  st.x0 = RidgeSystem::cold_start();
  return {st};
}

ModelCard RidgeModel::card() {
  ModelCard c;
  c.command = "ridge";
  c.summary = "Ridge regression fixture: replica fixed point with a closed form";
  c.equations = "docs/equations/ridge.md §4.8, prior (S14)";
  c.observables_note = "test_error = 1 - 2m + q (excess over Delta), train_error incl. Delta";
  // Domains: every corner converges to finite values (alpha = 1e308 overflowed the residual).
  c.params = {{"alpha", "0.5:4:8", interval_domain(1e-6, 1e6), "Sample ratio N/D in [1e-6, 1e6]"},
              {"lambda", "0.1", interval_domain(1e-8, 1e6), "Ridge penalty lambda in [1e-8, 1e6]"},
              {"delta", "0.25", interval_domain(0.0, 1e6), "Noise variance Delta in [0, 1e6]"}};
  c.continuation = "alpha";
  c.plot_y = "test_error";
  return c;
}

std::vector<RidgePoint> ridge_curve(double lambda, double delta, const std::vector<double>& alphas,
                                    const SolverOptions& opt) {
  ParamValues pv;
  pv.set("lambda", lambda);
  pv.set("delta", delta);
  RidgeModel model(pv);
  CurveOptions copt;
  copt.solver = opt;
  const std::vector<CurvePoint> cps = run_curve(model, alphas, RidgeModel::starts(pv), copt);
  std::vector<RidgePoint> out;
  for (const CurvePoint& c : cps) {
    RidgePoint p;
    static_cast<CurveStatus&>(p) = c;
    p.alpha = c.param;
    std::size_t j = 0;
    p.visit([&](const char*, Estimate& e) { e = c.entry(j++); });
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace ridge
}  // namespace saddle
