// The SLR trainer's driver (docs/equations/slr_replica.md §6): starts, L-BFGS, restarts, test
// errors, population mode, summaries over seeds. See mc/slr_erm.hpp.
#include "mc/slr_erm.hpp"

#include <omp.h>
#include <ceres/gradient_problem.h>
#include <ceres/gradient_problem_solver.h>
#include <glog/logging.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <mutex>
#include <stdexcept>

#include "mc/random.hpp"
#include "solver/interrupt.hpp"
#include "solver/parallel.hpp"

namespace saddle {
namespace slr {
namespace mc {

namespace {

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (std::size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

void fill_overlaps(const Teacher& T, const std::vector<double>& k, const std::vector<double>& v,
                   SeedResult& r) {
  const double D = T.D;
  r.m_k = dot(k, T.kstar) / D;
  r.q_k = dot(k, k) / D;
  r.m_v = dot(v, T.vstar) / D;
  r.q_v = dot(v, v) / D;
  r.kv_star = dot(k, T.vstar) / D;
  r.vk_star = dot(v, T.kstar) / D;
  r.kv = dot(k, v) / D;
}

void fill_test(const SimSetting& set, const TestErrors& t, int n_test, SeedResult& r) {
  r.test_mse = t.mse;
  r.e_bayes = t.mse_bayes - set.delta;
  r.test_var = t.var;
  r.bayes_var = t.var_bayes;
  r.n_test = n_test;
  r.e_test = r.test_mse - set.delta;
}

// Ceres logs through glog; uninitialised, glog prints "WARNING: Logging before
// InitGoogleLogging() ..." and Ceres' line-search warnings on stderr at extreme inputs. Once per
// process: initialise glog (unless the host program did) and keep everything below FATAL (which
// aborts anyway) off stderr and out of log files.
void quiet_ceres_logging() {
  static std::once_flag once;
  std::call_once(once, [] {
    FLAGS_logtostderr = true;  // no log files
    FLAGS_minloglevel = google::GLOG_FATAL;
    if (!google::IsGoogleLoggingInitialized()) google::InitGoogleLogging("saddle");
  });
}

struct Minimum {
  int iterations = 0;
  bool converged = false;
  std::string message;
  long evaluations = 0;
};

// L-BFGS of (S13) from th (overwritten by the minimiser), the §6 settings of `opt`.
Minimum minimise(const SimSetting& set, const Dataset& data, const ErmOptions& opt,
                 std::vector<double>& th) {
  ceres::GradientProblemSolver::Options options;
  options.line_search_direction_type = ceres::LBFGS;
  options.max_lbfgs_rank = opt.lbfgs_rank;
  options.max_num_iterations = opt.max_iterations;
  options.function_tolerance = opt.function_tolerance;
  options.gradient_tolerance = opt.gradient_tolerance;
  options.parameter_tolerance = opt.parameter_tolerance;
  options.logging_type = ceres::SILENT;
  options.minimizer_progress_to_stdout = false;
  quiet_ceres_logging();
  auto* objective = new ErmObjective(set, data, opt.lambda);
  ceres::GradientProblem problem(objective);  // owns objective
  ceres::GradientProblemSolver::Summary summary;
  ceres::Solve(options, problem, th.data(), &summary);
  Minimum m;
  m.iterations = static_cast<int>(summary.iterations.size()) - 1;
  m.converged = summary.termination_type == ceres::CONVERGENCE;
  m.message = summary.message;
  m.evaluations = objective->evaluations();
  return m;
}

}  // namespace

Init parse_init(const std::string& s) {
  if (s == "informed") return Init::Informed;
  if (s == "random") return Init::Random;
  if (s == "overlaps") return Init::Overlaps;
  throw std::invalid_argument("unknown init '" + s + "' (expected informed or random)");
}
std::string to_string(Init i) {
  return i == Init::Informed ? "informed" : (i == Init::Random ? "random" : "overlaps");
}

double default_c0(const SimSetting& set) {
  switch (set.activation) {
    case Activation::Softmax:
    case Activation::Softplus:
      return set.task == Task::Spiked ? std::sqrt(set.nu) : std::min(set.nu, 3.0);
    case Activation::Linear:
    case Activation::Erf:
      return 0.5;
  }
  return 0.5;
}

SeedResult run_erm_seed(const SimSetting& set, int D, double alpha, const ErmOptions& opt,
                        std::uint64_t seed, std::uint64_t index) {
  check_setting(set);
  if (!(alpha > 0) || !std::isfinite(alpha)) throw std::invalid_argument("alpha must be > 0");
  if (!(opt.lambda >= 0) || !std::isfinite(opt.lambda))
    throw std::invalid_argument("lambda must be >= 0");
  if (opt.init == Init::Overlaps &&
      (!(opt.init_q_k >= opt.init_m_k * opt.init_m_k) || !(opt.init_q_v >= opt.init_m_v * opt.init_m_v)))
    throw std::invalid_argument("--init overlaps needs q_k >= m_k^2 and q_v >= m_v^2");
  const auto t0 = std::chrono::steady_clock::now();
  const Teacher T = draw_teacher(D, seed, index);
  const int N = std::max(1, static_cast<int>(std::lround(alpha * D)));

  // The test set's sequential pass (task 0) runs beside the training (task 1).
  TestPlan plan;
  SeedResult r;
  std::vector<double> k, v;
  parallel_for(opt.split_seed ? 2 : 1, [&](std::size_t task) {
    if (!opt.split_seed) {  // one task: the plan (one chunk, no pass) before the training
      plan = plan_test_set(set, D, opt.n_test, seed, index, false);
      task = 1;
    }
    if (task == 0) {
      plan = plan_test_set(set, D, opt.n_test, seed, index, opt.split_seed);
      return;
    }
    const Dataset data = draw_dataset(set, T, N, seed, index, kTrain, opt.split_seed);
    std::vector<double> theta(2 * static_cast<std::size_t>(D));
    if (opt.init == Init::Informed) {  // §6: k = c0 k*, v = v*
      const double c0 = opt.c0 >= 0 ? opt.c0 : default_c0(set);
      for (int i = 0; i < D; ++i) {
        theta[i] = c0 * T.kstar[i];
        theta[D + i] = T.vstar[i];
      }
    } else if (opt.init == Init::Overlaps) {
      prescribed_kv(T, opt.init_m_k, opt.init_q_k, opt.init_m_v, opt.init_q_v, seed, index, k, v);
      std::copy(k.begin(), k.end(), theta.begin());
      std::copy(v.begin(), v.end(), theta.begin() + D);
    } else {  // §6: entries N(0, 0.01)
      Rng rng(seed, index, kInit);
      for (double& x : theta) x = opt.init_sd * rng.normal();
    }
    const Minimum first = minimise(set, data, opt, theta);
    k.assign(theta.begin(), theta.begin() + D);
    v.assign(theta.begin() + D, theta.end());
    fill_overlaps(T, k, v, r);
    r.iterations = first.iterations;
    r.converged = first.converged;
    r.termination = first.message;
    r.evaluations = first.evaluations;
    r.train_loss = empirical_risk(set, data, opt.lambda, opt.lambda, theta.data(), nullptr) / N;
    r.train_mse = mean_squared_error(set, data, k.data(), v.data());
    if (opt.restarts <= 1) return;
    // Further minima of the same training set from independent random starts (§6 start law).
    std::vector<std::vector<double>> minima{theta};
    double lo = r.train_loss, hi = r.train_loss;
    int lowest = 0, lowest_iterations = r.iterations;
    bool lowest_converged = r.converged;
    for (int a = 1; a < opt.restarts; ++a) {
      std::vector<double> th(theta.size());
      Rng rng(seed, index, kRestart + static_cast<std::uint64_t>(a));
      for (double& x : th) x = opt.init_sd * rng.normal();
      const Minimum ma = minimise(set, data, opt, th);
      r.evaluations += ma.evaluations;
      const double loss = empirical_risk(set, data, opt.lambda, opt.lambda, th.data(), nullptr) / N;
      if (loss < lo - 1e-12 * std::abs(lo)) {
        lowest = a;
        lowest_iterations = ma.iterations;
        lowest_converged = ma.converged;
      }
      lo = std::min(lo, loss);
      hi = std::max(hi, loss);
      minima.push_back(std::move(th));
    }
    const auto dotD = [D](const double* a, const double* b) {
      double t = 0.0;
      for (int i = 0; i < D; ++i) t += a[i] * b[i];
      return t / D;
    };
    const int R = opt.restarts;
    int pairs = 0;
    for (int a = 0; a < R; ++a) {
      r.q_k_aa += dotD(minima[a].data(), minima[a].data()) / R;
      r.q_v_aa += dotD(minima[a].data() + D, minima[a].data() + D) / R;
      for (int b = a + 1; b < R; ++b) {
        r.q_k_ab += dotD(minima[a].data(), minima[b].data());
        r.q_v_ab += dotD(minima[a].data() + D, minima[b].data() + D);
        ++pairs;
      }
    }
    r.q_k_ab /= pairs;
    r.q_v_ab /= pairs;
    r.loss_spread = hi - lo;
    r.init_lowest = lowest == 0 ? 1.0 : 0.0;
    if (opt.keep_lowest && lowest != 0) {  // report the lowest-loss minimiser instead
      theta = minima[lowest];
      k.assign(theta.begin(), theta.begin() + D);
      v.assign(theta.begin() + D, theta.end());
      fill_overlaps(T, k, v, r);
      r.train_loss = lo;
      r.train_mse = mean_squared_error(set, data, k.data(), v.data());
      r.iterations = lowest_iterations;
      r.converged = lowest_converged;
    }
  });
  fill_test(set, test_errors(set, T, k, v, plan), opt.n_test, r);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

SeedResult run_population_seed(const SimSetting& set, int D, double m_k, double q_k, double m_v,
                               double q_v, int n_test, std::uint64_t seed, std::uint64_t index,
                               bool split_seed) {
  check_setting(set);
  if (D < 4) throw std::invalid_argument("population mode needs D >= 4");
  if (!(q_k >= m_k * m_k * (1 - 1e-12)) || !(q_v >= m_v * m_v * (1 - 1e-12)))
    throw std::invalid_argument("population mode needs q_k >= m_k^2 and q_v >= m_v^2");
  if (n_test < 1) throw std::invalid_argument("n_test must be >= 1");
  const auto t0 = std::chrono::steady_clock::now();
  const Teacher T = draw_teacher(D, seed, index);
  std::vector<double> k, v;
  prescribed_kv(T, m_k, q_k, m_v, q_v, seed, index, k, v);
  SeedResult r;
  fill_overlaps(T, k, v, r);
  fill_test(set, test_errors(set, T, k, v, plan_test_set(set, D, n_test, seed, index, split_seed)),
            n_test, r);
  r.converged = true;
  r.termination = "population";
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

Summary summarize_seeds(std::vector<SeedResult> results) {
  Summary S;
  S.seeds = static_cast<int>(results.size());
  auto stat = [&](auto get) {
    std::vector<double> v;
    for (const auto& r : results) v.push_back(get(r));
    return summarize(v);
  };
  S.m_k = stat([](const SeedResult& r) { return r.m_k; });
  S.q_k = stat([](const SeedResult& r) { return r.q_k; });
  S.m_v = stat([](const SeedResult& r) { return r.m_v; });
  S.q_v = stat([](const SeedResult& r) { return r.q_v; });
  S.kv_star = stat([](const SeedResult& r) { return r.kv_star; });
  S.vk_star = stat([](const SeedResult& r) { return r.vk_star; });
  S.kv = stat([](const SeedResult& r) { return r.kv; });
  S.train_mse = stat([](const SeedResult& r) { return r.train_mse; });
  S.train_loss = stat([](const SeedResult& r) { return r.train_loss; });
  S.test_mse = stat([](const SeedResult& r) { return r.test_mse; });
  S.e_test = stat([](const SeedResult& r) { return r.e_test; });
  S.e_bayes = stat([](const SeedResult& r) { return r.e_bayes; });
  S.iterations = stat([](const SeedResult& r) { return double(r.iterations); });
  S.seconds = stat([](const SeedResult& r) { return r.seconds; });
  S.q_k_ab = stat([](const SeedResult& r) { return r.q_k_ab; });
  S.q_v_ab = stat([](const SeedResult& r) { return r.q_v_ab; });
  S.q_k_aa = stat([](const SeedResult& r) { return r.q_k_aa; });
  S.q_v_aa = stat([](const SeedResult& r) { return r.q_v_aa; });
  S.loss_spread = stat([](const SeedResult& r) { return r.loss_spread; });
  S.init_lowest = stat([](const SeedResult& r) { return r.init_lowest; });
  for (const auto& r : results) S.converged += r.converged ? 1 : 0;
  // Pooled standard errors: all seeds' test samples together (valid when the risk does not
  // depend on the teacher draw, as in the population mode, where (S6) is exact).
  double vt = 0, vb = 0, nt = 0;
  for (const auto& r : results) {
    vt += r.test_var * r.n_test;
    vb += r.bayes_var * r.n_test;
    nt += r.n_test;
  }
  if (nt > 0) {
    S.e_test_pooled_se = std::sqrt(vt) / nt;
    S.e_bayes_pooled_se = std::sqrt(vb) / nt;
  }
  S.per_seed = std::move(results);
  return S;
}

namespace {
template <class F>
Summary run_seeds(int n_seeds, F&& one) {
  if (n_seeds < 1) throw std::invalid_argument("the number of seeds must be >= 1");
  std::vector<SeedResult> res(n_seeds);
  const WorkShare work = current_work();  // progress: each seed an equal part (solver/interrupt.hpp)
  parallel_for(static_cast<std::size_t>(n_seeds), [&](std::size_t i) {
    res[i] = one(static_cast<int>(i));
    work.add(1.0 / n_seeds);
  });
  return summarize_seeds(std::move(res));
}
}  // namespace

Summary run_erm(const SimSetting& set, int D, double alpha, const ErmOptions& opt, int n_seeds,
                std::uint64_t seed) {
  check_setting(set);
  ErmOptions o = opt;
  o.split_seed = opt.split_seed && seeds_leave_cores_idle(n_seeds);
  return run_seeds(n_seeds, [&](int i) { return run_erm_seed(set, D, alpha, o, seed, i); });
}

bool seeds_leave_cores_idle(double seeds_at_once) {
  return seeds_at_once < 2.0 * omp_get_max_threads();
}

Summary run_population(const SimSetting& set, int D, double m_k, double q_k, double m_v,
                       double q_v, int n_test, int n_seeds, std::uint64_t seed) {
  check_setting(set);
  const bool split = seeds_leave_cores_idle(n_seeds);
  return run_seeds(n_seeds, [&](int i) {
    return run_population_seed(set, D, m_k, q_k, m_v, q_v, n_test, seed, i, split);
  });
}

}  // namespace mc
}  // namespace slr
}  // namespace saddle
