// Implementation of the shared CLI conventions (tools/cli/cli_common.hpp).
#include "tools/cli/cli_common.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "saddle_version.hpp"
#include "tools/runner/csv.hpp"
#include "tools/cli/number_text.hpp"
#include "tools/runner/file_io.hpp"

namespace saddle {
namespace {

std::string trim(const std::string& s) {
  std::size_t a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t");
  return a == std::string::npos ? "" : s.substr(a, b - a + 1);
}

// Text from the user inside an error message: control characters (a NUL) shown as '?'.
std::string printable(const std::string& s) { return csv_comment(s); }

double parse_number(const std::string& raw, const std::string& name, const ParamDomain& rules) {
  std::string t = trim(raw);
  if (t.empty()) throw InputError("--" + name + ": empty value in '" + raw + "'");
  double v = 0.0;
  const std::string why = parse_real(t, &v);
  if (!why.empty()) throw InputError("--" + name + ": '" + printable(t) + "': " + why);
  if (std::isnan(v)) throw InputError("--" + name + ": NaN is not allowed");
  if (std::isinf(v) && !rules.allow_inf) throw InputError("--" + name + ": infinite values are not allowed");
  return v;
}

void check_range(double v, const std::string& name, const ParamDomain& rules) {
  if (std::isinf(v) && v > 0 && rules.allow_inf) return;
  bool below = rules.min_inclusive ? v < rules.min : v <= rules.min;
  const bool above = rules.max_inclusive ? v > rules.max : v >= rules.max;
  if (below || above) {
    std::string bound = std::string(rules.min_inclusive ? ">= " : "> ") + fmt(rules.min);
    if (std::isfinite(rules.max)) bound += std::string(rules.max_inclusive ? " and <= " : " and < ") + fmt(rules.max);
    throw InputError("--" + name + ": value " + fmt(v) + " out of range (must be " + bound + ")");
  }
  if (rules.integer && v != std::floor(v))
    throw InputError("--" + name + ": value " + fmt(v) + " must be an integer");
}

}  // namespace

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char ch : s) {
    if (ch == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += ch;
    }
  }
  out.push_back(cur);
  return out;
}

bool is_nonfinite_text(const std::string& text) {
  std::string low;
  for (char ch : trim(text)) low += static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  if (!low.empty() && (low[0] == '-' || low[0] == '+')) low.erase(0, 1);
  return low == "nan" || low == "inf" || low == "infinity" || low.rfind("nan(", 0) == 0;
}

double checked_count(std::initializer_list<double> factors, double limit, const std::string& what) {
  double n = 1.0;
  for (double f : factors) n *= f;
  if (!(n <= limit))
    throw InputError(what + " = " + fmt(n) + " is too large (at most " + fmt(limit) + ")");
  return n;
}

namespace {
// `v` as a hexadecimal integer times a power of two ("0x1999999999999ap-56"): exact, and read the
// same by strtold in every locale (no radix character), so CLI11's conversion gets the very value
// parse_real read.
std::string exact_text(double v) {
  if (v == 0.0 || !std::isfinite(v)) return format_shortest(v);
  int e = 0;
  const double f = std::frexp(std::fabs(v), &e);
  const auto m = static_cast<unsigned long long>(std::ldexp(f, 53));
  char hex[32];
  const auto r = std::to_chars(hex, hex + sizeof hex, m, 16);
  return std::string(v < 0 ? "-" : "") + "0x" + std::string(hex, r.ptr) + "p" + std::to_string(e - 53);
}

// The number options of CLI11 (int, unsigned, double) read text with strtoll/strtoull base 0 and
// strtold: hexadecimal and octal (010 = 8) accepted, 2^64 saturated, -1 wrapped for unsigned,
// 1e400 read as inf, and the decimal point of the process locale. This transform, first of the
// option's validators, reads the text with tools/cli/number_text.hpp and hands CLI11 a canonical
// spelling it converts exactly, or refuses the value with the reason.
void strict_number(CLI::Option* opt) {
  std::string type = opt->get_type_name();
  type = type.substr(0, type.find(':'));
  enum { kNone, kInt, kUint, kReal } kind = kNone;
  if (type == "INT") kind = kInt;
  else if (type == "UINT") kind = kUint;
  else if (type == "FLOAT") kind = kReal;
  if (kind == kNone) return;
  opt->transform(CLI::Validator(
      [kind](std::string& v) -> std::string {
        if (v.empty()) return std::string();  // the non-empty check says so
        std::string why;
        if (kind == kInt) {
          long long x = 0;
          why = parse_integer(v, std::numeric_limits<long long>::min(), std::numeric_limits<long long>::max(), &x);
          if (why.empty()) v = std::to_string(x);
        } else if (kind == kUint) {
          std::uint64_t x = 0;
          why = parse_unsigned(v, &x);
          if (why.empty()) v = std::to_string(x);
        } else {
          double x = 0;
          why = parse_real(v, &x);
          if (why.empty() && std::isnan(x)) why = "NaN is not allowed";
          if (why.empty()) v = exact_text(x);
        }
        return why.empty() ? why : "'" + printable(v) + "': " + why;
      },
      "", "number"));
}
}  // namespace

