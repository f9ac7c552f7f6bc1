// Helpers shared by the RMT subcommands (tools/commands/cmd_rmt.cpp, tools/commands/cmd_mc_rmt.cpp): activation
// lists and weight coordinates parsed with InputError messages.
#pragma once
#include <Eigen/Dense>

#include <string>
#include <vector>

#include "equations/rmt_hermite.hpp"
#include "tools/cli/cli_common.hpp"

namespace saddle {
namespace rmt_cli {
// Comma-separated activations; InputError on an unknown name.
std::vector<rmt::Activation> activations(const std::string& text);
// Exactly 3 comma-separated coordinates on (e1, e2, e3), each in [-kMaxCoordinate,
// kMaxCoordinate] (at 1e5 the spike step overflows at c = 1e4, snr = 1e6); InputError otherwise (a vector of the wrong length is not padded).
Eigen::Vector3d coordinates(const std::string& text, const std::string& name);

// Documented domains of the RMT parameters (README, docs/rmt.md): inside them the deterministic
// equivalent and the baseline are finite (checked at the corners by tests/cli/bad_inputs.sh and
// rmt_cli.sh); outside them the equations over/underflow double precision (gamma = 1e-300 gives
// delta_tilde ~ 1e300, the spike step then overflows).
constexpr double kMinC = 1e-4, kMaxC = 1e4;          // c = p/n
constexpr double kMinGamma = 1e-10, kMaxGamma = 1e8;  // ridge gamma (rmt ridge: also 0)
constexpr double kMaxSnr = 1e6;                       // |mu|^2
constexpr double kMaxCoordinate = 1e3;                // |w_K|_i, |w_Q|_i
ParamDomain c_rule();
ParamDomain gamma_rule();
ParamDomain snr_rule();
// "x;y;z" (semicolons: the CSV has no quoting).
std::string vec_text(const Eigen::Vector3d& v);
}  // namespace rmt_cli
}  // namespace saddle
