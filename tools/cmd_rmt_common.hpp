// Helpers shared by the RMT subcommands (tools/cmd_rmt.cpp, tools/cmd_mc_rmt.cpp): activation
// lists and weight coordinates parsed with InputError messages.
#pragma once
#include <Eigen/Dense>

#include <string>
#include <vector>

#include "equations/rmt_hermite.hpp"

namespace saddle {
namespace rmt_cli {
// Comma-separated activations; InputError on an unknown name.
std::vector<rmt::Activation> activations(const std::string& text);
// 1 to 3 comma-separated coordinates on (e1, e2, e3) (missing ones are 0); InputError otherwise.
Eigen::Vector3d coordinates(const std::string& text, const std::string& name);
// "x;y;z" (semicolons: the CSV has no quoting).
std::string vec_text(const Eigen::Vector3d& v);
}  // namespace rmt_cli
}  // namespace saddle
