// The values that the RS and 1RSB tables of `slr erm` share, in their column order
// (tools/commands/cmd_slr_erm.cpp, tools/commands/cmd_slr_rsb.cpp): one template over the two
// point types, which name these fields alike (equations/slr_replica_curve.hpp, equations/slr_rsb.hpp).
#pragma once
#include <string>
#include <vector>

#include "equations/slr_replica.hpp"
#include "tools/cli/cli_common.hpp"
#include "tools/commands/cmd_slr.hpp"

namespace saddle {

// The columns of replica_row_head, in its order.
inline std::vector<std::string> replica_head_columns() {
  return {"task", "L", "nu", "lambda", "delta", "alpha", "activation", "init", "m_k", "q_k", "V_k", "m_v",
          "q_v", "V_v", "mhat_k", "qhat_k", "Vhat_k", "mhat_v", "qhat_v", "Vhat_v", "test_error",
          "train_error", "converged", "iterations", "residual", "test_error_se", "train_error_se",
          "train_loss", "train_loss_se", "Vhat_k_stein", "Vhat_v_stein", "Vhat_k_hessian", "Vhat_v_hessian",
          "replicates", "stalled", "preferred", "coexist", "at_eigenvalue", "at_eigenvalue_se",
          "rs_stability"};
}
// The columns of push_replica_tail, in its order.
inline std::vector<std::string> replica_tail_columns() {
  std::vector<std::string> c{"jump_share", "jump_share_se", "points", "path"};
  for (const auto& s : curve_status_columns()) c.push_back(s);
  return c;
}

// task .. init, the order parameters, test and train error, converged .. residual, the standard
// errors, train_loss, the four Vhat forms (stein_k, stein_v: the Stein form of each table),
// replicates .. at_eigenvalue_se and rs_stability.
template <class P>
std::vector<std::string> replica_row_head(const slr::ReplicaSetting& s, const P& p, const Estimate& stein_k,
                                          const Estimate& stein_v) {
  std::vector<std::string> row{to_string(s.task),  length_key(slr::replica_lengths(s)), fmt(s.nu),
                               fmt(s.lambda),      fmt(s.delta),                        fmt(p.alpha),
                               to_string(s.activation), to_string(p.init)};
  for (const Estimate* e : {&p.m_k, &p.q_k, &p.V_k, &p.m_v, &p.q_v, &p.V_v, &p.mhat_k, &p.qhat_k, &p.Vhat_k,
                            &p.mhat_v, &p.qhat_v, &p.Vhat_v, &p.test_error, &p.train_error})
    row.push_back(fmt(e->mean));
  row.push_back(p.converged ? "1" : "0");
  row.push_back(std::to_string(p.iterations));
  row.push_back(fmt(p.residual));
  for (const Estimate* e : {&p.test_error, &p.train_error}) row.push_back(fmt(e->se));
  row.push_back(fmt(p.train_loss.mean));
  row.push_back(fmt(p.train_loss.se));
  for (const Estimate* e : {&stein_k, &stein_v, &p.Vhat_k_hessian, &p.Vhat_v_hessian}) row.push_back(fmt(e->mean));
  row.push_back(std::to_string(s.replicates));
  row.push_back(std::to_string(p.n_stalled));
  row.push_back(p.preferred ? "1" : "0");
  row.push_back(p.coexist ? "1" : "0");
  row.push_back(fmt(p.at_eigenvalue.mean));
  row.push_back(fmt(p.at_eigenvalue.se));
  row.push_back(to_string(p.stability));
  return row;
}

// jump_share, jump_share_se, points, path and the curve status columns.
template <class P>
void push_replica_tail(std::vector<std::string>& row, const P& p) {
  row.push_back(fmt(p.jump_share.mean));
  row.push_back(fmt(p.jump_share.se));
  row.push_back(std::to_string(p.n_points));
  row.push_back(path_text(p));
  push_curve_status(row, p);
}

}  // namespace saddle
