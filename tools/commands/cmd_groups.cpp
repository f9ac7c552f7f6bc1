// The `saddle mc` and `saddle validate` command groups. Each model's simulation module adds its
// own child (tools/cmd_mc_*.cpp, tools/cmd_validate_*.cpp); weak defaults keep the program
// linkable while one is missing. Also the conventions those command files share.
#include "tools/commands/cmd_groups.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "tools/cli/cli_common.hpp"
#include "tools/runner/file_io.hpp"
#include "tools/plotting/gnuplot.hpp"
#include "tools/runner/runner.hpp"

namespace saddle {

__attribute__((weak)) void register_mc_rmt(CLI::App&) {}
__attribute__((weak)) void register_validate_rmt(CLI::App&) {}
__attribute__((weak)) void register_mc_slr(CLI::App&) {}
__attribute__((weak)) void register_validate_slr(CLI::App&) {}

void register_groups(CLI::App& app) {
  CLI::App* mc = app.add_subcommand("mc", "Monte Carlo simulation of the finite-size models");
  mc->require_subcommand(1);
  register_mc_slr(*mc);
  register_mc_rmt(*mc);
  CLI::App* validate =
      app.add_subcommand("validate", "Theory against Monte Carlo on built-in or given cases");
  validate->require_subcommand(1);
  register_validate_slr(*validate);
  register_validate_rmt(*validate);
}

std::string build_features() {
  std::string s = " (OpenMP: yes";
#ifdef SADDLE_HAVE_MPI
  s += ", MPI: yes";
#else
  s += ", MPI: no";
#endif
  s += ")";
  return s;
}

CLI::Option* add_seed_option(CLI::App* sub, std::uint64_t& seed, const std::string& help) {
  const CLI::Validator digits(
      [](std::string& s) -> std::string {
        if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos)
          return "the seed must be a non-negative integer (digits only), got '" + s + "'";
        const std::string max = "18446744073709551615";
        if (s.size() > max.size() || (s.size() == max.size() && s > max))
          return "the seed must be below 2^64, got '" + s + "'";
        return std::string();
      },
      "SEED");
  return sub->add_option("--seed", seed, help)->check(digits)->capture_default_str();
}

void write_table_checked(const CsvTable& table, const std::string& out, const TablePlot& plot,
                         const PlotHints& hints) {
  std::ostringstream text;
  table.write(text);
  write_output(out, text.str());  // checks the stream after flushing (tools/cli/cli_common.hpp)
  plot_table(table, out, plot, hints);
}

void check_table_outputs(const std::string& out, const TablePlot& plot) {
  check_writable(out, "--out");
  if (plot.png.empty()) return;
  file_io::check_output(plot.png, "--plot", false);
  file_io::check_distinct(plot.png, "--plot", out, "--out");
  gnuplot::check_timeout(plot.options.timeout, "--plot-timeout");
  gnuplot::check_ready();
}

void check_table_plot(const std::vector<std::string>& columns, const TablePlot& plot, const PlotHints& hints) {
  if (plot.png.empty()) return;
  auto need = [&](const std::string& flag, const std::string& c) {
    if (std::find(columns.begin(), columns.end(), c) == columns.end()) {
      std::string list;
      for (const auto& k : columns) list += (list.empty() ? "" : ", ") + k;
      throw InputError(flag + ": this table has no column '" + c + "' (its columns: " + list + ")");
    }
  };
  const PlotOptions& o = plot.options;
  if (!o.x.empty()) need("--plot-x", o.x);
  if (!o.by.empty()) need("--plot-by", o.by);
  if (!o.y.empty())
    for (const auto& y : split(o.y, ',')) need("--plot-y", y);
  else
    for (const auto& y : hints.y) need("--plot (default y)", y);
  if (!o.z.empty() && o.z.find('-') == std::string::npos) need("--plot-z", o.z);
  if (!o.diff.empty()) need("--plot-diff", o.diff.substr(0, o.diff.find(':')));
}

void check_stdout_written(const std::string& out) {
  if (!out.empty() && out != "-") return;
  std::cout.flush();
  if (!std::cout) throw InputError("stdout: write error (disk full or output closed?)");
}

double simulation_memory_limit_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  const double phys = pages > 0 && page > 0 ? double(pages) * double(page) : 8e9;
  return std::min(16e9, 0.5 * phys);
}

std::string bytes_text(double b) {
  char buf[48];
  if (b >= 1e9)
    std::snprintf(buf, sizeof buf, "%.3g GB", b * 1e-9);
  else
    std::snprintf(buf, sizeof buf, "%.3g MB", b * 1e-6);
  return buf;
}

}  // namespace saddle
