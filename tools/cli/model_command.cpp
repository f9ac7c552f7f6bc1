// The generic model subcommand (see model_command.hpp).
#include "tools/cli/model_command.hpp"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <string>

#include "tools/cli/cli_common.hpp"
#include "tools/runner/runner.hpp"

namespace saddle {
namespace {

struct ModelCli {
  std::vector<std::string> values;    // sweep text per parameter, in card order
  std::vector<std::string> settings;  // text per setting, in card order ("" = not given)
  std::string init;                   // the starts to run (models with several)
  SolverOptions solver;
  std::string method;
  CurveCli curve;
  double target_se = 0.0;
  int max_refine = 2;
  bool refine_unstable = false;
  RunOptions run;
};

// The domain of a parameter as --help states it: "in (0, 1e6]", "integers in [1, 8]", "<= 3".
std::string domain_text(const ParamDomain& d) {
  const bool lo = std::isfinite(d.min), hi = std::isfinite(d.max);
  const std::string what = d.integer ? "integers " : "";
  const std::string inf = d.allow_inf ? " or inf" : "";
  if (lo && hi)
    return what + "in " + (d.min_inclusive ? "[" : "(") + fmt(d.min) + ", " + fmt(d.max) +
           (d.max_inclusive ? "]" : ")") + inf;
  if (lo) return what + (d.min_inclusive ? ">= " : "> ") + fmt(d.min) + inf;
  if (hi) return what + (d.max_inclusive ? "<= " : "< ") + fmt(d.max) + inf;
  return d.integer ? "integers" : "";
}

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string out;
  for (const auto& x : v) out += (out.empty() ? "" : sep) + x;
  return out;
}

// The labels of starts (for --init and the column `init`).
std::vector<std::string> labels_of(const std::vector<CurveStart>& starts) {
  std::vector<std::string> out;
  for (const CurveStart& s : starts) out.push_back(s.label);
  return out;
}

void run_model(const ModelEntry& e, const ModelCli& o) {
  const ModelCard& card = e.card;
  const ModelHooks& hooks = e.hooks;
  SolverOptions opt = o.solver;
  finish_solver_options(opt, o.method);
  CurveOptions copt = e.curve;
  copt.solver = opt;
  finish_curve_options(o.curve, copt);
  copt.target_se = o.target_se;
  copt.max_refine = o.max_refine;
  check_options(copt);
  // Settings given stand in for their parameter's column.
  std::vector<std::string> shown(card.params.size());
  for (std::size_t s = 0; s < card.settings.size(); ++s)
    for (std::size_t i = 0; i < card.params.size(); ++i)
      if (!o.settings[s].empty() && card.settings[s].replaces == card.params[i].name) {
        shown[i] = o.settings[s];
        std::replace(shown[i].begin(), shown[i].end(), ',', '|');
      }
  // Parameters: the continuation one, and the others (their cartesian product = the chains).
  // A choice's value is its index; `text_of` gives the column's text.
  std::vector<double> cont;
  std::vector<std::vector<double>> other_axes;
  std::vector<std::size_t> other_index;  // card index of each other axis
  std::vector<std::string> swept;
  for (std::size_t i = 0; i < card.params.size(); ++i) {
    const ModelParam& p = card.params[i];
    std::vector<double> v;
    if (!p.choices.empty()) {
      for (const std::string& n : parse_names(o.values[i], option_name(p.name).substr(2), p.choices))
        v.push_back(static_cast<double>(std::find(p.choices.begin(), p.choices.end(), n) - p.choices.begin()));
    } else {
      v = parse_sweep(o.values[i], option_name(p.name).substr(2), p.domain);
    }
    if (v.size() > 1) swept.push_back(p.name);
    if (p.name == card.continuation) {
      cont = v;
      if (card.sorted_continuation) std::sort(cont.begin(), cont.end());
    } else {
      other_axes.push_back(v);
      other_index.push_back(i);
    }
  }
  auto text_of = [card, shown](std::size_t i, double v) {
    const ModelParam& p = card.params[i];
    if (!shown[i].empty()) return shown[i];
    return p.choices.empty() ? fmt(v) : p.choices[static_cast<std::size_t>(v)];
  };
  double points = static_cast<double>(cont.size());
  for (const auto& a : other_axes) points *= static_cast<double>(a.size());
  check_grid_points(points);
  const auto outer = cartesian(other_axes);
  auto values_of = [&](std::size_t c) {
    ParamValues pv;
    for (std::size_t k = 0; k < other_index.size(); ++k) {
      const ModelParam& p = card.params[other_index[k]];
      pv.set(p.name, outer[c][k]);
      if (!p.choices.empty()) pv.set_text(p.name, text_of(other_index[k], outer[c][k]));
    }
    for (std::size_t s = 0; s < card.settings.size(); ++s) pv.set_text(card.settings[s].name, o.settings[s]);
    return pv;
  };
  // Every chain's values checked by the model before anything is computed (bad input: exit 2).
  for (std::size_t c = 0; c < outer.size(); ++c) try {
      e.check(values_of(c));
    } catch (const std::invalid_argument& x) {
      throw InputError(x.what());
    }
  // Probe the model once (first chain, first continuation value) for the names of its columns
  // and its starts and replicates; as the driver does, prepare_level(0) comes before any
  // system() (solver/curve.hpp).
  const ParamValues pv0 = values_of(0);
  const std::unique_ptr<CurveModel> probe = e.make(pv0);
  probe->prepare_level(0);
  const std::unique_ptr<FixedPointSystem> sys0 = probe->system(cont.front(), 0, 0);
  const std::vector<std::string> xnames = sys0->names();
  const std::vector<std::string> vnames = sys0->observable_names();
  const std::vector<std::string> labels = labels_of(e.starts(pv0));
  const std::vector<std::string> notes = probe->note_names();
  const bool several_starts = labels.size() > 1;
  // The starts run (--init, default all), as indices into the model's starts.
  std::vector<std::size_t> chosen;
  for (const std::string& n : parse_names(!o.init.empty() ? o.init : !card.default_init.empty() ? card.default_init : join(labels, ","),
                                           "init", labels))
    chosen.push_back(static_cast<std::size_t>(std::find(labels.begin(), labels.end(), n) - labels.begin()));
  const std::size_t n_starts = chosen.size();
  const bool with_se = probe->replicates() > 1;
  const bool refinement = hooks.refinement && probe->refine_on() >= 0;

  GridJob job;
  for (const ModelParam& p : card.params) job.columns.push_back(p.name);
  std::vector<std::string> setting_cells;  // the settings that are columns of their own
  for (std::size_t s = 0; s < card.settings.size(); ++s)
    if (card.settings[s].replaces.empty() && card.settings[s].column) {
      job.columns.push_back(card.settings[s].name);
      job.text_columns.push_back(card.settings[s].name);
      setting_cells.push_back(o.settings[s]);
    }
  const std::size_t n_inputs = job.columns.size() + (several_starts ? 1 : 0);
  if (several_starts) job.columns.push_back("init");
  for (const auto& n : xnames) job.columns.push_back(n);
  for (const auto& n : vnames) job.columns.push_back(n);
  job.columns.insert(job.columns.end(), {"converged", "iterations", "residual"});
  if (with_se) {
    for (const auto& n : xnames) job.columns.push_back(n + "_se");
    for (const auto& n : vnames) job.columns.push_back(n + "_se");
  }
  if (card.map_radius) job.columns.insert(job.columns.end(), {"map_radius", "repelling"});
  job.columns.insert(job.columns.end(), {"stalled", "path"});
  for (const auto& c : curve_status_columns()) job.columns.push_back(c);
  job.text_columns.insert(job.text_columns.end(), {"init", "path", card.stability_column, "reason"});
  job.text_columns.insert(job.text_columns.end(), notes.begin(), notes.end());
  for (std::size_t i = 0; i < card.params.size(); ++i)
    if (!card.params[i].choices.empty() || !shown[i].empty()) job.text_columns.push_back(card.params[i].name);
  if (several_starts) job.columns.insert(job.columns.end(), {"preferred", card.coexist_column});
  if (hooks.stability) job.columns.push_back(card.stability_column);
  job.columns.insert(job.columns.end(), notes.begin(), notes.end());
  if (refinement) job.columns.push_back("level");
  job.sweep = swept;
  if (n_starts > 1 && std::find(swept.begin(), swept.end(), "init") == swept.end())
    job.sweep.push_back("init");

  copt.target_se = refinement ? o.target_se : 0.0;
  copt.max_refine = o.max_refine;
  copt.refine_unstable = o.refine_unstable;
  copt.map_radius = card.map_radius;
  std::string curve = predictor_text(copt) + "; noise_factor=" + fmt(copt.noise_factor) +
                      (!copt.retry ? "" : "; failed replicates retried damped mix=" + fmt(copt.retry_mix) +
                                              " max_iter=" + std::to_string(retry_iterations(copt)));
  if (refinement)
    curve += "; refinement: target_se=" + fmt(copt.target_se) + " max_refine=" + std::to_string(o.max_refine) +
             (hooks.stability ? (o.refine_unstable ? " (all points)" : " (points not unstable)") : "") +
             " on " + (probe->refine_on() < static_cast<int>(xnames.size())
                           ? xnames[probe->refine_on()]
                           : vnames[probe->refine_on() - xnames.size()]) + "_se";
  std::string columns = convergence_rule_text(copt) + "; ";
  if (card.map_radius)
    columns +=
      "map_radius = spectral radius of the map's Jacobian dF/dx at the solution (finite differences "
      "where the model gives none): below 1 the fixed point attracts the iteration, above 1 "
      "(repelling = 1) it is a saddle point that the iteration reached only by starting on it, e.g. "
      "a symmetric branch past a bifurcation: compare starts and free energies (docs/adding_a_model.md "
      "\"Branches\"); ";
  columns += "stalled = replicates ended in a limit cycle; path = the iteration each replicate's result came from";
  if (several_starts)
    columns += std::string("; preferred = ") +
               (hooks.free_energy ? "lowest free energy" : "first") + " among the converged starts; " +
               card.coexist_column + " = " +
               (hooks.distinct ? "another start converged to a distinct solution" : "0 (the model does not compare)");
  if (!card.columns_note.empty())
    columns += "; " + card.columns_note;  // the model's words on its stability and notes
  else if (hooks.stability)
    columns += "; " + card.stability_column + " = the model's stability check (stable, marginal, unstable, unknown)";
  if (refinement) columns += "; level = refinement level behind the point";
  std::vector<CurveStart> starts0 = e.starts(pv0);
  std::string start_text;
  for (std::size_t k : chosen) {
    const CurveStart& st = starts0[k];
    start_text += (start_text.empty() ? "" : ", ") + st.label + " x0 = (";
    for (Eigen::Index j = 0; j < st.x0.size(); ++j) start_text += (j ? ", " : "") + fmt(st.x0(j));
    start_text += st.warm ? ") warm" : ") fresh at every point";
  }
  job.settings = {{"model", card.summary + " (" + card.equations + "); " + card.observables_note},
                  {"solver", describe(opt)},
                  {"curve", curve},
                  {"continuation", "warm start along " + card.continuation +
                                       " in the order given, through the curve driver"},
                  {"starts", start_text},
                  {"columns", columns}};
  job.plot.y = {card.plot_y};
  job.plot.references = card.plot_references;
  if (hooks.stability) {
    job.plot.flag_column = card.stability_column;
    job.plot.flag_value = "unstable";
    job.plot.flag_label = "unstable";
  } else if (card.map_radius) {
    job.plot.flag_column = "repelling";
    job.plot.flag_value = "1";
    job.plot.flag_label = "repelling fixed point";
  }
  std::string cont_key;
  for (double a : cont) cont_key += fmt(a) + "|";
  for (std::size_t c = 0; c < outer.size(); ++c) {
    std::string key;
    for (std::size_t k = 0; k < other_index.size(); ++k)
      key += card.params[other_index[k]].name + "=" + text_of(other_index[k], outer[c][k]) + ";";
    if (n_starts < labels.size()) key += "init=" + join([&] {
                                 std::vector<std::string> l;
                                 for (std::size_t k : chosen) l.push_back(labels[k]);
                                 return l;
                               }(), ",") + ";";
    job.chains.push_back({key + card.continuation + "=" + cont_key, cont.size() * n_starts});
  }
  // The parameter columns of row k of chain c: start k / n, continuation value k % n (run_curve's
  // order).
  auto param_cells = [=](std::size_t c, double param) {
    std::vector<std::string> key;
    std::size_t j = 0;
    for (std::size_t i = 0; i < card.params.size(); ++i)
      key.push_back(text_of(i, card.params[i].name == card.continuation ? param : outer[c][j++]));
    key.insert(key.end(), setting_cells.begin(), setting_cells.end());
    return key;
  };
  job.row_key = [=](std::size_t c, std::size_t k) { return param_cells(c, cont[k % cont.size()]); };
  job.run_chain = [=, &e](std::size_t c) {
    const ParamValues pv = values_of(c);
    const std::unique_ptr<CurveModel> model = e.make(pv);
    const std::vector<CurveStart> all = e.starts(pv);
    if (all.size() != labels.size())
      throw std::logic_error(card.command + ": the number of starts depends on the parameters");
    std::vector<CurveStart> starts;
    for (std::size_t k : chosen) starts.push_back(all[k]);
    const std::vector<CurvePoint> pts = run_curve(*model, cont, starts, copt);
    std::vector<std::vector<std::string>> rows;
    for (const CurvePoint& p : pts) {
      std::vector<std::string> row = param_cells(c, p.param);
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
      // Where a replicate was not accepted the radius was not computed: the row says so by
      // converged = 0, and the radius column is empty rather than NaN.
      if (card.map_radius) {
        row.push_back(std::isfinite(p.map_radius.mean) ? fmt(p.map_radius.mean) : "");
        row.push_back(p.repelling() ? "1" : "0");
      }
      row.push_back(std::to_string(p.n_stalled));
      row.push_back(path_text(p));
      push_curve_status(row, p);
      if (several_starts) {
        row.push_back(p.preferred ? "1" : "0");
        row.push_back(p.coexist ? "1" : "0");
      }
      if (hooks.stability) row.push_back(to_string(p.stability));
      const std::vector<std::string> cells = model->notes(p);
      if (cells.size() != notes.size())
        throw std::logic_error(card.command + ": notes() gives " + std::to_string(cells.size()) + " cells for " +
                               std::to_string(notes.size()) + " note columns");
      row.insert(row.end(), cells.begin(), cells.end());
      if (refinement) row.push_back(std::to_string(p.level));
      finish_row(row, job.columns, n_inputs, p.converged,
                 "of " + card.command + " at " + card.continuation + " " + fmt(p.param));
      rows.push_back(std::move(row));
    }
    return rows;
  };
  run_grid(job, o.run);
}

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
std::vector<ModelCard>& registry() {
  static std::vector<ModelCard> cards;
  return cards;
}

}  // namespace

