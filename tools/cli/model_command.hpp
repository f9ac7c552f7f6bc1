// The generic subcommand of an iterated model: `saddle <card.command> --<param> SWEEP ...` for any
// model class M that follows the concept of solver/model_card.hpp. It parses and checks every
// parameter against its domain, sweeps the cartesian product (one continuation chain per value of
// the other parameters, warm starts along card.continuation), runs each chain through the curve
// driver (solver/curve.hpp) and writes the tidy CSV with the runner (--out, --resume, --shard,
// --threads, --plot ...).
//
// The command offers every driver option the model's hooks support, with the flags of `slr erm`:
// always --stall-window, --stall-accept, --no-retry (the damped retry of a failed replicate);
// with refinement (M overrides CurveModel::refine_on) --target-se, --max-refine and, with a
// stability hook, --refine-unstable. Columns: the parameters, `init` when the model has several
// starts, the unknowns, the model's values, converged, iterations, residual, their `_se` when the
// model has replicates, then map_radius (spectral radius of dF/dx at the solution), repelling
// (map_radius > 1), stalled, path; with several starts preferred and coexist; with a stability
// hook `stability`; with refinement `level`.
//
// Adding a model to the command line is one line in tools/cli/models.cpp:
//   register_model<my_namespace::MyModel>(app);
#pragma once
#include <CLI/CLI.hpp>

#include <functional>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

#include "solver/curve.hpp"
#include "solver/model_card.hpp"

namespace saddle {

// Which of CurveModel's optional hooks a model overrides (found from its type).
struct ModelHooks {
  bool refinement = false;   // refine_on() (with prepare_level()): --target-se, --max-refine
  bool stability = false;    // stability(): column `stability`, --refine-unstable
  bool free_energy = false;  // free_energy(): `preferred` among several starts
  bool distinct = false;     // distinct(): `coexist` among several starts
};

// A model type erased to what the generic subcommand needs.
struct ModelEntry {
  ModelCard card;
  std::function<std::unique_ptr<CurveModel>(const ParamValues&)> make;
  std::function<std::vector<CurveStart>(const ParamValues&)> starts;
  std::function<void(const ParamValues&)> check;  // M::check, or nothing to check
  CurveOptions curve;                              // M::curve_options(), or the generic defaults
  ModelHooks hooks;
};

// The curve options of a model that states none: the driver's, with the damped retry on.
CurveOptions generic_curve_defaults();

// M::check and M::curve_options when M declares them (found from its type).
template <class M, class = void>
struct ModelCheck {
  static std::function<void(const ParamValues&)> get() { return [](const ParamValues&) {}; }
};
template <class M>
struct ModelCheck<M, decltype(void(M::check(std::declval<const ParamValues&>())))> {
  static std::function<void(const ParamValues&)> get() { return [](const ParamValues& p) { M::check(p); }; }
};
template <class M, class = void>
struct ModelCurveOptions {
  static CurveOptions get() { return generic_curve_defaults(); }
};
template <class M>
struct ModelCurveOptions<M, decltype(void(M::curve_options()))> {
  static CurveOptions get() { return M::curve_options(); }
};

// The subcommand of the model; a card.command of two words ("slr bayes") goes under the first
// word's group, which must exist in app.
void register_model(CLI::App& app, const ModelEntry& entry);

// True when M declares its own F (a hook inherited from CurveModel has CurveModel's type).
#define SADDLE_OVERRIDES(M, F) (!std::is_same<decltype(&M::F), decltype(&CurveModel::F)>::value)

template <class M>
void register_model(CLI::App& app) {
  static_assert(std::is_base_of<CurveModel, M>::value, "a model derives from CurveModel");
  ModelEntry e;
  e.card = M::card();
  e.make = [](const ParamValues& p) { return std::unique_ptr<CurveModel>(new M(p)); };
  e.starts = [](const ParamValues& p) { return M::starts(p); };
  e.check = ModelCheck<M>::get();
  e.curve = ModelCurveOptions<M>::get();
  e.hooks.refinement = SADDLE_OVERRIDES(M, refine_on);
  e.hooks.stability = SADDLE_OVERRIDES(M, stability);
  e.hooks.free_energy = SADDLE_OVERRIDES(M, free_energy);
  e.hooks.distinct = SADDLE_OVERRIDES(M, distinct);
  register_model(app, e);
}
#undef SADDLE_OVERRIDES

// Every model served by the generic subcommand (tools/cli/models.cpp).
void register_models(CLI::App& app);

// The cards of every registered model, in registration order (for the Python module, which
// makes one function per model).
std::vector<ModelCard> registered_model_cards();

}  // namespace saddle
