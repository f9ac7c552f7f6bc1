// gnuplot figures from saddle CSVs (see tools/plot.hpp). The data go to temporary files and a
// generated script file is run by gnuplot (spawned directly, no shell); nothing here depends on a
// model. Text from the user or the CSV (titles, column names, category values) reaches the script
// only inside single-quoted gnuplot strings, escaped by gp_string(); the PNG path never reaches
// gnuplot at all: saddle opens the file itself and gnuplot writes the image to its stdout.
#include "tools/plot.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "tools/cli_common.hpp"

extern char** environ;

namespace saddle {
namespace {

// Parameters a sweep may run over, in the order they are preferred as the x axis.
const std::vector<std::string> kSweepNames{"alpha", "gamma", "nu", "L", "c", "lambda", "snr", "delta",
                                           "n", "D", "p"};
const std::vector<std::string> kDefaultY{"test_error", "risk", "error", "mean", "train_error"};
const std::vector<std::string> kReferences{"bayes_risk", "error_ridge"};

bool is_number(const std::string& s, double& v) {
  char* e = nullptr;
  v = std::strtod(s.c_str(), &e);
  return !s.empty() && *e == '\0';
}

// A gnuplot single-quoted string holding `text` literally: '' stands for a quote inside it, and
// nothing else is special there; control characters (a newline would end the command) become
// spaces.
std::string gp_string(const std::string& text) {
  std::string out = "'";
  for (char ch : text) {
    const unsigned char u = static_cast<unsigned char>(ch);
    if (ch == '\'') out += "''";
    else if (u < 0x20 || u == 0x7f) out += ' ';
    else out += ch;
  }
  return out + "'";
}

// Temporary files of one plot, removed when it goes out of scope (also on errors).
class TempFiles {
 public:
  TempFiles() = default;
  TempFiles(const TempFiles&) = delete;
  TempFiles& operator=(const TempFiles&) = delete;
  ~TempFiles() {
    for (const auto& p : paths_) ::unlink(p.c_str());
  }
  // A new empty file (mkstemp: private, unpredictable name) in $TMPDIR or /tmp.
  std::string make(const std::string& tag) {
    const char* dir = std::getenv("TMPDIR");
    std::string pattern = std::string(dir && *dir ? dir : "/tmp") + "/saddle_plot_" + tag + "_XXXXXX";
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    const int fd = ::mkstemp(buf.data());
    if (fd < 0) throw InputError("plot: cannot create a temporary file in '" + pattern + "'");
    ::close(fd);
    paths_.emplace_back(buf.data());
    return paths_.back();
  }