CurveOptions generic_curve_defaults() {
  CurveOptions d;
  d.retry = true;
  return d;
}

void register_model(CLI::App& app, const ModelEntry& entry) {
  {
    std::lock_guard<std::mutex> lock(registry_mutex());
    auto& cards = registry();
    if (std::none_of(cards.begin(), cards.end(),
                     [&](const ModelCard& c) { return c.command == entry.card.command; }))
      cards.push_back(entry.card);
  }
  auto o = std::make_shared<ModelCli>();
  auto e = std::make_shared<ModelEntry>(entry);
  const ModelCard& card = e->card;
  o->curve = CurveCli(e->curve);
  o->solver = e->curve.solver;
  o->values.resize(card.params.size());
  o->settings.resize(card.settings.size());
  // "slr bayes": the subcommand `bayes` of the group `slr`.
  CLI::App* parent = &app;
  std::string name = card.command;
  const std::size_t space = name.find(' ');
  if (space != std::string::npos) {
    const std::string group = name.substr(0, space);
    parent = nullptr;
    for (CLI::App* g : app.get_subcommands([](CLI::App*) { return true; }))
      if (g->get_name() == group) parent = g;
    if (!parent) parent = app.add_subcommand(group, "");  // a registry built without the program's groups
    name = name.substr(space + 1);
  }
  CLI::App* sub = parent->add_subcommand(name, card.summary + " (" + card.equations + ")");
  std::vector<CLI::Option*> param_options;
  for (std::size_t i = 0; i < card.params.size(); ++i) {
    const ModelParam& p = card.params[i];
    o->values[i] = p.default_text;
    std::string help = p.help;
    if (p.name == card.continuation) help += " [continuation: warm starts along this sweep]";
    if (!p.choices.empty()) {
      std::string names;
      for (const auto& c : p.choices) names += (names.empty() ? "" : " | ") + c;
      help += "; " + names + " (comma list)";
    } else {
      const std::string domain = domain_text(p.domain);
      if (!domain.empty()) help += "; domain: " + domain;
      help += " (value, list a,b, start:stop:count[:log])";
    }
    param_options.push_back(sub->add_option(option_name(p.name), o->values[i], help)->capture_default_str());
  }
  for (std::size_t s = 0; s < card.settings.size(); ++s) {
    const ModelSetting& st = card.settings[s];
    o->settings[s] = st.default_text;
    CLI::Option* opt = sub->add_option(option_name(st.name), o->settings[s], st.help);
    if (!st.default_text.empty()) opt->capture_default_str();
    for (std::size_t i = 0; i < card.params.size(); ++i)
      if (card.params[i].name == st.replaces) opt->excludes(param_options[i]);
  }
  sub->add_option("--init", o->init,
                  "The starts to run, a comma list of the model's start labels (default: " +
                      (card.default_init.empty() ? std::string("all") : card.default_init) +
                      "; the CSV header's `starts` line names them)");
  add_solver_options(sub, o->solver, o->method);
  add_curve_options(sub, o->curve);
  if (e->hooks.refinement) {
    o->target_se = card.target_se;
    sub->add_option("--target-se", o->target_se,
                    "Refine (the model's next level, warm start) a point whose s.e. exceeds this; >= 0, 0 = off")
        ->capture_default_str()->group("Integration");
    sub->add_option("--max-refine", o->max_refine, "At most this many refinements per point, in [0, 4]")
        ->capture_default_str()->group("Integration");
    if (e->hooks.stability)
      sub->add_flag("--refine-unstable", o->refine_unstable,
                    "Also refine points the model's stability check calls unstable")
          ->group("Integration");
  }
  add_run_options(sub, o->run);
  sub->callback([o, e] { run_model(*e, *o); });
}

std::vector<ModelCard> registered_model_cards() {
  {
    // Registration happens when an app is built (tools/cli/app.cpp): build one if none was.
    std::lock_guard<std::mutex> lock(registry_mutex());
    if (!registry().empty()) return registry();
  }
  CLI::App app;
  register_models(app);
  std::lock_guard<std::mutex> lock(registry_mutex());
  return registry();
}

}  // namespace saddle
