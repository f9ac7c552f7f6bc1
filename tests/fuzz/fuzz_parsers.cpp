// libFuzzer harness for the text `saddle` reads (issue 15 item 3): the sweep/range parser, the
// length-law parser (--L, --L-dist), the weight-vector parser (--wk/--wq), and the CSV readers
// behind `saddle plot` (read_csv), `saddle merge` and `--resume`. The first input byte picks the
// parser, the rest is the text. Bad input must end in InputError (or a CLI11 parse error); any
// other exception, a crash or a sanitizer report is a finding. Built by tests/fuzz/run.sh.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>

#include "tools/cli/cli_common.hpp"
#include "tools/commands/cmd_rmt_common.hpp"
#include "tools/commands/cmd_slr.hpp"
#include "tools/plotting/plot.hpp"
#include "tools/runner/runner.hpp"

// Models the harness never reaches (cmd_slr.cpp registers them): stubs keep the build small.
namespace saddle {
void register_slr_population(CLI::App&) {}
void register_slr_bayes(CLI::App&) {}
namespace slr {
Task parse_task(const std::string& s) {
  if (s == "spiked") return Task::Spiked;
  if (s == "max") return Task::Max;
  throw std::invalid_argument("unknown task '" + s + "'");
}
}  // namespace slr
}  // namespace saddle

namespace {

std::string scratch(const char* name) {
  static const std::string dir = [] {
    char buf[] = "/tmp/saddle_fuzz_XXXXXX";
    const char* d = ::mkdtemp(buf);
    if (!d) std::abort();
    return std::string(d);
  }();
  return dir + "/" + name;
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f << text;
}

// Runs `saddle ARGS...` in process (registration as in tools/saddle.cpp), stdout discarded.
void run_cli(std::vector<std::string> args) {
  CLI::App app{"saddle"};
  app.require_subcommand(1);
  saddle::register_rmt(app);
  saddle::register_merge(app);
  saddle::register_plot(app);
  saddle::reject_empty_values(app);
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(&a[0]);
  saddle::set_command_line(static_cast<int>(argv.size()), argv.data());
  std::streambuf* old = std::cout.rdbuf(nullptr);  // a successful merge prints to stdout
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError&) {
  } catch (const saddle::InputError&) {
  }
  std::cout.rdbuf(old);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1 || size > 4096) return 0;
  const int which = data[0] % 7;
  const std::string text(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    switch (which) {
      case 0: {
        saddle::ParamDomain r;
        r.allow_inf = (data[0] & 0x10) != 0;
        r.integer = (data[0] & 0x20) != 0;
        if (data[0] & 0x40) r = saddle::positive_rule();
        saddle::parse_sweep(text, "x", r);
        break;
      }
      case 1:
        saddle::parse_length_laws(text, "", 64);
        break;
      case 2:
        saddle::parse_length_laws("2", text, 64);
        break;
      case 3:
        saddle::rmt_cli::coordinates(text, "wk");
        break;
      case 4: {
        const std::string p = scratch("in.csv");
        write_file(p, text);
        saddle::read_csv(p);
        break;
      }
      case 5: {  // merge of the input with itself and with a second copy
        const std::string a = scratch("a.csv"), b = scratch("b.csv");
        write_file(a, text);
        write_file(b, text);
        run_cli({"saddle", "merge", a, b, "--out", scratch("merged.csv")});
        break;
      }
      case 6: {  // --resume of a cheap closed-form sweep from the input file
        const std::string o = scratch("resume.csv");
        write_file(o, text);
        run_cli({"saddle", "rmt", "ridge", "--c", "0.5", "--gamma", "0.1,1", "--snr", "1", "--out", o,
                 "--resume", "--no-progress"});
        break;
      }
    }
  } catch (const saddle::InputError&) {
  }
  return 0;
}