void reject_empty_values(CLI::App& app) {
  for (CLI::Option* opt : app.get_options()) {
    if (opt->get_type_size_max() == 0) continue;  // a flag
    strict_number(opt);
    const std::string name = opt->get_name();
    opt->check(
        [name](const std::string& v) {
          return v.empty() ? std::string("empty value (give a value or leave the option out)")
                           : std::string();
        },
        "", "non-empty");
  }
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) reject_empty_values(*sub);
}

void require_finite(const std::vector<std::string>& row, const std::vector<std::string>& columns,
                    std::size_t first_output, const std::string& where) {
  for (std::size_t j = first_output; j < row.size(); ++j) {
    const std::string& v = row[j];
    if (is_nonfinite_text(v))
      throw std::runtime_error("internal error: non-finite " +
                               (j < columns.size() ? columns[j] : std::string("value")) + " " +
                               where);
  }
}

void finish_row(std::vector<std::string>& row, const std::vector<std::string>& columns,
                std::size_t first_output, bool converged, const std::string& where) {
  if (converged) return require_finite(row, columns, first_output, where);
  for (std::size_t j = first_output; j < row.size(); ++j)
    if (is_nonfinite_text(row[j])) row[j].clear();
}

std::string fmt(double v) {
  return format_general(v, 12);  // as printf %.12g in the C locale, whatever the process locale
}

namespace {
// One item of a sweep: a range start:stop:count or start:stop:count:log (appended to out).
void append_range(const std::string& t, const std::string& name, const ParamDomain& rules,
                  std::vector<double>& out) {
  auto parts = split(t, ':');
  if (parts.size() != 3 && parts.size() != 4)
    throw InputError("--" + name + ": malformed range '" + t +
                     "' (expected start:stop:count or start:stop:count:log)");
  bool geometric = false;
  if (parts.size() == 4) {
    if (trim(parts[3]) != "log")
      throw InputError("--" + name + ": malformed range '" + t + "' (4th field must be 'log')");
    geometric = true;
  }
  ParamDomain finite = rules;
  finite.allow_inf = false;
  double a = parse_number(parts[0], name, finite), b = parse_number(parts[1], name, finite);
  ParamDomain cnt;
  double c = parse_number(parts[2], name, cnt);
  if (c != std::floor(c) || c < 1)
    throw InputError("--" + name + ": range count must be an integer >= 1 in '" + t + "'");
  if (c > kMaxGridPoints || out.size() + c > kMaxGridPoints)
    throw InputError("--" + name + ": range count too large in '" + t + "' (at most " + fmt(kMaxGridPoints) +
                     " values)");
  const int n = static_cast<int>(c);
  if (n > 1 && a == b)
    throw InputError("--" + name + ": the range '" + t + "' repeats one value (give the value once)");
  if (geometric && (a <= 0 || b <= 0))
    throw InputError("--" + name + ": a log range needs positive endpoints in '" + t + "'");
  for (int i = 0; i < n; ++i) {
    double f = n == 1 ? 0.0 : double(i) / (n - 1);
    double v = geometric ? std::exp(std::log(a) + f * (std::log(b) - std::log(a))) : a + f * (b - a);
    if (i == 0) v = a;                // exact endpoints: the values typed
    if (i == n - 1 && n > 1) v = b;
    if (rules.integer) {  // a log range's exp(log) is integer up to rounding; anything else is refused
      const double r = std::round(v);
      if (std::fabs(v - r) > 1e-9 * std::max(1.0, std::fabs(r)))
        throw InputError("--" + name + ": the range '" + t + "' gives " + fmt(v) +
                         ", not an integer (this parameter takes integers)");
      v = r;
    }
    out.push_back(v);
  }
}
}  // namespace

// A comma list whose items are values or ranges ("0,1e-6:1:13:log" is 0 then 13 values).
std::vector<double> parse_sweep(const std::string& text, const std::string& name,
                                const ParamDomain& rules) {
  std::vector<double> out;
  const std::string t = trim(text);
  if (t.empty()) throw InputError("--" + name + ": empty value");
  for (const std::string& raw : split(t, ',')) {
    const std::string item = trim(raw);
    if (item.find(':') != std::string::npos)
      append_range(item, name, rules, out);
    else
      out.push_back(parse_number(item, name, rules));
  }
  for (double v : out) check_range(v, name, rules);
  return out;
}

