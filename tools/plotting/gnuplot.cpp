// The one gnuplot driver (see gnuplot.hpp): a Figure as data files and a script, gnuplot spawned
// with an argv array, the PNG opened here and given to gnuplot as its stdout.
#include "tools/plotting/gnuplot.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "solver/interrupt.hpp"
#include "tools/cli/cli_common.hpp"
#include "tools/runner/file_io.hpp"

extern char** environ;

namespace saddle {
namespace gnuplot {
namespace {

// Temporary files of one figure, removed when it goes out of scope (also on errors).
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
    if (fd < 0)
      throw InputError("plot: cannot create a temporary file '" + pattern + "' (TMPDIR): " + std::strerror(errno));
    ::close(fd);
    paths_.emplace_back(buf.data());
    return paths_.back();
  }

 private:
  std::vector<std::string> paths_;
};

// Runs `gnuplot script` with stdout into a temporary file beside `png` (tools/runner/file_io.hpp),
// renamed onto it when gnuplot succeeded, and stderr into a temporary file; throws InputError
// with gnuplot's first message if it fails or writes nothing, or when it runs longer than
// `timeout` seconds (it is killed). A failure leaves `png` as it was.
void run_gnuplot(const std::string& script_path, const std::string& png, TempFiles& tmp, double timeout) {
  file_io::OutputFile out(png, "plot");
  const std::string err_path = tmp.make("stderr");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out.fd(), 1);
  posix_spawn_file_actions_addopen(&fa, 2, err_path.c_str(), O_WRONLY | O_TRUNC, 0);
  std::string arg0 = "gnuplot", arg1 = script_path;
  char* argv[] = {&arg0[0], &arg1[0], nullptr};
  pid_t pid = 0;
  // Its own process group, so that a time limit stops whatever it started too.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);
  const int spawn_rc = ::posix_spawnp(&pid, "gnuplot", &fa, &attr, argv, environ);
  posix_spawnattr_destroy(&attr);
  posix_spawn_file_actions_destroy(&fa);
  if (spawn_rc != 0)
    throw InputError("plot: cannot run gnuplot (install gnuplot-nox): " + std::string(std::strerror(spawn_rc)));
  // Wait, at most `timeout` seconds (and not past an interrupt): then the child is killed.
  int status = 0;
  bool killed = false;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout);
  for (long nap_us = 500;;) {
    const pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) break;
    if (r < 0 && errno != EINTR) break;
    if (std::chrono::steady_clock::now() >= deadline || interrupt_requested()) {
      ::kill(-pid, SIGKILL);  // the group (gnuplot and anything it started)
      ::kill(pid, SIGKILL);
      while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      killed = true;
      break;
    }
    ::usleep(static_cast<useconds_t>(nap_us));
    nap_us = std::min(nap_us * 2, 20000L);
  }
  if (killed && interrupt_requested()) throw Interrupted("interrupted while gnuplot was drawing '" + png + "'");
  if (killed) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%g", timeout);
    throw InputError("plot: gnuplot did not finish '" + png + "' within " + buf +
                     " s (--plot-timeout) and was stopped");
  }
  const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0 && out.size() > 0;
  if (!ok) {
    std::ifstream ef(err_path);
    std::string line, msg;
    while (std::getline(ef, line) && msg.size() < 200)
      if (line.find_first_not_of(" \t^") != std::string::npos) msg += (msg.empty() ? "" : " | ") + line;
    throw InputError("plot: gnuplot failed writing '" + png + "'" + (msg.empty() ? "" : ": " + msg));
  }
  out.commit();
}

std::string label(const Label& l) { return quoted(l.text) + (l.enhanced ? "" : " noenhanced"); }

const char* kPalette[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e",
                          "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"};

std::string color_rgb(int c) { return c < 0 ? "black" : kPalette[c % 10]; }
std::string color(int c) { return " lc rgb '" + color_rgb(c) + "'"; }

