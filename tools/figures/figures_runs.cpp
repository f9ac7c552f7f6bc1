// `saddle figures`: the runs of a panel (tools/figures/figures_panels.cpp). A run is this same binary,
// spawned with an argv array (never a shell), writing a temporary CSV; its wanted columns become
// rows of the panel (tools/figures/figures_rows.hpp) in long form: source, series, x, y, s.e., the
// lambda/alpha of the point and its RS stability.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "mc/slr_reference.hpp"
#include "solver/interrupt.hpp"
#include "tools/cli/cli_common.hpp"
#include "tools/figures/figures_rows.hpp"
#include "tools/plotting/plot.hpp"

extern char** environ;

namespace saddle {
namespace figures {
namespace {


// Replaces {key} by params[key] (and {each} by `each`) in one token.
std::string substitute(const std::string& tok, const Params& p, const std::string& each) {
  std::string out;
  std::size_t i = 0;
  while (i < tok.size()) {
    if (tok[i] == '{') {
      auto close = tok.find('}', i);
      if (close == std::string::npos) throw std::logic_error("figures: unclosed '{' in '" + tok + "'");
      std::string key = tok.substr(i + 1, close - i - 1);
      if (key == "each") {
        out += each;
      } else if (key.rfind("each:", 0) == 0) {
        out += each;
      } else {
        auto it = p.find(key);
        if (it == p.end()) throw std::logic_error("figures: no parameter '" + key + "' for '" + tok + "'");
        out += it->second;
      }
      i = close + 1;
    } else {
      out += tok[i++];
    }
  }
  return out;
}

// The name of the list a run is repeated over ({each:NAME} in its arguments), or "".
std::string each_key(const std::string& args) {
  auto at = args.find("{each:");
  if (at == std::string::npos) return "";
  auto close = args.find('}', at);
  return args.substr(at + 6, close - at - 6);
}

// Series label: {col} takes the row's value of column col (or a parameter).
std::string label_for(const std::string& tmpl, const CsvData& d, const std::vector<std::string>& row, const Params& p,
                      const std::string& each) {
  std::string out;
  std::size_t i = 0;
  while (i < tmpl.size()) {
    if (tmpl[i] == '{') {
      auto close = tmpl.find('}', i);
      std::string key = tmpl.substr(i + 1, close - i - 1);
      int c = d.col(key);
      if (key == "each") out += each;
      else if (c >= 0) out += row[c];
      else if (p.count(key)) out += p.at(key);
      else throw std::logic_error("figures: label '" + tmpl + "' names no column or parameter '" + key + "'");
      i = close + 1;
    } else {
      out += tmpl[i++];
    }
  }
  return out;
}

// posix_spawn of `prog` with `args` (argv[0] = args[0]); stdout and stderr go to `log`.
int spawn_wait(const std::string& prog, const std::vector<std::string>& args, const std::string& log, bool search_path) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  pid_t pid = 0;
  int rc = search_path ? posix_spawnp(&pid, prog.c_str(), &fa, nullptr, argv.data(), environ)
                       : posix_spawn(&pid, prog.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return -1;
  // Waits, polling the interrupt flag (SIGINT/SIGTERM to `figures`): then the child is stopped
  // the same way (it keeps nothing of its own: its CSV is a temporary one) and Interrupted thrown.
  int status = 0;
  bool stopping = false;
  for (;;) {
    const pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) return -1;
    if (interrupt_requested() && !stopping) {
      ::kill(pid, SIGTERM);
      stopping = true;
    }
    ::usleep(20000);
  }
  // Also when the child, signalled with us (Ctrl-C reaches the process group), ended first.
  if (stopping || interrupt_requested()) throw Interrupted();
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

std::string tail_of(const std::string& path, std::size_t n) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  std::string s = ss.str();
  return s.size() > n ? s.substr(s.size() - n) : s;
}

// A run "reference erm_inf" or "reference 1rsb": rows of the compiled-in reference of the
// RS-unstable windows (mc/slr_reference.hpp, data/validation/erm_inf/), when the panel's setting is
// the reference's (task, L, nu, lambda); none otherwise. erm_inf: ERM extrapolated to D = inf
// (markers, compared with the 1RSB point at the same alpha); 1rsb: the 1RSB fixed point (rs_stable
// = 1 where it converged, 0 where it did not: never drawn as a curve there).
std::vector<Row> reference_rows(const FigureRun& run, const Params& p, std::string& shown) {
  const auto words = split_ws(run.args);
  if (words.size() != 2 || (words[1] != "erm_inf" && words[1] != "1rsb"))
    throw std::logic_error("figures: bad reference run '" + run.args + "'");
  const slr::mc::ReferenceSetting s = slr::mc::reference_setting();
  auto is = [&](const char* key, double v) {
    double x;
    return p.count(key) && to_number(p.at(key), x) && x == v;
  };
  std::vector<Row> rows;
  shown = words[1] == "erm_inf"
              ? "reference erm_inf: data/validation/erm_inf/{linear,softmax}_L3.csv, D = inf rows (compiled in)"
              : "reference 1rsb: data/validation/erm_inf/rsb/*.csv (compiled in)";
  if (!(p.count("task") && p.at("task") == s.task && is("L", s.L) && is("nu", s.nu) && is("lambda", s.lambda)))
    return rows;
  if (words[1] == "erm_inf") {
    for (const auto& e : slr::mc::erm_inf_reference()) {
      Row r;
      r.source = "erm_inf";
      r.series = e.activation;
      r.x = e.alpha;
      r.y = e.test_error.value;
      r.se = e.test_error.se;
      r.lambda = fmt(s.lambda);
      r.alpha = fmt(e.alpha);
      r.ref = run.ref;
      rows.push_back(r);
    }
  } else {
    for (const auto& e : slr::mc::rsb_reference()) {
      Row r;
      r.source = "rsb";
      r.series = e.activation;
      r.x = e.alpha;
      r.y = e.test_error;
      r.se = e.test_error_se;
      r.lambda = fmt(s.lambda);
      r.stable = e.converged ? 1 : 0;
      rows.push_back(r);
    }
  }
  return rows;
}

}  // namespace

std::vector<std::string> split_ws(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  std::string t;
  while (in >> t) out.push_back(t);
  return out;
}

PanelRuns run_panel(const Panel& panel, const Params& params, const std::string& tmpdir, bool verbose) {
  std::vector<Row> rows, gaps;
  std::map<std::vector<std::string>, std::string> done;  // argv -> CSV (a run shared by two entries runs once)
  std::vector<std::string> commands;
  for (const auto& run : panel.runs) {
    if (run.args.rfind("reference ", 0) == 0) {  // compiled-in data, no run
      std::string shown;
      for (const auto& r : reference_rows(run, params, shown)) rows.push_back(r);
      commands.push_back(shown);
      continue;
    }
    std::vector<std::string> eaches{""};
    const std::string ek = each_key(run.args);
    if (!ek.empty()) {
      auto it = params.find(ek);
      if (it == params.end()) throw std::logic_error("figures: no list '" + ek + "' in panel " + panel.name);
      eaches.clear();
      for (double v : parse_sweep(it->second, ek)) eaches.push_back(fmt(v));
    }
    for (const auto& each : eaches) {
      std::vector<std::string> argv{"saddle"};
      for (const auto& tok : split_ws(run.args)) argv.push_back(substitute(tok, params, each));
      if (argv.size() > 1 && argv[1] != "mc") argv.push_back("--no-progress");
      std::string csv;
      auto it = done.find(argv);
      if (it != done.end()) {
        csv = it->second;
      } else {
        csv = tmpdir + "/run_" + std::to_string(done.size()) + ".csv";
        std::vector<std::string> full = argv;
        full.push_back("--out");
        full.push_back(csv);
        std::string shown;
        for (std::size_t i = 0; i < argv.size(); ++i) shown += (i ? " " : "") + argv[i];
        if (verbose) std::cerr << "[figures] " << panel.name << ": " << shown << "\n";
        const std::string log = tmpdir + "/run_" + std::to_string(done.size()) + ".log";
        const auto r0 = std::chrono::steady_clock::now();
        int rc = spawn_wait("/proc/self/exe", full, log, false);
        if (verbose)
          std::fprintf(stderr, "[figures]   %.1f s\n",
                     std::chrono::duration<double>(std::chrono::steady_clock::now() - r0).count());
        if (rc != 0) {
          // One line: the child's own error line when it has one (bad input: exit 2, passed on).
          std::string why = tail_of(log, 600), line;
          std::istringstream lines(why);
          for (std::string l; std::getline(lines, l);)
            if (l.rfind("saddle: error: ", 0) == 0) line = l.substr(15);
          if (line.empty()) {
            for (char& ch : why)
              if (ch == '\n' || ch == '\r') ch = ' ';
            line = why;
          }
          const std::string msg = "figures: panel " + panel.name + ": '" + shown + "' failed (exit " +
                                  std::to_string(rc) + "): " + line;
          if (rc == 2) throw InputError(msg);
          throw std::runtime_error(msg);
        }
        done[argv] = csv;
        commands.push_back(shown);
      }
      const CsvData d = read_csv(csv);
      // x spec: "col", "col*FACTOR" (factor may be a {param}) or "@each".
      std::string xs = substitute(run.x, params, each);
      double factor = 1.0;
      if (xs.find('*') != std::string::npos) {
        if (!to_number(xs.substr(xs.find('*') + 1), factor)) throw std::logic_error("figures: bad x spec " + run.x);
        xs = xs.substr(0, xs.find('*'));
      }
      double each_x = NAN;
      if (xs == "@each" && !to_number(each, each_x)) throw std::logic_error("figures: @each needs numbers");
      const int xc = xs == "@each" ? -1 : d.col(xs);
      const int yc = d.col(run.y);
      const int sc = run.se.empty() ? -1 : d.col(run.se);
      if ((xs != "@each" && xc < 0) || yc < 0 || (!run.se.empty() && sc < 0))
        throw std::logic_error("figures: panel " + panel.name + ": column missing (" + run.x + ", " + run.y + ", " +
                               run.se + ")");
      const int conv = d.col("converged"), stab = d.col("rs_stability"), lam = d.col("lambda"),
                alp = d.col("alpha");
      // Row filter "col=value;col=value".
      std::vector<std::pair<int, std::string>> filters;
      if (!run.filter.empty())
        for (const auto& f : split(run.filter, ';')) {
          auto eq = f.find('=');
          int c = d.col(f.substr(0, eq));
          if (c < 0) throw std::logic_error("figures: filter column missing: " + f);
          filters.emplace_back(c, substitute(f.substr(eq + 1), params, each));
        }
      std::vector<Row> these, gaps_these;
      for (const auto& r : d.rows) {
        bool keep = true;
        for (const auto& f : filters) keep = keep && r[f.first] == f.second;
        if (!keep) continue;
        Row row;
        row.source = run.source;
        row.series = label_for(run.series, d, r, params, each);
        std::replace(row.series.begin(), row.series.end(), ',', ';');  // the CSV has no quoting
        double xv, yv;
        if (xc >= 0 ? !to_number(r[xc], xv) : !std::isfinite(xv = each_x)) continue;
        row.x = xv * factor;
        if (lam >= 0) row.lambda = r[lam];
        // A non-converged theory point is not drawn (a gap of the curve); a Monte Carlo row counts
        // its converged seeds.
        if ((conv >= 0 && run.source != "mc" && r[conv] == "0") || !to_number(r[yc], yv)) {
          if (run.source != "mc") gaps_these.push_back(row);
          continue;
        }
        row.y = yv;
        double sv;
        if (sc >= 0 && to_number(r[sc], sv)) row.se = sv;
        if (alp >= 0 && run.source != "theory") row.alpha = r[alp];
        // The one RS verdict of the row (the replicon and the jump term, rs_verdict).
        if (stab >= 0) row.stable = r[stab] == "unstable" ? 0 : 1;
        row.ref = run.ref;
        these.push_back(row);
      }
      // pick=min: per (series, x), keep the row with the lowest y (e.g. the best lambda of a grid).
      if (run.pick == "min") {
        std::map<std::pair<std::string, double>, Row> best;
        for (const auto& r : these) {
          auto key = std::make_pair(r.series, r.x);
          auto b = best.find(key);
          if (b == best.end() || r.y < b->second.y) best[key] = r;
        }
        these.clear();
        for (const auto& kv : best) these.push_back(kv.second);
        // A gap only where no row of the grid converged at that (series, x).
        gaps_these.erase(std::remove_if(gaps_these.begin(), gaps_these.end(),
                                        [&](const Row& g) { return best.count(std::make_pair(g.series, g.x)) > 0; }),
                         gaps_these.end());
        for (Row& g : gaps_these) g.lambda.clear();
      }
      gaps.insert(gaps.end(), gaps_these.begin(), gaps_these.end());
      // The same (series, x) from a shared run (e.g. bayes_risk repeated per activation): once.
      for (const auto& r : these) {
        bool dup = false;
        for (const auto& o : rows)
          dup = dup || (o.source == r.source && o.series == r.series && o.x == r.x && o.lambda == r.lambda &&
                        o.alpha == r.alpha);
        if (!dup) rows.push_back(r);
      }
    }
  }
  return {rows, commands, gaps};
}

}  // namespace figures
}  // namespace saddle
