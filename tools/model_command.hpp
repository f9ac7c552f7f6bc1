// The generic subcommand of an iterated model: `saddle <card.command> --<param> SWEEP ...` for any
// model class M that follows the concept of solver/model_card.hpp. It parses and checks every
// parameter against its domain, sweeps the cartesian product (one continuation chain per value of
// the other parameters, warm starts along card.continuation), runs each chain through the curve
// driver (solver/curve.hpp) and writes the tidy CSV with the runner (--out, --resume, --shard,
// --threads, --plot ...): columns = the parameters, `init` when the model has several starts, the
// unknowns, the model's values, their `_se` when the model has replicates, then
// converged, iterations, residual.
//
// Adding a model to the command line is one line in tools/models.cpp:
//   register_model<my_namespace::MyModel>(app);
#pragma once
#include <CLI/CLI.hpp>

#include <functional>
#include <memory>
#include <vector>

#include "solver/curve.hpp"
#include "solver/model_card.hpp"

namespace saddle {

// A model type erased to what the generic subcommand needs.
struct ModelEntry {
  ModelCard card;
  std::function<std::unique_ptr<CurveModel>(const ParamValues&)> make;
  std::function<std::vector<CurveStart>(const ParamValues&)> starts;
};

void register_model(CLI::App& app, const ModelEntry& entry);

template <class M>
void register_model(CLI::App& app) {
  ModelEntry e;
  e.card = M::card();
  e.make = [](const ParamValues& p) { return std::unique_ptr<CurveModel>(new M(p)); };
  e.starts = [](const ParamValues& p) { return M::starts(p); };
  register_model(app, e);
}

// Every model served by the generic subcommand (tools/models.cpp).
void register_models(CLI::App& app);

}  // namespace saddle