// Simulation markers are smaller than the caps of their error bars (`set errorbars` in draw), so
// a bar shorter than the marker still shows its extent.
std::string style(Style s) {
  switch (s) {
    case Style::Line: return "with lines lw 2";
    case Style::LinePoints: return "with linespoints pt 7 ps 0.4 lw 2";
    case Style::DashedLine: return "with lines dt 2 lw 2";
    case Style::OpenCircles: return "with points pt 6 ps 1.1";
    case Style::Crosses: return "with points pt 2 ps 1.6";
    case Style::ErrorBars: return "with yerrorbars pt 7 ps 0.7 lw 1.5";
    case Style::DashedLinePoints: return "with linespoints dt 2 lw 2 pt 9 ps 1.1";
    case Style::OpenTriangles: return "with points pt 8 ps 1.4";
    case Style::SquareErrorBars: return "with yerrorbars pt 5 ps 0.9 lw 2";
    case Style::Dashes: return "with vectors nohead lw 2";
    case Style::Points: return "with points pt 7 ps 0.8";
  }
  return "with lines";
}

bool has_se(Style s) { return s == Style::ErrorBars || s == Style::SquareErrorBars; }

// A value for a label: 3 significant digits.
std::string short_number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

void write_number(std::ostream& f, double v) {
  if (std::isnan(v)) f << "NaN";
  else f << v;
}

}  // namespace

std::string quoted(const std::string& text) {
  // '' stands for a quote inside a single-quoted string and nothing else is special there;
  // control characters (a newline would end the command) become spaces.
  std::string out = "'";
  for (char ch : text) {
    const unsigned char u = static_cast<unsigned char>(ch);
    if (ch == '\'') out += "''";
    else if (u < 0x20 || u == 0x7f) out += ' ';
    else out += ch;
  }
  return out + "'";
}