std::vector<std::vector<double>> cartesian(const std::vector<std::vector<double>>& axes) {
  std::vector<std::vector<double>> out;
  for (const auto& a : axes)
    if (a.empty()) return out;
  std::vector<std::size_t> idx(axes.size(), 0);
  while (true) {
    std::vector<double> p(axes.size());
    for (std::size_t k = 0; k < axes.size(); ++k) p[k] = axes[k][idx[k]];
    out.push_back(std::move(p));
    int k = static_cast<int>(axes.size()) - 1;
    for (; k >= 0; --k) {
      if (++idx[k] < axes[k].size()) break;
      idx[k] = 0;
    }
    if (k < 0) break;
  }
  return out;
}

std::vector<std::string> parse_names(const std::string& text, const std::string& name,
                                     const std::vector<std::string>& allowed) {
  std::vector<std::string> out;
  for (const std::string& raw : split(text, ',')) {
    std::string t = trim(raw);
    bool ok = false;
    for (const auto& a : allowed) ok = ok || a == t;
    if (!ok) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      throw InputError("--" + name + ": unknown value '" + t + "' (expected one of: " + list + ")");
    }
    out.push_back(t);
  }
  return out;
}

void add_solver_options(CLI::App* sub, SolverOptions& opt, std::string& method_text) {
  method_text = to_string(opt.method);
  sub->add_option("--method", method_text, "Fixed-point method: damped | anderson | newton (Newton steps with the model's "
                  "Jacobian, Anderson fallback)")
      ->capture_default_str()->group("Solver");
  sub->add_option("--mix", opt.mix, "Weight of the new iterate, x <- (1-mix) x + mix F(x), in (0,1]")
      ->capture_default_str()->group("Solver");
  sub->add_option("--tol", opt.tol, "Tolerance on |F(x) - x|_inf, > 0")->capture_default_str()->group("Solver");
  sub->add_option("--max-iter", opt.max_iter, "Maximum fixed-point iterations, in [1, 1e6]")
      ->capture_default_str()->group("Solver");
  sub->add_option("--anderson-depth", opt.anderson_depth, "Anderson history length, in [0, 100]")
      ->capture_default_str()->group("Solver");
  sub->add_flag("!--no-polish", opt.newton_polish, "Skip the Newton polish of unconverged iterations")
      ->group("Solver");
}

void add_curve_options(CLI::App* sub, CurveCli& o) {
  sub->add_option("--stall-window", o.stall_window,
                  "Stop a limit cycle after this many iterations without a new best residual "
                  "(>= 0; 0 = off); a stalled replicate is never converged by itself")
      ->capture_default_str()->group("Solver");
  sub->add_option("--noise-factor", o.noise_factor,
                  "A replicate that did not meet --tol still converges when every component of "
                  "its residual is at most this times the map's own QMC noise there (the s.d. "
                  "over the replicates of F_r at their mean state), in [0, 1]; 0 = --tol only")
      ->capture_default_str()->group("Solver");
  sub->add_option("--stall-accept", o.stall_accept,
                  "Removed: a stalled iteration is never called converged (see --noise-factor)")
      ->group("Solver");
  sub->add_flag("--no-retry", o.no_retry,
                "Do not retry a failed replicate with a slow damped iteration")
      ->group("Solver");
  sub->add_option("--predictor", o.predictor,
                  "Start of each point of a warm continuation: secant = linear extrapolation of "
                  "the last two points that met --tol, warm = the last point itself")
      ->capture_default_str()->group("Solver");
}

void finish_curve_options(const CurveCli& o, CurveOptions& copt) {
  if (!o.stall_accept.empty())
    throw InputError("--stall-accept: removed; a stalled iteration is never converged: converged "
                     "means the residual is below --tol, or below --noise-factor times the map's "
                     "own QMC noise");
  if (o.predictor != "secant" && o.predictor != "warm")
    throw InputError("--predictor: unknown predictor '" + o.predictor + "' (expected secant or warm)");
  copt.solver.stall_window = o.stall_window;
  copt.noise_factor = o.noise_factor;
  copt.retry = !o.no_retry;
  copt.secant_predictor = o.predictor == "secant";
  check_options(copt);
}

std::string predictor_text(const CurveOptions& copt) {
  return copt.secant_predictor
             ? "predictor=secant (each point starts from the linear extrapolation of the last two "
               "points of its chain that met tol, else from the last usable one)"
             : "predictor=warm (each point starts from the last usable point of its chain)";
}

std::string convergence_rule_text(const CurveOptions& copt) {
  std::string t = "converged=1 iff every replicate's residual |F(x) - x|_inf is <= tol=" + fmt(copt.solver.tol);
  if (copt.noise_factor > 0.0)
    t += ", or every component of it is <= noise_factor=" + fmt(copt.noise_factor) +
         " x the map's own QMC noise (s.d. over the replicates of F_r at their mean state; "
         "reason = noise)";
  t += "; a limit cycle (no new best residual in stall_window iterations) is never converged by "
       "itself: reason = stalled, amplitude = its largest range over the last stall_window "
       "iterates; reason = tolerance, noise, stalled, max_iter, newton_failed, non_finite, "
       "out_of_domain";
  return t;
}

