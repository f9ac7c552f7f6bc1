// What a model tells the outside world about itself, so that one generic driver (the command line,
// the Python module) can offer it without knowing it: its name, its parameters with their domains
// and defaults, the parameter along which continuation runs, and where its equations are written.
// Pure data: nothing here knows a command-line library, a file format or any physics.
//
// A model that the generic subcommand can serve (tools/cli/model_command.hpp) is a class M with
//   static ModelCard card();                                    // this description
//   explicit M(const ParamValues& p);                           // every parameter but the swept
//                                                               // continuation one is fixed
//   static std::vector<CurveStart> starts(const ParamValues& p); // initial states (>= 1)
// that derives from CurveModel (solver/curve.hpp), and optionally
//   static void check(const ParamValues& p);   // throws std::invalid_argument on values the
//                                              // card's domains cannot say (run on every chain
//                                              // before anything is computed)
//   static CurveOptions curve_options();       // the model's solver and driver defaults
// The generic subcommand finds which of CurveModel's optional hooks M overrides (refine_on,
// stability, free_energy, distinct) and offers the matching options and columns. See
// docs/adding_a_model.md.
#pragma once
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace saddle {

// The set of values a parameter may take: [min, max] (or open at either end), optionally integers
// only, optionally +inf as well (nu = inf for max-SLR). Every value outside it is refused before
// any computation. The one domain type of the house: the model cards' and the sweep parser's
// (tools/cli/cli_common.hpp parse_sweep).
struct ParamDomain {
  double min = -std::numeric_limits<double>::infinity();
  bool min_inclusive = true;
  double max = std::numeric_limits<double>::infinity();
  bool max_inclusive = true;
  bool integer = false;
  bool allow_inf = false;  // "inf" accepted (beyond max)
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

// A parameter: a number (sweepable: value, list, range) or a choice among names (sweepable as a
// comma list). Its CSV column is `name`; its option is --name with '_' written '-'
// (inner_nodes: --inner-nodes).
struct ModelParam {
  std::string name;
  std::string default_text;  // default value or sweep, in the sweep syntax (e.g. "0.5:4:8")
  ParamDomain domain;        // numbers only
  std::string help;          // one line: meaning, symbol, equation label
  // A choice parameter: the names it may take (e.g. {"spiked", "max"}); its value in ParamValues
  // is the index of the name (and the name, as text).
  std::vector<std::string> choices = {};
};

// A setting given as free text, one value per run, read and checked by the model (check()): a
// number beyond what a double holds (a 64-bit seed), or a list that stands in for a parameter
// when given (--L-dist 1,2,3 for --L: the option excludes the parameter's, and the parameter's
// column shows the text with ',' written '|'). A setting that stands in for none is a column of
// its own, after the parameters.
struct ModelSetting {
  std::string name;          // option --name ('_' written '-'); ParamValues::text(name)
  std::string default_text;  // "" = not given
  std::string help;
  std::string replaces = {};  // the parameter it stands in for
  // false: no column of its own; the model reports what it used per point (CurveModel::notes),
  // e.g. the QMC points behind a refined point where the setting gives the base points.
  bool column = true;
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
  std::vector<ModelSetting> settings = {};
  std::vector<std::string> plot_references = {};  // values a default plot draws as references
  // The column that says another start converged to a distinct solution (CurveModel::distinct).
  std::string coexist_column = "coexist";
  // The column of the model's stability check (CurveModel::stability), e.g. "rs_stability".
  std::string stability_column = "stability";
  // One line on the model's own columns (its notes, CurveModel::note_names), for the CSV header.
  std::string columns_note = "";
  // The starts run when --init is not given: a comma list of start labels; "" = every start.
  std::string default_init = "";
  // Columns map_radius and repelling: the spectral radius of dF/dx at every point (one Jacobian
  // per replicate, or 2 dim map evaluations where the system has none). false where that costs
  // too much next to the solve (the SLR replica models: a Newton pass each, 18 nested 1RSB maps).
  bool map_radius = true;
  // true: the continuation values are solved and written in ascending order, whatever the order
  // given (a start walks them forward or backward, CurveStart::direction).
  bool sorted_continuation = false;
};

// The option of a parameter or setting: "--" + name with '_' written '-'.
inline std::string option_name(const std::string& name) {
  std::string o = "--" + name;
  for (char& c : o)
    if (c == '_') c = '-';
  return o;
}

// Values of a model's parameters by name (the continuation parameter excluded): a number, a
// choice (its index, and its name as text) or a setting (its text; "" when not given).
class ParamValues {
 public:
  void set(const std::string& name, double v) { entry(name).number = v; }
  void set_text(const std::string& name, const std::string& text) { entry(name).text = text; }
  double operator()(const std::string& name) const { return find(name).number; }
  const std::string& text(const std::string& name) const { return find(name).text; }

 private:
  struct Entry {
    std::string name;
    double number = 0.0;
    std::string text;
  };
  Entry& entry(const std::string& name) {
    for (auto& e : values_)
      if (e.name == name) return e;
    values_.push_back({name, 0.0, ""});
    return values_.back();
  }
  const Entry& find(const std::string& name) const {
    for (const auto& e : values_)
      if (e.name == name) return e;
    throw std::logic_error("ParamValues: no parameter '" + name + "'");
  }
  std::vector<Entry> values_;
};

}  // namespace saddle
