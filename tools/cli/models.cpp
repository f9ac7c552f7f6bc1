// The models served by the generic subcommand (tools/cli/model_command.hpp): one line each.
#include "equations/ridge.hpp"
#include "equations/slr_bayes.hpp"
#include "equations/slr_replica_curve.hpp"
#include "equations/slr_rsb.hpp"
#include "equations/ridge_classifier.hpp"
#include "tools/cli/model_command.hpp"

namespace saddle {

void register_models(CLI::App& app) {
  register_model<ridge::RidgeModel>(app);        // saddle ridge
  register_model<ridge_classifier::Model>(app);  // saddle ridge-classifier
  register_model<slr::ReplicaModel>(app);        // saddle slr erm
  register_model<slr::RsbModel>(app);            // saddle slr erm-1rsb
  register_model<slr::BayesModel>(app);          // saddle slr bayes
}

}  // namespace saddle