std::vector<std::string> curve_status_columns() { return {"reason", "amplitude"}; }

void push_curve_status(std::vector<std::string>& row, const CurveStatus& s) {
  row.push_back(reason_text(s));
  row.push_back(fmt(s.amplitude));
}

void finish_solver_options(SolverOptions& opt, const std::string& method_text) {
  try {
    opt.method = parse_method(method_text);
  } catch (const std::invalid_argument& e) {
    throw InputError(std::string("--method: ") + e.what());
  }
  check_options(opt);
}

namespace {
// "max_iter: must be ..." (an options struct's is_valid) as the flag's message "--max-iter: ...".
[[noreturn]] void throw_as_flag(const std::string& error) {
  const std::size_t colon = error.find(':');
  throw InputError(option_name(error.substr(0, colon)) + error.substr(colon));
}
}  // namespace

void check_options(const SolverOptions& opt) {
  std::string error;
  if (!opt.is_valid(&error)) throw_as_flag(error);
}

void check_options(const CurveOptions& opt) {
  std::string error;
  if (!opt.is_valid(&error)) throw_as_flag(error);
}

std::string describe(const SolverOptions& opt) {
  return "method=" + to_string(opt.method) +
         (opt.method == Method::Newton
              ? " newton_steps=" + std::to_string(opt.newton_steps) + " fallback=anderson"
              : "") +
         " mix=" + fmt(opt.mix) + " tol=" + fmt(opt.tol) +
         " max_iter=" + std::to_string(opt.max_iter) +
         " anderson_depth=" + std::to_string(opt.anderson_depth) +
         " newton_polish=" + (opt.newton_polish ? "1" : "0") +
         (opt.stall_window > 0 ? " stall_window=" + std::to_string(opt.stall_window) : "");
}

void CsvTable::add_row(std::vector<std::string> row) {
  if (row.size() != columns_.size())
    throw std::logic_error("CsvTable: row has " + std::to_string(row.size()) + " fields, header " +
                           std::to_string(columns_.size()));
  rows_.push_back(std::move(row));
}

void CsvTable::write_header(std::ostream& os) const {
  os << "# saddle " << SADDLE_VERSION << "\n";
  os << csv_comment("# command: " + command_line()) << "\n";
  for (const auto& kv : settings_) os << csv_comment("# " + kv.first + ": " + kv.second) << "\n";
  os << csv_record(columns_) << "\n";
}

void CsvTable::write(std::ostream& os) const {
  write_header(os);
  for (const auto& r : rows_) os << csv_record(r) << "\n";
}

void CsvTable::write_to(const std::string& path) const {
  std::ostringstream os;
  write(os);
  write_output(path, os.str());
}

void check_grid_points(double points, const std::string& what) {
  if (!(points <= kMaxGridPoints))
    throw InputError(what + " has " + fmt(points) + " points, more than the " + fmt(kMaxGridPoints) +
                     " one run computes (split it into several runs)");
}

double check_grid(std::initializer_list<std::size_t> sizes) {
  double n = 1.0;
  for (std::size_t s : sizes) n *= static_cast<double>(s);
  check_grid_points(n);
  return n;
}

void check_writable(const std::string& path, const std::string& what) {
  file_io::check_output(path, what, true);
}

namespace {
bool& output_rank_flag() {
  static bool writes = true;
  return writes;
}
}  // namespace
void set_output_rank(bool writes) { output_rank_flag() = writes; }
bool output_rank() { return output_rank_flag(); }

void write_output(const std::string& path, const std::string& text) {
  if (!output_rank()) return;
  file_io::write_whole(path, text, "--out");
}

namespace {
std::string& command_line_storage() {
  static std::string s;
  return s;
}
std::vector<std::string>& command_args_storage() {
  static std::vector<std::string> v;
  return v;
}
}  // namespace

void set_command_line(int argc, char** argv) {
  std::string s;
  auto& args = command_args_storage();
  args.clear();
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    if (i == 0) {
      std::size_t slash = a.find_last_of('/');
      if (slash != std::string::npos) a = a.substr(slash + 1);
    }
    args.push_back(a);
    bool quote = a.empty() || a.find_first_of(" \t\"'$") != std::string::npos;
    s += (i ? " " : "") + (quote ? "'" + a + "'" : a);
  }
  command_line_storage() = s;
}

const std::string& command_line() { return command_line_storage(); }
const std::vector<std::string>& command_args() { return command_args_storage(); }

}  // namespace saddle