 private:
  std::vector<std::string> paths_;
};

// Runs `gnuplot script` with stdout into `png` (opened here) and stderr into a temporary file;
// throws InputError with gnuplot's first message if it fails or writes nothing. A failed PNG is
// removed.
void run_gnuplot(const std::string& script_path, const std::string& png, TempFiles& tmp) {
  const int out_fd = ::open(png.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0666);
  if (out_fd < 0)
    throw InputError("plot: cannot write '" + png + "': " + std::strerror(errno));
  const std::string err_path = tmp.make("stderr");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
  posix_spawn_file_actions_addopen(&fa, 2, err_path.c_str(), O_WRONLY | O_TRUNC, 0);
  std::string arg0 = "gnuplot", arg1 = script_path;
  char* argv[] = {&arg0[0], &arg1[0], nullptr};
  pid_t pid = 0;
  const int spawn_rc = ::posix_spawnp(&pid, "gnuplot", &fa, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  int status = 0;
  if (spawn_rc == 0)
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  struct stat st {};
  const bool wrote = ::fstat(out_fd, &st) == 0 && st.st_size > 0;
  ::close(out_fd);
  if (spawn_rc != 0) {
    ::unlink(png.c_str());
    throw InputError("plot: cannot run gnuplot (install gnuplot-nox): " + std::string(std::strerror(spawn_rc)));
  }
  const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0 && wrote;
  if (!ok) {
    ::unlink(png.c_str());
    std::ifstream ef(err_path);
    std::string line, msg;
    while (std::getline(ef, line) && msg.size() < 200)
      if (line.find_first_not_of(" \t^") != std::string::npos) msg += (msg.empty() ? "" : " | ") + line;
    throw InputError("plot: gnuplot failed writing '" + png + "'" + (msg.empty() ? "" : ": " + msg));
  }
}

// The axis label of a column, as gnuplot text: known columns get an enhanced-text label, any
// other name (from the CSV) is shown literally.
std::string label_cmd(const std::string& col);

std::string label_of(const std::string& col) {
  static const std::map<std::string, std::string> names{
      {"alpha", "sample ratio {/Symbol a} = N/D"}, {"lambda", "ridge {/Symbol l}"},
      {"nu", "signal strength {/Symbol n}"},      {"gamma", "ridge {/Symbol g}"},
      {"c", "c = p/n"},                           {"L", "sequence length L"},
      {"snr", "||{/Symbol m}||^2"},               {"delta", "noise variance {/Symbol D}"},
      {"test_error", "test error (excess)"},       {"risk", "population risk"},
      {"error", "interpolation error"},           {"train_error", "training error"}};
  auto it = names.find(col);
  return it == names.end() ? col : it->second;
}

std::string label_cmd(const std::string& col) {
  const std::string l = label_of(col);
  return gp_string(l) + (l == col ? " noenhanced" : "");
}

}  // namespace

std::string sweep_header(const std::vector<std::string>& columns) {
  std::string s = "# sweep:";
  for (std::size_t i = 0; i < columns.size(); ++i) s += (i ? ", " : " ") + columns[i];
  return s;
}

std::vector<std::string> swept_columns(const std::vector<std::pair<std::string, std::size_t>>& counts) {
  std::vector<std::string> out;
  for (const auto& c : counts)
    if (c.second > 1) out.push_back(c.first);
  return out;
}

int CsvData::col(const std::string& name) const {
  for (std::size_t i = 0; i < columns.size(); ++i)
    if (columns[i] == name) return static_cast<int>(i);
  return -1;
}

CsvData read_csv(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw InputError("cannot read '" + path + "'");
  CsvData d;
  std::string line;
  while (std::getline(f, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    if (line[0] == '#') {
      if (d.columns.empty()) d.comments.push_back(line);
      continue;
    }
    auto fields = split(line, ',');
    if (d.columns.empty()) {
      d.columns = fields;
      continue;
    }
    if (fields.size() != d.columns.size())
      throw InputError("'" + path + "' is not a saddle CSV: a row has " + std::to_string(fields.size()) +
                       " fields, the header " + std::to_string(d.columns.size()));
    d.rows.push_back(fields);
  }
  if (d.comments.empty() || d.comments[0].rfind("# saddle ", 0) != 0 || d.columns.empty())
    throw InputError("'" + path + "' is not a saddle CSV (no '# saddle' header line)");
  return d;
}

void plot_csv(const CsvData& data, const PlotHints& hints_in, const PlotOptions& opt, const std::string& png) {
  if (data.rows.empty()) throw InputError("plot: no rows to plot");
  PlotHints hints = hints_in;
  if (hints.flag_column.empty() && data.col("rs_stability") >= 0) {  // `saddle plot` of slr erm
    hints.flag_column = "rs_stability";
    hints.flag_value = "unstable";
    hints.flag_label = "RS unstable";
  }
  auto need = [&](const std::string& c) {
    if (data.col(c) < 0) throw InputError("plot: no column '" + c + "' in the data");
    return data.col(c);
  };
  auto distinct = [&](int c) {
    std::set<std::string> s;
    for (const auto& r : data.rows) s.insert(r[c]);
    return s.size();
  };
  // Axes: swept numeric parameters with more than one value.
  std::vector<std::string> swept;
  for (const auto& n : hints.params.empty() ? kSweepNames : hints.params)
    if (data.col(n) >= 0 && distinct(data.col(n)) > 1) swept.push_back(n);
  std::sort(swept.begin(), swept.end(), [&](const std::string& a, const std::string& b) {
    return distinct(data.col(a)) > distinct(data.col(b));
  });
  std::string x = !opt.x.empty() ? opt.x : (swept.empty() ? data.columns[0] : swept[0]);
  const int xc = need(x);
  std::string by = opt.by;
  // Categorical splits (activation, task, ...) and the diff option.
  std::string diff_col, diff_a, diff_b;
  if (!opt.diff.empty()) {
    auto colon = opt.diff.find(':'), dash = opt.diff.find('-', colon == std::string::npos ? 0 : colon);
    if (colon == std::string::npos || dash == std::string::npos)
      throw InputError("--plot-diff: expected COL:A-B, got '" + opt.diff + "'");
    diff_col = opt.diff.substr(0, colon);
    diff_a = opt.diff.substr(colon + 1, dash - colon - 1);
    diff_b = opt.diff.substr(dash + 1);
    need(diff_col);
  }
  std::vector<std::string> ycols;
  if (!opt.y.empty()) {
    ycols = split(opt.y, ',');
  } else if (!hints.y.empty()) {
    ycols = hints.y;
  } else {
    for (const auto& y : kDefaultY)
      if (data.col(y) >= 0) {
        ycols.push_back(y);
        break;
      }
  }
  if (ycols.empty()) throw InputError("plot: say which column to plot (--plot-y)");
  for (const auto& y : ycols) need(y);
  const bool heat = !opt.z.empty() || !by.empty() || !diff_col.empty() ||
                    (swept.size() >= 2 && distinct(data.col(swept[1])) >= 5);
  if (heat && by.empty()) {
    for (const auto& s : swept)
      if (s != x) {
        by = s;
        break;
      }
    if (by.empty()) throw InputError("plot: a heat map needs a second swept parameter (--plot-by)");
  }
  auto is_log = [&](const std::string& c) {
    if (std::find(hints.log_axes.begin(), hints.log_axes.end(), c) != hints.log_axes.end()) return true;
    double lo = INFINITY, hi = 0, v;
    for (const auto& r : data.rows) {
      if (!is_number(r[data.col(c)], v) || v <= 0) return false;
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    return hi / lo >= 100.0;
  };
  TempFiles tmp;
  std::ostringstream gp;
  gp << "set terminal pngcairo size 1000,700 enhanced font 'Sans,13'\n";
  gp << "set output\n";  // stdout, which run_gnuplot points at the PNG
  gp << "set datafile separator ','\nset key inside top right font ',11' spacing 1.1\nset grid\n";
  gp << "set xlabel " << label_cmd(x) << "\n";
  if (!opt.title.empty()) gp << "set title " << gp_string(opt.title) << " noenhanced\n";
  if (is_log(x)) gp << "set logscale x\nset format x '10^{%L}'\n";
  gp << "set lmargin 12\n";

  if (heat) {
    const int bc = need(by);
    std::string z = !opt.z.empty() ? opt.z : ycols[0];
    // z may be a difference of two columns, "colA-colB" (e.g. error-error_ridge).
    int zc = data.col(z), zc2 = -1;
    if (zc < 0 && z.find('-') != std::string::npos) {
      zc = need(z.substr(0, z.find('-')));
      zc2 = need(z.substr(z.find('-') + 1));
    } else {
      zc = need(z);
    }
    // Grid (by, x) -> z, possibly a difference of two categories.
    std::map<std::pair<double, double>, double> A, B;
    const int conv = data.col("converged");
    const int flag = hints.flag_column.empty() ? -1 : data.col(hints.flag_column);
    for (const auto& r : data.rows) {
      double xv, bv, zv;
      if (!is_number(r[xc], xv) || !is_number(r[bc], bv) || !is_number(r[zc], zv)) continue;
      if (conv >= 0 && r[conv] == "0") zv = NAN;  // unconverged points are left blank
      if (flag >= 0 && r[flag] == hints.flag_value) zv = NAN;  // so are flagged ones
      double z2;
      if (zc2 >= 0) {
        if (!is_number(r[zc2], z2)) continue;
        zv -= z2;
      }
      if (!diff_col.empty()) {
        const std::string& cat = r[data.col(diff_col)];
        if (cat == diff_a) A[{bv, xv}] = zv;
        else if (cat == diff_b) B[{bv, xv}] = zv;
      } else {
        A[{bv, xv}] = zv;
      }
    }
    std::string path = tmp.make("heat");
    std::ofstream f(path);
    double last_b = NAN, zmax = 0.0;
    std::size_t n = 0;
    for (const auto& kv : A) {
      double zv = kv.second;
      if (!diff_col.empty()) {
        auto it = B.find(kv.first);
        if (it == B.end()) continue;
        zv -= it->second;
      }
      if (!std::isnan(last_b) && kv.first.first != last_b) f << "\n";
      last_b = kv.first.first;
      if (std::isnan(zv)) {
        f << kv.first.second << "," << kv.first.first << ",NaN\n";
      } else {
        f << kv.first.second << "," << kv.first.first << "," << zv << "\n";
        zmax = std::max(zmax, std::fabs(zv));
      }
      ++n;
    }
    f.close();
    if (n == 0) throw InputError("plot: nothing to draw (no matching rows for the heat map)");
    std::string zlabel = diff_col.empty() ? label_of(z) : z + " (" + diff_a + " - " + diff_b + ")";
    if (zc2 >= 0) zlabel = data.columns[zc] + " - " + data.columns[zc2];
    gp << "set ylabel " << label_cmd(by) << "\n";
    if (is_log(by)) gp << "set logscale y\nset format y '10^{%L}'\n";
    gp << "set view map\nset pm3d map interpolate 0,0\nset contour base\nset cntrparam levels auto 10\n"
          "unset key\nset cblabel " << gp_string(zlabel) << " noenhanced\n";
    if (!diff_col.empty() || zc2 >= 0) {
      // Diverging palette centred on 0, and the zero contour drawn thick.
      const double m = zmax > 0 ? zmax : 1.0;
      gp << "set palette defined (-1 'blue', 0 'white', 1 'red')\nset cbrange [-" << m << ":" << m << "]\n";
      // Contour levels symmetric about 0, with 0 itself (where the sign changes) among them.
      const double step = std::pow(10.0, std::floor(std::log10(m / 4.0)));
      const double st = m / step > 40 ? 10 * step : (m / step > 16 ? 5 * step : (m / step > 8 ? 2 * step : step));
      gp << "set cntrparam levels incremental " << -std::floor(m / st) * st << "," << st << "," << m << "\n";
    }
    gp << "splot " << gp_string(path) << " using 1:2:3 with pm3d, '' using 1:2:3 with lines nosurface lc rgb 'black'\n";
  } else {
    // Curves: one per combination of the other swept parameters and categorical columns.
    std::vector<int> group_cols;
    for (const auto& s : swept)
      if (s != x) group_cols.push_back(data.col(s));
    for (std::size_t c = 0; c < data.columns.size(); ++c) {
      double v;
      const std::string& name = data.columns[c];
      if (name == "source" || static_cast<int>(c) == xc || name == hints.flag_column) continue;
      if (std::find(group_cols.begin(), group_cols.end(), static_cast<int>(c)) != group_cols.end()) continue;
      if (!is_number(data.rows[0][c], v) && distinct(static_cast<int>(c)) > 1 && distinct(static_cast<int>(c)) < 12 &&
          name.find("_se") == std::string::npos && name != "reason")
        group_cols.push_back(static_cast<int>(c));
    }
    const int src = data.col("source");
    gp << "set ylabel " << (ycols.size() == 1 ? label_cmd(ycols[0]) : std::string("'value'")) << "\n";
    std::vector<std::string> refs;
    for (const auto& r : kReferences)
      if (data.col(r) >= 0) refs.push_back(r);
    for (const auto& r : hints.references)
      if (data.col(r) >= 0 && std::find(refs.begin(), refs.end(), r) == refs.end()) refs.push_back(r);
    std::map<std::string, std::vector<const std::vector<std::string>*>> groups;
    for (const auto& r : data.rows) {
      std::string key;
      for (int g : group_cols) key += (key.empty() ? "" : ", ") + data.columns[g] + "=" + r[g];
      groups[key].push_back(&r);
    }
    std::vector<std::string> cmds;
    std::set<std::string> drawn_refs;
    std::vector<std::string> ref_cmds;
    int color = 1;
    for (const auto& kv : groups) {
      auto rows = kv.second;
      std::sort(rows.begin(), rows.end(), [&](auto a, auto b) {
        return std::strtod((*a)[xc].c_str(), nullptr) < std::strtod((*b)[xc].c_str(), nullptr);
      });
      auto emit = [&](const std::string& col, bool mc, const std::string& title, const std::string& style) {
        const int yc = data.col(col);
        int se = -1;
        for (const std::string& cand : {col + "_se", std::string("se")})
          if (se < 0) se = data.col(cand);
        std::string path = tmp.make("curve"), fpath = tmp.make("flagged");
        std::ofstream f(path), ff(fpath);
        const int flag = hints.flag_column.empty() ? -1 : data.col(hints.flag_column);
        std::size_t n = 0, nf = 0;
        for (auto r : rows) {
          if (src >= 0 && ((*r)[src] == "mc") != mc) continue;
          if (data.col("converged") >= 0 && (*r)[data.col("converged")] == "0") continue;  // not drawn
          double xv, yv, sv = 0;
          if (!is_number((*r)[xc], xv) || !is_number((*r)[yc], yv)) continue;
          if (se >= 0) is_number((*r)[se], sv);
          if (!mc && flag >= 0 && (*r)[flag] == hints.flag_value) {
            ff << xv << "," << yv << "\n";
            f << "\n";  // a blank line breaks the theory line
            ++nf;
            continue;
          }
          f << xv << "," << yv << "," << sv << "\n";
          ++n;
        }
        if (nf > 0)
          cmds.push_back(gp_string(fpath) + " using 1:2 with points pt 6 ps 1.2 lc " + std::to_string(color) +
                         " title " + gp_string(title + " (" + hints.flag_label + ")") + " noenhanced");
        if (n == 0) return;
        if (mc)
          cmds.push_back(gp_string(path) + " using 1:2:3 with yerrorbars pt 7 ps 0.8 lc " + std::to_string(color) +
                         " title " + gp_string(title + " (MC)") + " noenhanced");
        else
          cmds.push_back(gp_string(path) + " using 1:2 with " + style +
                         (style.find(" lc ") == std::string::npos ? " lc " + std::to_string(color) : "") +
                         " title " + gp_string(title) + " noenhanced");
      };
      for (const auto& y : ycols) {
        std::string t = (ycols.size() > 1 ? y + (kv.first.empty() ? "" : ", ") : "") + kv.first;
        if (t.empty()) t = y;
        emit(y, false, t, "lines lw 2");
        if (src >= 0) emit(y, true, t, "");
        ++color;
      }
      // A reference (Bayes risk, ridge baseline) does not depend on the categorical columns:
      // draw it once per combination of the swept parameters only.
      std::string ref_key;
      for (int g : group_cols) {
        double v;
        if (is_number((*rows[0])[g], v)) ref_key += (ref_key.empty() ? "" : ", ") + data.columns[g] + "=" + (*rows[0])[g];
      }
      for (const auto& ref : refs) {
        if (!drawn_refs.insert(ref + "|" + ref_key).second) continue;
        std::swap(cmds, ref_cmds);  // references go last, on top of the curves
        emit(ref, false, ref + (ref_key.empty() ? "" : " (" + ref_key + ")"), "lines dt 2 lw 2 lc rgb 'black'");
        std::swap(cmds, ref_cmds);
      }
    }
    cmds.insert(cmds.end(), ref_cmds.begin(), ref_cmds.end());
    if (cmds.empty()) throw InputError("plot: nothing to draw");
    gp << "plot ";
    for (std::size_t i = 0; i < cmds.size(); ++i) gp << (i ? ", \\\n     " : "") << cmds[i];
    gp << "\n";
  }
  const std::string script_path = tmp.make("script");
  {
    std::ofstream sf(script_path);
    sf << gp.str();
    if (!sf) throw InputError("plot: cannot write the gnuplot script '" + script_path + "'");
  }
  run_gnuplot(script_path, png, tmp);
}

}  // namespace saddle