void draw(const Figure& fig, const std::string& png, double timeout) {
  TempFiles tmp;
  std::ostringstream gp;
  gp << "set terminal pngcairo size " << fig.width << "," << fig.height << " enhanced font 'Sans,13'\n";
  gp << "set output\n";  // stdout, which run_gnuplot points at the PNG
  gp << "set datafile separator ','\nset grid\nset errorbars 2\n";
  gp << "set style textbox opaque noborder margins 1,1\n";
  gp << (fig.key == Key::Below ? "set key below left maxcols 3 font ',10' spacing 1.1 height 1\n"
                               : "set key inside top right font ',11' spacing 1.1 opaque\n");
  if (fig.pad && !fig.heat) {
    if (!fig.logx) gp << "set autoscale xfix\n";
    if (!fig.logy) gp << "set autoscale yfix\n";
    gp << "set offsets " << (fig.logx ? "0, 0" : "graph 0.03, graph 0.03") << ", "
       << (fig.logy ? "0, 0" : "graph 0.05, graph 0.05") << "\n";
  }
  if (!fig.title.empty()) gp << "set title " << quoted(fig.title) << " noenhanced\n";
  gp << "set xlabel " << label(fig.x) << "\n";
  gp << "set ylabel " << label(fig.y) << "\n";
  if (fig.logx) gp << "set logscale x\nset format x '10^{%L}'\n";
  if (fig.logy) gp << "set logscale y\nset format y '10^{%L}'\n";
  gp << "set lmargin 12\n";
  gp.precision(12);
  int next_label = 1;
  for (std::size_t i = 0; i < fig.notes.size(); ++i)
    gp << "set label " << next_label++ << " " << quoted(fig.notes[i]) << " noenhanced at graph 0.02, graph "
       << 0.04 + 0.05 * static_cast<double>(fig.notes.size() - 1 - i) << " left front font ',10' boxed\n";
  if (fig.heat) {
    const HeatMap& h = fig.heat_map;
    if (h.cells.empty()) throw InputError("plot: nothing to draw (no matching rows for the heat map)");
    const std::string path = tmp.make("heat");
    std::ofstream f(path);
    f.precision(12);
    double zmax = 0.0;
    bool blank = false;
    for (std::size_t i = 0; i < h.cells.size(); ++i) {
      const auto& c = h.cells[i];
      if (i > 0 && c[1] != h.cells[i - 1][1]) f << "\n";  // a new row of the grid
      f << c[0] << "," << c[1] << ",";
      write_number(f, c[2]);
      f << "\n";
      if (std::isfinite(c[2])) zmax = std::max(zmax, std::fabs(c[2]));
      else blank = true;
    }
    if (!f) throw InputError("plot: cannot write the temporary data file '" + path + "'");
    f.close();
    gp << "set view map\nset pm3d map interpolate 0,0\nset contour base\nset cntrparam levels auto 10\n"
          "unset key\nset cblabel " << label(h.z) << "\n";
    // Contours black, each labelled with its level (gnuplot places the labels along the line).
    gp << "set cntrlabel onecolor format '%.3g' font ',10' start 5 interval 80\n";
    if (blank) {  // cells without a value show the grey background (pm3d leaves NaN cells out)
      gp << "set object 1 rectangle from graph 0, graph 0 to graph 1, graph 1 behind fillcolor rgb '#b0b0b0' "
            "fillstyle solid 1.0 noborder\n";
    }
    if (h.diverging) {
      // Diverging palette centred on 0, with contour levels symmetric about 0 (0 among them).
      const double m = zmax > 0 ? zmax : 1.0;
      gp << "set palette defined (-1 '#2166ac', 0 'white', 1 '#b2182b')\nset cbrange [-" << m << ":" << m << "]\n";
      const double step = std::pow(10.0, std::floor(std::log10(m / 4.0)));
      const double st = m / step > 40 ? 10 * step : (m / step > 16 ? 5 * step : (m / step > 8 ? 2 * step : step));
      gp << "set cntrparam levels incremental " << -std::floor(m / st) * st << "," << st << "," << m << "\n";
    } else {
      gp << "set palette defined (0 '#440154', 0.25 '#3b528b', 0.5 '#21918c', 0.75 '#5ec962', 1 '#fde725')\n";
    }
    gp << "splot " << quoted(path) << " using 1:2:3 with pm3d notitle, '' using 1:2:3 with lines nosurface "
          "lc rgb 'black' lw 1 notitle, '' using 1:2:3 with labels boxed nosurface notitle\n";
  } else {
    const bool clip = std::isfinite(fig.ymin) || std::isfinite(fig.ymax);
    if (clip) {
      gp << "set yrange [";
      if (std::isfinite(fig.ymin)) gp << fig.ymin;
      else gp << "*";
      gp << ":";
      if (std::isfinite(fig.ymax)) gp << fig.ymax;
      else gp << "*";
      gp << "]\n";
    }
    std::vector<std::string> cmds;
    // A data file of `points` (x, y, third column), a blank line where a NaN x breaks the line.
    auto write_file = [&](const std::vector<std::array<double, 3>>& points) {
      const std::string path = tmp.make("series");
      std::ofstream f(path);
      f.precision(12);
      bool broken = true;
      for (const auto& p : points) {
        if (std::isnan(p[0])) {
          if (!broken) f << "\n";  // one blank line breaks the line
          broken = true;
          continue;
        }
        f << p[0] << "," << p[1] << "," << (std::isfinite(p[2]) ? p[2] : 0.0) << "\n";
        broken = false;
      }
      if (!f) throw InputError("plot: cannot write the temporary data file '" + path + "'");
      return path;
    };
    // Half-width of a short horizontal line: 2% of the x range (a factor on a log axis), wider
    // than the caps of the error bars, so a theory value at a marker stays distinct from it.
    double xlo = INFINITY, xhi = -INFINITY;
    for (const Series& s : fig.series)
      for (const auto& p : s.points)
        if (std::isfinite(p[0]) && (!fig.logx || p[0] > 0)) {
          const double x = fig.logx ? std::log(p[0]) : p[0];
          xlo = std::min(xlo, x);
          xhi = std::max(xhi, x);
        }
    const double half = std::isfinite(xlo) && xhi > xlo ? 0.02 * (xhi - xlo) : 0.05;
    auto dash = [&](double x, double y) -> std::array<double, 3> {  // (x0, y, dx) of the segment
      const double x0 = fig.logx ? x * std::exp(-half) : x - half;
      const double x1 = fig.logx ? x * std::exp(half) : x + half;
      return {x0, y, x1 - x0};
    };
    int arrows = 0;
    for (const Series& s : fig.series) {
      if (s.points.empty()) continue;
      // Values off the axes: not drawn, an arrow at the edge with the value instead.
      std::vector<std::array<double, 3>> pts;
      for (const auto& p : s.points) {
        const bool above = std::isfinite(fig.ymax) && p[1] > fig.ymax;
        const bool below = std::isfinite(fig.ymin) && p[1] < fig.ymin;
        if (!std::isnan(p[0]) && (above || below)) {
          ++arrows;
          const double tip = above ? 0.995 : 0.005, tail = above ? 0.9 : 0.1, text = above ? 0.87 : 0.13;
          gp << "set arrow " << arrows << " from first " << p[0] << ", graph " << tail << " to first " << p[0]
             << ", graph " << tip << " head filled size screen 0.012,25 lw 2" << color(s.color) << " front\n";
          gp << "set label " << next_label++ << " " << quoted(short_number(p[1])) << " at first " << p[0]
             << ", graph " << text << " center front font ',10' tc rgb '" << color_rgb(s.color) << "' boxed\n";
          pts.push_back({NAN, NAN, NAN});
          continue;
        }
        pts.push_back(p);
      }
      const std::string title = s.title.empty() ? " notitle" : " title " + quoted(s.title) + " noenhanced";
      if (s.style == Style::Dashes) {
        std::vector<std::array<double, 3>> segs;
        for (const auto& p : pts)
          if (!std::isnan(p[0])) segs.push_back(dash(p[0], p[1]));
        if (segs.empty()) continue;
        cmds.push_back(quoted(write_file(segs)) + " using 1:2:3:(0) " + style(s.style) + color(s.color) + title);
        continue;
      }
      bool any = false;
      for (const auto& p : pts) any = any || !std::isnan(p[0]);
      if (!any) continue;
      cmds.push_back(quoted(write_file(pts)) + (has_se(s.style) ? " using 1:2:3 " : " using 1:2 ") + style(s.style) +
                     color(s.color) + title);
      // A lone point of a line (between breaks) is a short horizontal line of the same style.
      if (s.style == Style::Line || s.style == Style::DashedLine) {
        std::vector<std::array<double, 3>> lone;
        for (std::size_t i = 0; i < pts.size(); ++i) {
          if (std::isnan(pts[i][0])) continue;
          const bool prev = i > 0 && !std::isnan(pts[i - 1][0]);
          const bool next = i + 1 < pts.size() && !std::isnan(pts[i + 1][0]);
          if (!prev && !next) lone.push_back(dash(pts[i][0], pts[i][1]));
        }
        if (!lone.empty())
          cmds.push_back(quoted(write_file(lone)) + " using 1:2:3:(0) with vectors nohead lw 3" +
                         (s.style == Style::DashedLine ? " dt 2" : "") + color(s.color) + " notitle");
      }
    }
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
  run_gnuplot(script_path, png, tmp, timeout);
}

void check_timeout(double timeout, const std::string& what) {
  if (!(timeout > 0.0 && timeout <= kMaxTimeout))
    throw InputError(what + ": must be in (0, " + std::to_string(static_cast<int>(kMaxTimeout)) + "] seconds");
}

void check_ready() {
  // gnuplot on PATH, as posix_spawnp looks for it (an unset PATH: the system default).
  const char* env = std::getenv("PATH");
  const std::string path = env ? env : "/usr/local/bin:/bin:/usr/bin";
  bool found = false;
  for (const std::string& dir : split(path, ':')) {
    const std::string f = (dir.empty() ? "." : dir) + "/gnuplot";
    struct stat st {};
    if (::stat(f.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(f.c_str(), X_OK) == 0) {
      found = true;
      break;
    }
  }
  if (!found) throw InputError("plot: gnuplot is not installed or not on PATH (install gnuplot-nox)");
  TempFiles probe;  // its data and script go to $TMPDIR (or /tmp): usable?
  probe.make("probe");
}

}  // namespace gnuplot
}  // namespace saddle
