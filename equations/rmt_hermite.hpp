// RMT activations and their Hermite data: docs/equations/rmt.md §2 (kappa_d) and §3 (R-H).
// An Activation is one of tanh, erf, relu, sigmoid, cos, exp, linear or texp:T = exp(min(t, T)).
// hermite_data() returns a_0 (the constant removed by centring), a_1, a_2, nu = E[(f - a_0)^2],
// sigma^2 = nu - a_1^2 and kappa_d = lim_{t->+inf} f(t)/t (inf for exp).
#pragma once
#include <string>
#include <vector>

namespace saddle {
namespace rmt {

enum class ActKind { Tanh, Erf, Relu, Sigmoid, Cos, Exp, Linear, TExp };

struct Activation {
  ActKind kind = ActKind::Tanh;
  double T = 0.0;    // threshold of texp:T
  std::string name;  // canonical text, e.g. "tanh", "texp:2"
  // The raw (uncentred) f(t).
  double raw(double t) const;
  // Points where f is not smooth (ReLU at 0, texp at T); empty for smooth f.
  std::vector<double> kinks() const;
  // kappa_d = lim f(t)/t as t -> +inf (docs/equations/rmt.md §2); +inf for exp.
  double kappa_d() const;
};

// Parses one activation name ("tanh", "texp:1.5", ...). Throws std::invalid_argument with a
// clear message for an unknown name or a malformed/non-finite threshold.
Activation parse_activation(const std::string& text);
// Comma-separated list of activations (texp:T contains no comma, so this is unambiguous).
std::vector<Activation> parse_activations(const std::string& text);
// The built-in names, for help texts.
std::string activation_help();

// Hermite data of docs/equations/rmt.md §3 (probabilists' convention, f centred: a_0 is removed).
struct HermiteData {
  double a0 = 0.0;       // E f(xi), removed by centring
  double a1 = 0.0;       // E[xi f(xi)]
  double a2 = 0.0;       // E[(xi^2 - 1) f(xi)] / sqrt(2)
  double nu = 0.0;       // E[(f(xi) - a0)^2]  (RMT nu, not the SLR signal strength)
  double sigma2 = 0.0;   // nu - a1^2 (clipped at 0 against rounding)
  double kappa_d = 0.0;  // lim f(t)/t, t -> +inf (inf for exp)
};

// (R-H) by piecewise Gauss-Legendre on [-40, 40] split at the kinks of f (composite, 20 nodes per
// unit-length panel): exact to rounding for smooth and kinked f alike, and free of overflow for
// exp-type f (the integrand f(t) phi(t) is evaluated as exp(t - t^2/2) / sqrt(2 pi) for exp).
HermiteData hermite_data(const Activation& f);
// The same with an n-node probabilists' Gauss-Hermite rule (for smooth f; used as a cross-check).
HermiteData hermite_data_gh(const Activation& f, int n);

}  // namespace rmt
}  // namespace saddle
