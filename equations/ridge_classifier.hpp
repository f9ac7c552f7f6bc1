// Ridge classifier of a sign teacher: square-loss ERM with a ridge penalty on labels
// y = ±sign(z), a GLM-type replica fixed point in (m, q, V). Equations, derivation, closed form and
// checks: docs/equations/ridge.md §C (labels (RC1)-(RC5)). This file is the worked example of
// docs/adding_a_model.md: the whole model (equations, card, starts) in one file; the command line
// gets it from one line in tools/cli/models.cpp.
//
// Data: x ~ N(0, I_D), teacher w* with |w*|^2 = D, z = x.w*/sqrt(D) ~ N(0, 1); label y = sign(z),
// flipped with probability `flip`. Estimator: argmin_w sum_mu (1/2)(y_mu - x_mu.w/sqrt(D))^2 +
// (lambda/2)|w|^2. Overlaps m = w.w*/D, q = |w|^2/D, susceptibility V.
#pragma once
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "integrators/special.hpp"
#include "solver/curve.hpp"
#include "solver/model_card.hpp"
#include "solver/system.hpp"

namespace saddle {
namespace ridge_classifier {

struct Params {
  double alpha = 1.0;   // N / D
  double lambda = 0.1;  // ridge penalty > 0
  double flip = 0.0;    // label-flip probability in [0, 1/2]
};

// (RC1) The only two label moments a square loss sees: E[y z] = (1 - 2 flip) sqrt(2/pi), E[y^2] = 1.
inline double kappa(double flip) { return (1.0 - 2.0 * flip) * std::sqrt(2.0 / kPi); }

// (RC2) Channel conjugates of the square loss: the proximal map is omega* = (omega + V y)/(1 + V),
// so Vhat = alpha/(1+V), mhat = alpha kappa/(1+V), qhat = alpha E[(y - omega)^2]/(1+V)^2 with
// E[(y - omega)^2] = 1 - 2 kappa m + q.
struct Hats {
  double mhat, qhat, Vhat;
};
inline Hats channel(const Params& p, double m, double q, double V) {
  const double k = kappa(p.flip), g = 1.0 / (1.0 + V);
  return {p.alpha * k * g, p.alpha * (1.0 - 2.0 * k * m + q) * g * g, p.alpha * g};
}

// (RC4) Observables at (m, q, V): classification error against the clean teacher
// arccos(m/sqrt(q))/pi, test MSE E[(y - omega)^2] = 1 - 2 kappa m + q, training MSE (the test MSE
// shrunk by the leave-one-out factor 1/(1+V)^2).
struct Values {
  double class_error, test_mse, train_mse;
};
inline Values values_at(const Params& p, double m, double q, double V) {
  const double mse = 1.0 - 2.0 * kappa(p.flip) * m + q;
  const double c = q > 0.0 ? std::max(-1.0, std::min(1.0, m / std::sqrt(q))) : 0.0;
  return {std::acos(c) / kPi, mse, mse / ((1.0 + V) * (1.0 + V))};
}

// (RC5) Closed form: V is the positive root of lambda V^2 + (lambda + alpha - 1) V - 1 = 0,
// m = alpha kappa V/(1+V), theta = alpha V^2/(1+V)^2, q = (m^2 + theta (1 - 2 kappa m))/(1 - theta).
struct ClosedForm {
  double m, q, V;
};
inline ClosedForm closed_form(const Params& p) {
  const double b = p.lambda + p.alpha - 1.0;
  const double V = 2.0 / (b + std::sqrt(b * b + 4.0 * p.lambda));  // cancellation-free root
  const double m = p.alpha * kappa(p.flip) * V / (1.0 + V);
  const double theta = p.alpha * V * V / ((1.0 + V) * (1.0 + V));
  const double q = (m * m + theta * (1.0 - 2.0 * kappa(p.flip) * m)) / (1.0 - theta);
  return {m, q, V};
}

// (RC3) The fixed-point map: hats from the channel (RC2), then the ridge prior
// V = 1/(lambda + Vhat), m = mhat V, q = (mhat^2 + qhat) V^2.
class System : public FixedPointSystem {
 public:
  explicit System(const Params& p) : p_(p) {}
  int dim() const override { return 3; }
  std::vector<std::string> names() const override { return {"m", "q", "V"}; }
  Vec map(const Vec& x) const override {
    const Hats h = channel(p_, x[0], x[1], x[2]);
    const double V = 1.0 / (p_.lambda + h.Vhat);
    Vec f(3);
    f << h.mhat * V, (h.mhat * h.mhat + h.qhat) * V * V, V;
    return f;
  }
  void project(Vec& x) const override {
    x[2] = std::max(x[2], 1e-300);      // V > 0
    x[1] = std::max(x[1], x[0] * x[0]);  // q >= m^2
  }
  std::vector<std::string> observable_names() const override {
    return {"mhat", "qhat", "Vhat", "class_error", "test_mse", "train_mse"};
  }
  Vec observables(const Vec& x) const override {
    const Hats h = channel(p_, x[0], x[1], x[2]);
    const Values v = values_at(p_, x[0], x[1], x[2]);
    Vec o(6);
    o << h.mhat, h.qhat, h.Vhat, v.class_error, v.test_mse, v.train_mse;
    return o;
  }

 private:
  Params p_;
};

// The model as the curve driver and the generic subcommand see it: continuation in alpha.
class Model : public CurveModel {
 public:
  explicit Model(const ParamValues& p) : lambda_(p("lambda")), flip_(p("flip")) {}
  std::unique_ptr<FixedPointSystem> system(double alpha, int, int) const override {
    return std::make_unique<System>(Params{alpha, lambda_, flip_});
  }
  static std::vector<CurveStart> starts(const ParamValues&) {
    CurveStart s;
    s.label = "cold";
    s.x0 = Vec::Zero(3);
    s.x0[2] = 1.0;  // (m, q, V) = (0, 0, 1)
    return {s};
  }
  static ModelCard card() {
    ModelCard c;
    c.command = "ridge-classifier";
    c.summary = "Ridge classifier of a sign teacher: square-loss ERM, replica fixed point";
    c.equations = "docs/equations/ridge.md §C";
    c.observables_note = "class_error = arccos(m/sqrt(q))/pi against the clean teacher; "
                         "test_mse = 1 - 2 kappa m + q, kappa = (1 - 2 flip) sqrt(2/pi)";
    c.params = {{"alpha", "0.5:4:8", positive_domain(1e6), "Sample ratio N/D > 0"},
                {"lambda", "0.1", positive_domain(1e6), "Ridge penalty lambda > 0"},
                {"flip", "0", interval_domain(0.0, 0.5), "Label-flip probability in [0, 1/2]"}};
    c.continuation = "alpha";
    c.plot_y = "class_error";
    return c;
  }

 private:
  double lambda_, flip_;
};

}  // namespace ridge_classifier
}  // namespace saddle
