// The `mc` and `validate` command groups (Monte Carlo and theory-vs-MC): registration hooks of
// each model's commands, and the conventions their command files share.
#pragma once
#include <CLI/CLI.hpp>

#include <cstdint>
#include <string>
#include <vector>

#include "tools/plotting/plot.hpp"

namespace saddle {
class CsvTable;
struct TablePlot;

void register_mc_rmt(CLI::App& mc);
void register_validate_rmt(CLI::App& validate);
void register_mc_slr(CLI::App& mc);
void register_validate_slr(CLI::App& validate);

// `--seed`: a non-negative integer below 2^64 (digits only: "-1", "1e3", "0x10" are bad input).
CLI::Option* add_seed_option(CLI::App* sub, std::uint64_t& seed, const std::string& help);

// Writes a complete table to `out` (stdout when empty or "-") and checks the stream after
// flushing (a full disk, /dev/full or a closed pipe is an error: InputError naming the target),
// then draws its figure if asked.
void write_table_checked(const CsvTable& table, const std::string& out, const TablePlot& plot,
                         const PlotHints& hints);
// Before computing: --out and --plot can be written (InputError otherwise).
void check_table_outputs(const std::string& out, const TablePlot& plot);
// Before computing, with --plot: every column the figure needs (--plot-x/-y/-z/-by/-diff, else
// the command's default y) is one of `columns` (InputError otherwise), so a run never ends in a
// figure that cannot be drawn after its table is written.
void check_table_plot(const std::vector<std::string>& columns, const TablePlot& plot, const PlotHints& hints);
// After a run that wrote to stdout (the grid runner): flushes stdout and throws InputError if
// any write failed.
void check_stdout_written(const std::string& out);

// Memory a simulation may plan to hold at once: half the physical memory, at most 16 GB
// (documented in the commands' --help).
double simulation_memory_limit_bytes();
std::string bytes_text(double bytes);  // "3.2 GB"
}  // namespace saddle
