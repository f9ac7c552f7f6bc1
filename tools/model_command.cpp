// The generic model subcommand (see model_command.hpp).
#include "tools/model_command.hpp"

#include <algorithm>
#include <string>

#include "tools/cli_common.hpp"
#include "tools/runner.hpp"

namespace saddle {
namespace {

struct ModelCli {
  std::vector<std::string> values;  // sweep text per parameter, in card order
  SolverOptions solver;
  std::string method;
  RunOptions run;
};

SweepRules rules_of(const ParamDomain& d) {
  SweepRules r;
  r.min = d.min;
  r.min_inclusive = d.min_inclusive;
  r.max = d.max;
  r.integer = d.integer;
  return r;
}

void run_model(const ModelEntry& e, const ModelCli& o) {
  const ModelCard& card = e.card;
  SolverOptions opt = o.solver;
  finish_solver_options(opt, o.method);
  // Parameters: the continuation one, and the others (their cartesian product = the chains).
  std::vector<double> cont;
  std::vector<std::vector<double>> other_axes;
  std::vector<std::string> other_names;
  for (std::size_t i = 0; i < card.params.size(); ++i) {
    const ModelParam& p = card.params[i];
    const ParamDomain& d = p.domain;
    std::vector<double> v = parse_sweep(o.values[i], p.name, rules_of(d));
    for (double x : v)
      if (!d.max_inclusive && x >= d.max)
        throw InputError("--" + p.name + ": must be < " + fmt(d.max) + " (got " + fmt(x) + ")");
    if (p.name == card.continuation)
      cont = v;
    else {
      other_axes.push_back(v);
      other_names.push_back(p.name);
    }
  }
  double points = static_cast<double>(cont.size());
  for (const auto& a : other_axes) points *= static_cast<double>(a.size());
  check_grid_points(points);
  const auto outer = cartesian(other_axes);
  auto values_of = [&](std::size_t c) {
    ParamValues pv;
    for (std::size_t k = 0; k < other_names.size(); ++k) pv.set(other_names[k], outer[c][k]);
    return pv;
  };
  // Probe the model once (first chain, first continuation value) for the names of its columns
  // and its number of starts and replicates.
  const ParamValues pv0 = values_of(0);
  const std::unique_ptr<CurveModel> probe = e.make(pv0);
  const std::unique_ptr<FixedPointSystem> sys0 = probe->system(cont.front(), 0, 0);
  const std::vector<std::string> xnames = sys0->names();
  const std::vector<std::string> vnames = sys0->observable_names();
  const bool several_starts = e.starts(pv0).size() > 1;
  const bool with_se = probe->replicates() > 1;

  GridJob job;
  for (const ModelParam& p : card.params) job.columns.push_back(p.name);
  if (several_starts) job.columns.push_back("init");
  for (const auto& n : xnames) job.columns.push_back(n);
  for (const auto& n : vnames) job.columns.push_back(n);
  job.columns.insert(job.columns.end(), {"converged", "iterations", "residual"});
  if (with_se) {
    for (const auto& n : xnames) job.columns.push_back(n + "_se");
    for (const auto& n : vnames) job.columns.push_back(n + "_se");
  }
  job.settings = {{"model", card.summary + " (" + card.equations + "); " + card.observables_note},
                  {"solver", describe(opt)},
                  {"continuation", "warm start along " + card.continuation +
                                       " in the order given, through the curve driver"}};
  job.plot.y = {card.plot_y};
  std::string cont_key;
  for (double a : cont) cont_key += fmt(a) + "|";
  for (std::size_t c = 0; c < outer.size(); ++c) {
    std::string key;
    for (std::size_t k = 0; k < other_names.size(); ++k)
      key += other_names[k] + "=" + fmt(outer[c][k]) + ";";
    job.chains.push_back({key + card.continuation + "=" + cont_key, cont.size()});
  }
  job.run_chain = [=, &e](std::size_t c) {
    const ParamValues pv = values_of(c);
    const std::unique_ptr<CurveModel> model = e.make(pv);
    const std::vector<CurveStart> starts = e.starts(pv);
    CurveOptions copt;
    copt.solver = opt;
    const std::vector<CurvePoint> pts = run_curve(*model, cont, starts, copt);
    std::vector<std::vector<std::string>> rows;
    for (const CurvePoint& p : pts) {
      std::vector<std::string> row;
      std::size_t k = 0;
      for (const ModelParam& mp : card.params)
        row.push_back(mp.name == card.continuation ? fmt(p.param) : fmt(outer[c][k++]));
      if (several_starts) row.push_back(starts[p.start].label);
      for (const Estimate& x : p.x) row.push_back(fmt(x.mean));
      for (const Estimate& v : p.values) row.push_back(fmt(v.mean));
      row.push_back(p.converged ? "1" : "0");
      row.push_back(std::to_string(p.iterations));
      row.push_back(fmt(p.residual));
      if (with_se) {
        for (const Estimate& x : p.x) row.push_back(fmt(x.se));
        for (const Estimate& v : p.values) row.push_back(fmt(v.se));
      }
      rows.push_back(std::move(row));
    }
    return rows;
  };
  run_grid(job, o.run);
}

}  // namespace

void register_model(CLI::App& app, const ModelEntry& entry) {
  auto o = std::make_shared<ModelCli>();
  auto e = std::make_shared<ModelEntry>(entry);
  const ModelCard& card = e->card;
  o->values.resize(card.params.size());
  CLI::App* sub = app.add_subcommand(card.command, card.summary + " (" + card.equations + ")");
  for (std::size_t i = 0; i < card.params.size(); ++i) {
    const ModelParam& p = card.params[i];
    o->values[i] = p.default_text;
    std::string help = p.help;
    if (p.name == card.continuation) help += " [continuation: warm starts along this sweep]";
    sub->add_option("--" + p.name, o->values[i], help + " (value, list a,b, start:stop:count[:log])")
        ->capture_default_str();
  }
  add_solver_options(sub, o->solver, o->method);
  add_run_options(sub, o->run);
  sub->callback([o, e] { run_model(*e, *o); });
}

}  // namespace saddle
