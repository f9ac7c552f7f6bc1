// `saddle slr erm`: its options described and checked (tools/commands/slr_erm_options.hpp).
#include "tools/commands/slr_erm_options.hpp"

#include "tools/commands/cmd_slr.hpp"

namespace saddle {
namespace {

// --symmetry and --inner-points (after the options whose 1RSB default differs).
void add_rsb_options(CLI::App* sub, ErmRsbOptions& o) {
  sub->add_option("--symmetry", o.symmetry,
                  "rs: replica-symmetric fixed point (slr_replica.md §4); 1rsb: one-step replica "
                  "symmetry breaking at zero temperature (docs/equations/slr_rsb.md), for the "
                  "RS-unstable windows; unless given, 1rsb uses --points 1024, --target-se 0, "
                  "--method anderson, --mix 0.3, --anderson-depth 3")
      ->capture_default_str();
  sub->add_option("--inner-points", o.inner,
                  "1rsb: inner QMC points per outer point (antithetic pairs; even, 2..4096)")
      ->capture_default_str()->group("Integration");
  o.points = sub->get_option("--points");
  o.target_se = sub->get_option("--target-se");
  o.method = sub->get_option("--method");
  o.mix = sub->get_option("--mix");
  o.depth = sub->get_option("--anderson-depth");
}

// --symmetry 1rsb: the 1RSB settings and curve options, the 1RSB defaults for what was not given.
void plan_rsb(const ErmCli& cli, ErmPlan& plan) {
  using namespace slr;
  const ErmRsbOptions& o = cli.rsb;
  if (o.inner < 2 || o.inner > 4096 || o.inner % 2 != 0)
    throw InputError("--inner-points: must be even and in 2..4096");
  auto given = [](const CLI::Option* opt) { return opt && opt->count() > 0; };
  const RsbCurveOptions defaults;
  RsbCurveOptions& copt = plan.rsb_copt;
  copt.solver = plan.opt;
  if (!given(o.method)) copt.solver.method = defaults.solver.method;
  if (!given(o.mix)) copt.solver.mix = defaults.solver.mix;
  if (!given(o.depth)) copt.solver.anderson_depth = defaults.solver.anderson_depth;
  copt.noise_factor = plan.copt.noise_factor;
  copt.retry = plan.copt.retry;
  copt.target_se = given(o.target_se) ? cli.target_se : 0.0;
  copt.max_refine = cli.max_refine;
  copt.refine_unstable = cli.refine_unstable;
  for (const ReplicaSetting& rs : plan.settings) {
    RsbSetting s;
    s.rs = rs;
    if (!given(o.points)) s.rs.n_points = 1024;
    s.n_inner = o.inner;
    as_input([&] { return validate(s); });
    plan.rsb_settings.push_back(s);
  }
  const RsbSetting& s0 = plan.rsb_settings.front();
  // Memory and time per map evaluation grow as outer x inner points (x 16 after 2 refinements).
  checked_count({static_cast<double>(s0.rs.n_points), static_cast<double>(o.inner),
                 static_cast<double>(s0.rs.replicates)},
                1 << 24, "--points x --inner-points x --replicates");
  plan.rsb = true;
}

}  // namespace

bool rsb_selected(const ErmRsbOptions& o) {
  if (o.symmetry == "rs") return false;
  if (o.symmetry == "1rsb") return true;
  throw InputError("--symmetry: expected rs or 1rsb, got '" + o.symmetry + "'");
}

ErmPlan plan_slr_erm(const ErmCli& o) {
  using namespace slr;
  SolverOptions opt = o.solver;
  finish_solver_options(opt, o.method);
  slr::ReplicaCurveOptions copt;
  copt.solver = opt;
  finish_curve_options(o.curve, copt);
  opt = copt.solver;
  copt.target_se = o.target_se;
  copt.max_refine = o.max_refine;
  check_options(copt);
  const Task task = parse_task_option(o.task);
  const VhatForm vhat = as_input([&] { return parse_vhat_form(o.vhat); }, "--vhat");
  const ChannelKind channel = as_input([&] { return parse_channel_kind(o.channel); }, "--channel");
  if (o.line_nodes < 4 || o.line_nodes > 64) throw InputError("--line-nodes: must be in 4..64");
  if (channel != ChannelKind::Sampled && rsb_selected(o.rsb))
    throw InputError("--channel preint: only with --symmetry rs (the 1rsb channel is sampled)");
  // Default QMC points per replicate: 4096 draws (sampled), 1024 lines (pre-integrated: each line
  // is a 1-D rule of about --line-nodes prox solves, §4.9; at 256 lines the softmax L = 2 curve
  // reads test errors ~0.002 too high at alpha = 5..8, measured against 4096 lines).
  const int points =
      o.points_opt && o.points_opt->count() == 0 && channel != ChannelKind::Sampled ? 1024 : o.points;
  const auto laws = parse_length_laws(o.L, o.L_dist, replica::kMaxL);
  // Documented domain (README "Errors and exit codes").
  const SlrReplicaRules rules = slr_replica_rules(task);
  const auto nus = parse_sweep(o.nu, "nu", rules.nu);
  const auto lambdas = parse_sweep(o.lambda, "lambda", rules.scale);
  const auto deltas = parse_sweep(o.delta, "delta", rules.scale);
  const auto alphas = parse_sweep(o.alpha, "alpha", rules.alpha);
  const auto acts = parse_names(o.activation, "activation", {"softmax", "linear"});
  const auto init_names = parse_names(o.init, "init", {"informed", "uninformed"});
  check_grid({laws.size(), nus.size(), lambdas.size(), deltas.size(), acts.size(), init_names.size(),
              alphas.size()});
  std::vector<ReplicaInit> inits;
  for (const auto& s : init_names)
    inits.push_back(s == "informed" ? ReplicaInit::Informed : ReplicaInit::Uninformed);
  if (points < 16) throw InputError("--points: must be >= 16");
  if (o.replicates < 2) throw InputError("--replicates: must be >= 2 (error bars need R >= 2)");
  if (points > (1 << 22)) throw InputError("--points: must be <= 4194304");
  if (o.replicates > 1024) throw InputError("--replicates: must be <= 1024");
  checked_count({static_cast<double>(points), static_cast<double>(o.replicates)}, 1 << 24,
                "--points x --replicates");
  if (o.grid1 < 3 || o.grid1 > 513) throw InputError("--grid1: must be in 3..513");
  if (o.grid2 < 3 || o.grid2 > 41) throw InputError("--grid2: must be in 3..41");
  if (o.starts < 1 || o.starts > 8) throw InputError("--starts: must be in 1..8");
  // Validate every setting before any output.
  std::vector<ReplicaSetting> settings;
  for (const auto& law : laws)
    for (double nu : nus)
      for (double lambda : lambdas)
        for (double delta : deltas)
          for (const auto& a : acts) {
            ReplicaSetting s;
            s.task = task;
            s.L = law.front();
            if (law.size() > 1) s.lengths = law;
            s.nu = nu;
            s.lambda = lambda;
            s.delta = delta;
            s.activation = parse_activation(a);
            s.vhat = vhat;
            s.channel = channel;
            s.line.nodes = o.line_nodes;
            s.n_points = points;
            s.replicates = o.replicates;
            s.seed = o.seed;
            s.prox.grid1 = o.grid1;
            s.prox.grid2 = o.grid2;
            s.prox.n_starts = o.starts;
            as_input([&] { return validate(s); });
            settings.push_back(s);
          }
  ErmPlan plan;
  plan.opt = opt;
  plan.copt = copt;
  plan.vhat = vhat;
  plan.channel = channel;
  plan.points = points;
  plan.settings = settings;
  plan.alphas = alphas;
  plan.inits = inits;
  plan.counts = {{"L", laws.size()},      {"nu", nus.size()},         {"lambda", lambdas.size()},
                 {"delta", deltas.size()}, {"alpha", alphas.size()}, {"activation", acts.size()},
                 {"init", init_names.size()}};
  if (rsb_selected(o.rsb)) plan_rsb(o, plan);
  return plan;
}

void add_slr_erm_options(CLI::App* sub, ErmCli& o) {
  sub->add_option("--task", o.task, "spiked | max")->capture_default_str();
  sub->add_option("--L", o.L, "Number of tokens, 1..4 (sweepable)")->capture_default_str();
  sub->add_option("--L-dist", o.L_dist,
                  "Variable length: L drawn uniformly from this set (e.g. 1,2,3) per sample, one "
                  "shared (k, v) (§1.4, §4.6); excludes --L")
      ->capture_default_str();
  sub->add_option("--nu", o.nu, "Signal strength in [0, 1e3]; inf allowed for max (sweepable)")
      ->capture_default_str();
  sub->add_option("--lambda", o.lambda, "Ridge lambda in [0, 1e4] (sweepable)")->capture_default_str();
  sub->add_option("--delta", o.delta, "Noise variance Delta in [0, 1e4] (sweepable)")
      ->capture_default_str();
  sub->add_option("--alpha", o.alpha, "Sample ratio N/D in [1e-3, 1e4] (value, list, start:stop:count[:log])")
      ->capture_default_str();
  sub->add_option("--activation", o.activation, "softmax,linear (comma list)")
      ->capture_default_str();
  sub->add_option("--init", o.init, "informed,uninformed (comma list)")->capture_default_str();
  sub->add_option("--vhat", o.vhat, "V-hat form driving the iteration: stein (S20') | hessian (S20)")
      ->capture_default_str();
  sub->add_option("--channel", o.channel,
                  "Channel integration: sampled (plain QMC over every coordinate, §7b; a replicate "
                  "that cycles is solved again with the pre-integrated map) | preint (one key-noise "
                  "direction integrated exactly across the jumps of the proximal minimiser for every "
                  "replicate, §4.9)")
      ->capture_default_str()->group("Integration");
  sub->add_option("--line-nodes", o.line_nodes,
                  "Pre-integration (the preint channel, the fallback and the jump pass): Gauss-Hermite "
                  "nodes per line (and the budget of the piecewise rule on lines with jumps), 4..64")
      ->capture_default_str()->group("Integration");
  o.points_opt = sub->add_option("--points", o.points,
                  "QMC points per replicate (§7b), in [16, 4194304]; default 4096 (sampled), 1024 lines "
                  "(preint)")
      ->group("Integration");
  sub->add_option("--replicates", o.replicates, "QMC random shifts R in [2, 1024]; points x R <= 2^24")
      ->capture_default_str()->group("Integration");
  sub->add_option("--seed", o.seed, "Seed of the random shifts")->capture_default_str()
      ->group("Integration");
  sub->add_option("--target-se", o.target_se,
                  "Refine (4x QMC points, warm start) a point whose test_error_se exceeds this; "
                  ">= 0, 0 = off")
      ->capture_default_str()->group("Integration");
  sub->add_option("--max-refine", o.max_refine, "At most this many 4x refinements per point, in [0, 4]")
      ->capture_default_str()->group("Integration");
  sub->add_flag("--refine-unstable", o.refine_unstable,
               "Also refine points whose RS fixed point is unstable (rs_stability = unstable)")
      ->group("Integration");
  sub->add_option("--grid1", o.grid1, "Prox grid points, 1-D search, in [3, 513]")->capture_default_str()
      ->group("Integration");
  sub->add_option("--grid2", o.grid2, "Prox grid points per axis, 2-D search, in [3, 41]")
      ->capture_default_str()->group("Integration");
  sub->add_option("--starts", o.starts, "Newton starts from the best grid minima, in [1, 8]")
      ->capture_default_str()->group("Integration");
  add_curve_options(sub, o.curve);
  add_run_options(sub, o.run);
  add_solver_options(sub, o.solver, o.method);
  add_rsb_options(sub, o.rsb);
}

}  // namespace saddle
