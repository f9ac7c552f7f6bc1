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
// Adding a model to the command line is one line in tools/models.cpp:
//   register_model<my_namespace::MyModel>(app);
#pragma once
#include <CLI/CLI.hpp>

#include <functional>
#include <memory>
#include <type_traits>
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
  ModelHooks hooks;
};

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
  e.hooks.refinement = SADDLE_OVERRIDES(M, refine_on);
  e.hooks.stability = SADDLE_OVERRIDES(M, stability);
  e.hooks.free_energy = SADDLE_OVERRIDES(M, free_energy);
  e.hooks.distinct = SADDLE_OVERRIDES(M, distinct);
  register_model(app, e);
}
#undef SADDLE_OVERRIDES

// Every model served by the generic subcommand (tools/models.cpp).
void register_models(CLI::App& app);

// The cards of every registered model, in registration order (for the Python module, which
// makes one function per model).
std::vector<ModelCard> registered_model_cards();

}  // namespace saddle
