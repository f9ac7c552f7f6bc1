// The sampled replica channel (docs/equations/slr_replica.md §7b, `--channel sampled`): randomly
// shifted QMC over every coordinate of the channel draw, one global proximal step per point.
// Kept for checking and benchmarking the pre-integrated channel (slr_replica_preint.cpp): its
// map is piecewise constant in the jumps of the proximal minimiser.
#include <stdexcept>

#include "equations/slr_replica_channel.hpp"
#include "equations/slr_replica_draw.hpp"
#include "solver/interrupt.hpp"

namespace saddle {
namespace slr {
namespace replica {

namespace {

// Point layout: spiked (n_1..n_L, a, b, c_2..c_L) with the key noise n; max (chi*_1..L, xi_1..L,
// a, b, c_2..c_L); a, b, c the z side (z_side()).
template <int L>
ChannelSums sums_sampled(const ReplicaSetting& set, const double* P, const SobolGaussian& pts,
                         int rep, bool want_at, bool want_jac) {
  const ProxAct act = set.activation == Activation::Softmax ? ProxAct::Softmax : ProxAct::Linear;
  const bool k_active = !(act == ProxAct::Softmax && L == 1);  // L = 1 softmax: sigma == 1
  const DrawState st(set, P);
  const int n = pts.points();
  ChannelSums S;
  Draw<L> dr;
  dr.in.V_k = st.V_k;
  dr.in.V_v = st.V_v;
  for (int i = 0; i < n; ++i) {
    // An interrupt ends the sum at once (as in slr_replica_preint.cpp: the partial sum is dropped).
    if ((i & 255) == 0 && interrupt_requested()) break;
    const double* u = pts.point(rep, i);
    int off;
    if (set.task == Task::Spiked) {
      key_spiked<L>(st, u, dr);
      off = L;
    } else {
      key_max<L>(st, u, u + L, dr);
      off = 2 * L;
    }
    z_side<L>(st, u[off + L - 1], u[off + L], u + off, dr);
    if (dr.wgt == 0.0) continue;
    // the minimiser, then its channel quantities and the blocks of J, both from one phi_derivs
    // (the prox result needs the blocks' diagonals anyway)
    VecL<L> chi;
    double F;
    solve_prox_min<L>(act, dr.in, set.prox, chi, F);
    const NodeEval<L> ne = node_eval<L>(act, dr.in, chi, F);
    accumulate<L>(S, act, k_active, st, dr, ne, dr.wgt, 1.0, LineTerms<L>(), want_at, want_jac, false);
  }
  return S;
}

}  // namespace

ChannelSums channel_sums_sampled(int L, const ReplicaSetting& set, const double* P,
                                 const SobolGaussian& pts, int rep, bool want_at, bool want_jac) {
  switch (L) {
    case 1: return sums_sampled<1>(set, P, pts, rep, want_at, want_jac);
    case 2: return sums_sampled<2>(set, P, pts, rep, want_at, want_jac);
    case 3: return sums_sampled<3>(set, P, pts, rep, want_at, want_jac);
    case 4: return sums_sampled<4>(set, P, pts, rep, want_at, want_jac);
    default: throw std::invalid_argument("L out of range for the replica channel");
  }
}

}  // namespace replica
}  // namespace slr
}  // namespace saddle
