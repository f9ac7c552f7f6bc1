// What a model tells the outside world about itself, so that one generic driver (the command line,
// the Python module) can offer it without knowing it: its name, its parameters with their domains
// and defaults, the parameter along which continuation runs, and where its equations are written.
// Pure data: nothing here knows a command-line library, a file format or any physics.
//
// A model that the generic subcommand can serve (tools/model_command.hpp) is a class M with
//   static ModelCard card();                                    // this description
//   explicit M(const ParamValues& p);                           // every parameter but the swept
//                                                               // continuation one is fixed
//   static std::vector<CurveStart> starts(const ParamValues& p); // initial states (>= 1)
// that derives from CurveModel (solver/curve.hpp). The generic subcommand finds which of
// CurveModel's optional hooks M overrides (refine_on, stability, free_energy, distinct) and offers
// the matching options and columns. See docs/adding_a_model.md.
#pragma once
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace saddle {

// The set of values a parameter may take: [min, max] (or open at either end), optionally integers
// only. Every value outside it is refused before any computation.
struct ParamDomain {
  double min = -std::numeric_limits<double>::infinity();
  bool min_inclusive = true;
  double max = std::numeric_limits<double>::infinity();
  bool max_inclusive = true;
  bool integer = false;
};
inline ParamDomain positive_domain(double max = 1e12) {
  ParamDomain d;
  d.min = 0.0;
  d.min_inclusive = false;
  d.max = max;
  return d;
}
inline ParamDomain nonneg_domain(double max = 1e12) {
  ParamDomain d;
  d.min = 0.0;
  d.max = max;
  return d;
}
inline ParamDomain interval_domain(double lo, double hi) {
  ParamDomain d;
  d.min = lo;
  d.max = hi;
  return d;
}

struct ModelParam {
  std::string name;          // option --name and CSV column `name`
  std::string default_text;  // default value or sweep, in the sweep syntax (e.g. "0.5:4:8")
  ParamDomain domain;
  std::string help;          // one line: meaning, symbol, equation label
};

struct ModelCard {
  std::string command;       // subcommand, e.g. "ridge-classifier"
  std::string summary;       // one line for --help
  std::string equations;     // where the equations are written, e.g. "docs/equations/ridge.md §C"
  std::string observables_note;  // one line on the reported values (CSV '# model:' header)
  std::vector<ModelParam> params;  // CSV column order
  std::string continuation;  // the parameter swept with warm starts (one of params)
  std::string plot_y;        // the value a default plot shows (e.g. "test_error")
  // Default of --target-se for a model with refinement (CurveModel::refine_on); 0 = off.
  double target_se = 0.0;
};

// Values of a model's parameters by name (the continuation parameter excluded).
class ParamValues {
 public:
  void set(const std::string& name, double v) {
    for (auto& p : values_)
      if (p.first == name) {
        p.second = v;
        return;
      }
    values_.emplace_back(name, v);
  }
  double operator()(const std::string& name) const {
    for (const auto& p : values_)
      if (p.first == name) return p.second;
    throw std::logic_error("ParamValues: no parameter '" + name + "'");
  }
  const std::vector<std::pair<std::string, double>>& items() const { return values_; }

 private:
  std::vector<std::pair<std::string, double>> values_;
};

}  // namespace saddle
