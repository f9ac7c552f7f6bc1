// `saddle validate slr`: SLR theory (population (S7), Bayes (S9), replica §4) against the direct
// simulation, on the built-in cases or one case given by the flags. The cases, their runs and
// verdicts live in mc/slr_validate.*; this file parses the flags and prints the table.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>

#include "equations/slr_model.hpp"
#include "mc/slr_validate.hpp"
#include "solver/interrupt.hpp"
#include "tools/cli/cli_common.hpp"
#include "tools/commands/cmd_groups.hpp"
#include "tools/commands/cmd_slr.hpp"
#include "tools/runner/runner.hpp"

namespace saddle {
namespace {

// The figure of a validation: each quantity's value (theory as lines, simulation as points with
// error bars) against the dimension D (--plot-x: another column), one curve per case and quantity.
PlotHints validate_slr_hints() {
  PlotHints h;
  h.y = {"value"};
  h.params = {"alpha", "D"};
  h.series = {"case", "quantity"};
  h.not_series = {"kind", "z", "allowance", "verdict", "note", "seeds"};
  return h;
}

const std::vector<std::string>& validate_slr_columns() {
  static const std::vector<std::string> c{"case", "kind", "task", "L", "nu", "lambda", "delta",
                                          "activation", "erf_b", "alpha", "init", "D", "seeds",
                                          "quantity", "source", "value", "se", "z", "allowance",
                                          "verdict", "note"};
  return c;
}

struct ValidateSlrCli {
  bool quick = false;
  std::string mode;  // empty: built-in cases; erm | population: one case from the flags
  std::string task = "spiked", L = "2", L_dist, activation = "softmax", init = "random";
  double nu = 2.0, lambda = 0.1, delta = 0.0, alpha = 2.0, erf_b = 0.0;
  double m_k = 1.0, q_k = 1.5, m_v = 0.8, q_v = 0.9;
  int D = 0, seeds = 0, n_test = 0, points = 4096, replicates = 8, threads = 0;
  std::uint64_t seed = 1;
  std::string out;
  TablePlot plot;
  bool progress = true;
  std::vector<std::string> given;  // the case options on the command line (--alpha, ...)
};

// Options of one case from the flags: used with --mode only; the erm-only and population-only
// ones with that mode only. An option that would not act is refused, never ignored.
const std::vector<std::string>& case_options() {
  static const std::vector<std::string> v{"--task", "--L", "--L-dist", "--nu", "--lambda", "--delta",
                                          "--alpha", "--activation", "--erf-b", "--init", "--m-k", "--q-k",
                                          "--m-v", "--q-v", "--D", "--seeds", "--n-test", "--points",
                                          "--replicates"};
  return v;
}
bool erm_only(const std::string& name) {
  return name == "--lambda" || name == "--alpha" || name == "--init" || name == "--points" ||
         name == "--replicates";
}
bool population_only(const std::string& name) {
  return name == "--m-k" || name == "--q-k" || name == "--m-v" || name == "--q-v";
}
bool given(const ValidateSlrCli& o, const std::string& name) {
  return std::find(o.given.begin(), o.given.end(), name) != o.given.end();
}

void check_case_options(const ValidateSlrCli& o) {
  for (const std::string& name : o.given) {
    if (o.mode.empty())
      throw InputError(name + ": sets one case of --mode erm or --mode population; without --mode the "
                       "built-in cases run (give --mode, or leave " + name + " out)");
    if (o.mode == "population" && erm_only(name))
      throw InputError(name + ": applies to --mode erm only (the population case has no training)");
    if (o.mode == "erm" && population_only(name))
      throw InputError(name + ": applies to --mode population only (erm learns the overlaps)");
  }
  if (!o.mode.empty() && o.quick)
    throw InputError("--quick: selects the built-in quick cases; it does not apply with --mode");
  if ((given(o, "--D") && o.D < 4) || (given(o, "--seeds") && o.seeds < 2) ||
      (given(o, "--n-test") && o.n_test < 1))
    throw InputError("need --D >= 4, --seeds >= 2, --n-test >= 1 (leave one out for its default)");
}

// Bounds of one case from the flags (as `mc slr`): D <= 1e7, seeds <= 1e5, and the tokens of one
// training or test set at most 1e9 entries.
constexpr double kMaxD = 1e7, kMaxEntries = 1e9;

slr::mc::ValidationCase case_from_flags(const ValidateSlrCli& o) {
  slr::mc::ValidationCase c;
  c.set.task = parse_task_option(o.task);
  c.set.activation = as_input([&] { return slr::parse_activation(o.activation); }, "--activation");
  const auto laws = parse_length_laws(o.L, o.L_dist, 1e6);
  if (laws.size() != 1) throw InputError("--L: one case takes one length (a law: --L-dist)");
  c.set.lengths = laws.front();
  c.set.nu = o.nu;
  c.set.delta = o.delta;
  c.set.erf_b = o.erf_b;
  if (o.mode == "population") {
    c.kind = slr::mc::CaseKind::Population;
    c.m_k = o.m_k;
    c.q_k = o.q_k;
    c.m_v = o.m_v;
    c.q_v = o.q_v;
    c.D = given(o, "--D") ? o.D : 48;
    c.seeds = given(o, "--seeds") ? o.seeds : 16;
    c.n_test = given(o, "--n-test") ? o.n_test : 50000;
    c.allowance_reason = "none: (S6) is exact at any D";
    c.name = "population";
  } else if (o.mode == "erm") {
    c.kind = slr::mc::CaseKind::Erm;
    c.init = as_input([&] { return slr::mc::parse_init(o.init); }, "--init");
    c.lambda = o.lambda;
    c.alpha = o.alpha;
    c.D = given(o, "--D") ? o.D : 400;
    c.seeds = given(o, "--seeds") ? o.seeds : 16;
    c.n_test = given(o, "--n-test") ? o.n_test : 20000;
    if (o.points < 16 || o.replicates < 2 || o.points > (1 << 22) || o.replicates > 64)
      throw InputError("--points in [16, 4194304], --replicates in [2, 64]");
    c.replica_points = o.points;
    c.replica_replicates = o.replicates;
    c.allowance = 1.0 / c.D;
    c.allowance_reason = "1/D finite-size bias (+ replica stall residual)";
    c.name = "erm";
  } else {
    throw InputError("--mode must be erm or population (or absent for the built-in cases)");
  }
  if (c.D > kMaxD || c.seeds > 100000) throw InputError("need D <= 1e7, seeds <= 100000");
  // The domain of the theory side (the population module stops at nu = 1e3, max-SLR: or inf)
  // and of the simulation, before anything runs.
  as_input([&] { return slr::mc::check_case(c); });
  int Lmax = 1;
  for (int L : c.set.lengths) Lmax = std::max(Lmax, L);
  checked_count({double(c.n_test), double(Lmax), double(c.D)}, kMaxEntries, "--n-test x L x D");
  if (c.kind == slr::mc::CaseKind::Erm)
    checked_count({std::round(c.alpha * c.D), double(Lmax), double(c.D)}, kMaxEntries,
                  "--alpha x D x L x D (training tokens)");
  const double bytes = 4.0 * (c.kind == slr::mc::CaseKind::Erm ? std::round(c.alpha * c.D) : 0.0) *
                           Lmax * c.D + 16.0 * c.n_test;
  if (!(bytes * std::min(c.seeds, 64) <= simulation_memory_limit_bytes()))
    throw InputError("validate slr: the seeds need about " + bytes_text(bytes) +
                     " each, above the memory bound " + bytes_text(simulation_memory_limit_bytes()));
  return c;
}

void run_validate_slr(const ValidateSlrCli& o) {
  check_table_outputs(o.out, o.plot);
  check_table_plot(validate_slr_columns(), o.plot, validate_slr_hints());
  check_case_options(o);
  if (o.threads < 0 || o.threads > 4096) throw InputError("--threads must be in [0, 4096]");
  if (o.threads > 0) omp_set_num_threads(o.threads);
  std::vector<slr::mc::ValidationCase> cases;
  if (o.mode.empty())
    cases = slr::mc::builtin_slr_cases(o.quick);
  else
    cases.push_back(case_from_flags(o));
  int fails = 0, gaps = 0, passes = 0, unstable = 0, rsb_gaps = 0, rsb_unconverged = 0;
  auto make_table = [&](const std::vector<slr::mc::ValidationRow>& rows) {
    CsvTable table(validate_slr_columns());
    table.setting("model", "SLR theory (population (S7), Bayes (S9), replica §4) against direct "
                           "simulation (docs/equations/slr_replica.md §6)");
    table.setting("verdict", "pass iff |mc - theory| <= 4 sqrt(se_mc^2 + se_theory^2) + allowance; "
                             "known_gap = documented disagreement (docs/mc_slr.md); rs_unstable = a "
                             "disagreement where the replica fixed point is locally unstable "
                             "(replicon eigenvalue > 1 + 2 s.e.: replica symmetry broken); rsb_reference "
                             "rows: the committed 1RSB point (theory) against the committed ERM extrapolated "
                             "to D = inf (mc) in the RS-unstable windows, rsb_gap = a converged 1RSB point "
                             "beyond 4 s.e. of it (1RSB not exact there), rsb_unconverged = the 1RSB "
                             "iteration did not converge (no theory value); none of these counted as FAIL");
    table.setting("cases", o.mode.empty() ? (o.quick ? "built-in quick" : "built-in full") : o.mode);
    table.setting("seed", std::to_string(o.seed));
    fails = gaps = passes = unstable = rsb_gaps = rsb_unconverged = 0;
    for (const auto& r : rows) {
      const slr::mc::ValidationCase* c = nullptr;
      for (const auto& x : cases)
        if (x.name == r.case_name) c = &x;
      const bool erm = c->kind != slr::mc::CaseKind::Population;
      if (r.source == "mc") {
        if (r.verdict == "pass") ++passes;
        else if (r.verdict == "known_gap") ++gaps;
        else if (r.verdict == "rs_unstable") ++unstable;
        else if (r.verdict == "rsb_gap") ++rsb_gaps;
        else if (r.verdict == "rsb_unconverged") ++rsb_unconverged;
        else ++fails;
      }
      table.add_row({r.case_name, r.kind, slr::to_string(c->set.task), length_key(c->set.lengths),
                     fmt(c->set.nu), erm ? fmt(c->lambda) : "", fmt(c->set.delta),
                     slr::to_string(c->set.activation), fmt(c->set.erf_b), erm ? fmt(c->alpha) : "",
                     erm ? slr::mc::to_string(c->init) : "", c->kind == slr::mc::CaseKind::Reference ? "inf" : std::to_string(c->D),
                     std::to_string(c->seeds), r.quantity, r.source,
                     std::isfinite(r.value) ? fmt(r.value) : "", std::isfinite(r.se) ? fmt(r.se) : "",
                     r.source == "mc" && std::isfinite(r.z) ? fmt(r.z) : "", r.source == "mc" ? fmt(r.allowance) : "",
                     r.verdict, r.note});
    }
    for (const auto& c : cases)
      table.setting("allowance " + c.name, fmt(c.allowance) + " (" + c.allowance_reason + ")");
    return table;
  };
  // A stop keeps the complete cases: their rows are written, marked as interrupted (no summary
  // line), and the command exits 130 (as the grid runner); returns the message for stderr.
  auto write_interrupted = [&](const std::vector<slr::mc::ValidationRow>& rows, std::size_t complete) {
    CsvTable table = make_table(rows);
    table.setting("interrupted", std::to_string(complete) + " of " + std::to_string(cases.size()) +
                                     " cases complete (their rows only; no summary): run the command again");
    write_table_checked(table, o.out, TablePlot{}, validate_slr_hints());
    return "interrupted: " + std::to_string(complete) + " of " + std::to_string(cases.size()) +
           " cases complete, their rows written to " +
           (o.out.empty() || o.out == "-" ? std::string("stdout") : "'" + o.out + "'") +
           " (marked '# interrupted:', no summary line); run the command again for the rest";
  };
  std::size_t complete = 0;
  const std::vector<slr::mc::ValidationRow> rows = run_cases<slr::mc::ValidationRow>(
      cases.size(), o.progress, &complete,
      [&](std::size_t* c, const auto& k) { return slr::mc::run_slr_validation(cases, o.seed, c, k); }, write_interrupted);
  if (complete < cases.size()) throw Interrupted(write_interrupted(rows, complete));
  CsvTable table = make_table(rows);
  table.setting("summary", std::to_string(passes) + " pass, " + std::to_string(gaps) +
                               " known_gap, " + std::to_string(unstable) + " rs_unstable, " +
                               std::to_string(rsb_gaps) + " rsb_gap, " + std::to_string(rsb_unconverged) +
                               " rsb_unconverged, " +
                               std::to_string(fails) + " FAIL");
  TablePlot plot = o.plot;  // x: the dimension D of the simulation (every row has one)
  if (plot.options.x.empty()) plot.options.x = "D";
  write_table_checked(table, o.out, plot, validate_slr_hints());
  if (fails > 0)
    throw std::runtime_error("validate slr: " + std::to_string(fails) +
                             " comparison(s) disagree beyond 4 s.e. + allowance");
}

}  // namespace

void register_validate_slr(CLI::App& validate) {
  auto o = std::make_shared<ValidateSlrCli>();
  CLI::App* sub = validate.add_subcommand(
      "slr", "SLR: population, Bayes and replica theory against direct simulation (docs/equations/slr_replica.md §6)");
  sub->add_flag("--quick", o->quick, "Built-in quick subset (a few seconds; the full set takes minutes)");
  sub->add_option("--mode", o->mode,
                  "One case from the flags: erm or population (default: the built-in cases; the case "
                  "options below need --mode)");
  sub->add_option("--task", o->task, "spiked or max")->capture_default_str();
  sub->add_option("--L", o->L, "Sequence length (one case: one value; erm: L <= 4)")->capture_default_str();
  sub->add_option("--L-dist", o->L_dist,
                  "Variable length: a set of lengths drawn uniformly per sample; excludes --L");
  sub->add_option("--nu", o->nu,
                  "Signal strength: nu in [0, 1e3], max-SLR: or inf (the domain of "
                  "the population module that the theory side uses)")
      ->capture_default_str();
  sub->add_option("--lambda", o->lambda, "Ridge lambda in [0, 1e4] (erm)")->capture_default_str();
  sub->add_option("--delta", o->delta, "Noise variance in [0, 1e4]")->capture_default_str();
  sub->add_option("--alpha", o->alpha, "Sample ratio in [1e-3, 1e4] (erm)")->capture_default_str();
  sub->add_option("--activation", o->activation, "softmax, linear (erm); also erf, softplus (population)")
      ->capture_default_str();
  sub->add_option("--erf-b", o->erf_b, "erf offset b, |b| <= 10")->capture_default_str();
  sub->add_option("--init", o->init, "ERM start: random or informed")->capture_default_str();
  sub->add_option("--m-k", o->m_k, "population: m_k, |m_k| <= 200")->capture_default_str();
  sub->add_option("--q-k", o->q_k, "population: q_k in [m_k^2, 1e5]")->capture_default_str();
  sub->add_option("--m-v", o->m_v, "population: m_v, |m_v| <= 1e3")->capture_default_str();
  sub->add_option("--q-v", o->q_v, "population: q_v in [m_v^2, 1e6]")->capture_default_str();
  sub->add_option("--D", o->D, "Dimension in [4, 1e7] (default 400 erm, 48 population)");
  sub->add_option("--seeds", o->seeds, "Seeds in [2, 100000] (default 16)");
  sub->add_option("--n-test", o->n_test,
                  "Fresh test samples per seed, >= 1 with n_test L D <= 1e9 (default 20000 erm, 50000 population)");
  sub->add_option("--points", o->points, "Replica QMC points per replicate in [16, 4194304] (erm)")
      ->capture_default_str();
  sub->add_option("--replicates", o->replicates, "Replica QMC replicates in [2, 64] (erm)")->capture_default_str();
  add_seed_option(sub, o->seed, "Base seed of the simulation (an integer in [0, 2^64))");
  sub->add_option("--threads", o->threads, "Threads in total (0: default); cases, seeds and replica solves share them");
  sub->add_option("--out", o->out, "Write the CSV to this file instead of stdout");
  sub->add_flag("!--no-progress", o->progress, "No progress bar on stderr");
  add_plot_options(sub, o->plot);
  sub->callback([o, sub] {
    o->given.clear();
    for (const std::string& name : case_options())
      if (sub->get_option(name)->count() > 0) o->given.push_back(name);
    run_validate_slr(*o);
  });
}

}  // namespace saddle
