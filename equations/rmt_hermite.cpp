// Activations and Hermite coefficients for the RMT model: docs/equations/rmt.md §2 (kappa_d), §3 (R-H).
#include "equations/rmt_hermite.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "integrators/quadrature.hpp"
#include "integrators/special.hpp"

namespace saddle {
namespace rmt {

double Activation::raw(double t) const {
  switch (kind) {
    case ActKind::Tanh: return std::tanh(t);
    case ActKind::Erf: return std::erf(t);
    case ActKind::Relu: return t > 0.0 ? t : 0.0;
    case ActKind::Sigmoid: return saddle::sigmoid(t);
    case ActKind::Cos: return std::cos(t);
    case ActKind::Exp: return std::exp(t);
    case ActKind::Linear: return t;
    case ActKind::TExp: return std::exp(std::min(t, T));
  }
  return std::numeric_limits<double>::quiet_NaN();
}

std::vector<double> Activation::kinks() const {
  if (kind == ActKind::Relu) return {0.0};
  if (kind == ActKind::TExp) return {T};
  return {};
}

double Activation::kappa_d() const {
  switch (kind) {
    case ActKind::Relu:
    case ActKind::Linear: return 1.0;
    case ActKind::Exp: return std::numeric_limits<double>::infinity();
    default: return 0.0;  // bounded f (tanh, erf, sigmoid, cos, texp)
  }
}

std::string activation_help() {
  return "tanh, erf, relu, sigmoid, cos, exp, linear, texp:T (= exp(min(t,T)))";
}

Activation parse_activation(const std::string& text_in) {
  std::string text = text_in;
  text.erase(0, text.find_first_not_of(" \t"));
  text.erase(text.find_last_not_of(" \t") + 1);
  Activation a;
  a.name = text;
  if (text == "tanh") a.kind = ActKind::Tanh;
  else if (text == "erf") a.kind = ActKind::Erf;
  else if (text == "relu") a.kind = ActKind::Relu;
  else if (text == "sigmoid") a.kind = ActKind::Sigmoid;
  else if (text == "cos") a.kind = ActKind::Cos;
  else if (text == "exp") a.kind = ActKind::Exp;
  else if (text == "linear") a.kind = ActKind::Linear;
  else if (text.rfind("texp:", 0) == 0) {
    a.kind = ActKind::TExp;
    std::string num = text.substr(5);
    std::size_t pos = 0;
    double T = 0.0;
    try {
      T = std::stod(num, &pos);
    } catch (const std::exception&) {
      throw std::invalid_argument("activation '" + text_in + "': threshold T of texp:T is not a number");
    }
    if (pos != num.size() || !std::isfinite(T))
      throw std::invalid_argument("activation '" + text_in +
                                  "': threshold T of texp:T must be a finite number");
    if (T > 300.0)
      throw std::invalid_argument("activation '" + text_in + "': T > 300 overflows exp");
    a.T = T;
  } else {
    throw std::invalid_argument("unknown activation '" + text_in + "' (allowed: " +
                                activation_help() + ")");
  }
  return a;
}

std::vector<Activation> parse_activations(const std::string& text) {
  std::vector<Activation> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(parse_activation(item));
  if (out.empty() || (!text.empty() && text.back() == ','))
    throw std::invalid_argument("activation list '" + text + "' is empty or malformed");
  return out;
}

namespace {

// Composite Gauss-Legendre over [-40, 40] with unit panels plus the kinks as breakpoints; calls
// acc(t, hw) with the panel weight hw of every node (sum_j hw_j g(t_j) ~ int g).
template <class Acc>
void for_each_node(const Activation& f, Acc acc) {
  const double L = 40.0;
  std::vector<double> br;
  for (int k = -40; k <= 40; ++k) br.push_back(k);
  for (double k : f.kinks())
    if (k > -L && k < L) br.push_back(k);
  std::sort(br.begin(), br.end());
  br.erase(std::unique(br.begin(), br.end()), br.end());
  const Rule1D& gl = gauss_legendre(20);
  for (std::size_t i = 0; i + 1 < br.size(); ++i) {
    double a = br[i], b = br[i + 1];
    if (b - a < 1e-15) continue;
    double h = 0.5 * (b - a), mid = 0.5 * (a + b);
    for (int j = 0; j < gl.size(); ++j) acc(mid + h * gl.x[j], h * gl.w[j]);
  }
}

// log f(t) for exp-type f (f > 0), so that f^k phi is formed as one exponential.
double log_f(const Activation& f, double t) {
  return f.kind == ActKind::Exp ? t : std::min(t, f.T);
}

void finish(HermiteData& h) {
  h.sigma2 = std::max(0.0, h.nu - h.a1 * h.a1);
}

}  // namespace

HermiteData hermite_data(const Activation& f) {
  HermiteData h;
  const bool expo = (f.kind == ActKind::Exp || f.kind == ActKind::TExp);
  // f(t) phi(t) and f(t)^2 phi(t); in log space for exp-type f (docs/equations/rmt.md §3, "Quadrature").
  auto fphi = [&](double t, int k) {
    if (expo) return kInvSqrt2Pi * std::exp(k * log_f(f, t) - 0.5 * t * t);
    return std::pow(f.raw(t), k) * norm_pdf(t);
  };
  for_each_node(f, [&](double t, double hw) {
    double g = hw * fphi(t, 1);
    h.a0 += g;
    h.a1 += t * g;
    h.a2 += (t * t - 1.0) * g;
  });
  h.a2 /= kSqrt2;
  // nu = E[(f - a0)^2] = E f^2 - 2 a0 E f + a0^2 phi-mass, summed node by node.
  for_each_node(f, [&](double t, double hw) {
    if (expo) {
      h.nu += hw * (fphi(t, 2) - 2.0 * h.a0 * fphi(t, 1) + h.a0 * h.a0 * norm_pdf(t));
    } else {
      double ft = f.raw(t) - h.a0;
      h.nu += hw * ft * ft * norm_pdf(t);
    }
  });
  h.kappa_d = f.kappa_d();
  finish(h);
  return h;
}

HermiteData hermite_data_gh(const Activation& f, int n) {
  const Rule1D& gh = gauss_hermite(n);
  HermiteData h;
  for (int i = 0; i < gh.size(); ++i) {
    double t = gh.x[i], ft = f.raw(t);
    h.a0 += gh.w[i] * ft;
    h.a1 += gh.w[i] * t * ft;
    h.a2 += gh.w[i] * (t * t - 1.0) * ft;
  }
  h.a2 /= kSqrt2;
  for (int i = 0; i < gh.size(); ++i) {
    double ft = f.raw(gh.x[i]) - h.a0;
    h.nu += gh.w[i] * ft * ft;
  }
  h.kappa_d = f.kappa_d();
  finish(h);
  return h;
}

}  // namespace rmt
}  // namespace saddle
