// The pre-integrated replica channel (docs/equations/slr_replica.md §4.9, the default): for every
// QMC point of the other coordinates, the key noise along one direction e is integrated by the
// line rule of equations/slr_prox_line.hpp, which locates the jumps of the global proximal
// minimiser and integrates each smooth piece by a Gauss rule. The channel averages are then
// continuous functions of the QMC point and of the state, the jump terms (S20b) come out
// exactly, and the map's Jacobian includes the motion of the jump points.
#include <stdexcept>

#include "equations/slr_replica_channel.hpp"
#include "equations/slr_replica_draw.hpp"
#include "solver/interrupt.hpp"

namespace saddle {
namespace slr {
namespace replica {

namespace {

// The line direction e and an orthonormal basis B of the key-noise coordinates outside the
// line: softmax, e is the even contrast (L-1-2l)_l (orthogonal to 1) and B spans the rest of
// 1^perp (the mean of the key fields does not enter: nk = L - 2); linear, B spans e^perp
// (nk = L - 1).
template <int L>
struct LineBasis {
  VecL<L> e;
  Eigen::Matrix<double, L, L> B;  // first nk columns used
  int nk = 0;
  explicit LineBasis(ProxAct act) {
    e.setZero();
    B.setZero();
    if (L == 1) {
      e(0) = 1.0;
      nk = 0;
      return;
    }
    for (int l = 0; l < L; ++l) e(l) = L - 1 - 2.0 * l;
    e.normalize();
    // Gram-Schmidt over {e, (1 for softmax), unit vectors}.
    Eigen::Matrix<double, L, L + 2> Q;
    int q = 0;
    Q.col(q++) = e;
    if (act == ProxAct::Softmax) Q.col(q++) = VecL<L>::Constant(1.0 / std::sqrt(double(L)));
    const int fixed = q;
    for (int k = 0; k < L && q < L; ++k) {
      VecL<L> v = VecL<L>::Unit(k);
      for (int j = 0; j < q; ++j) v -= Q.col(j).dot(v) * Q.col(j);
      if (v.norm() > 1e-8) Q.col(q++) = v.normalized();
    }
    nk = q - fixed;
    for (int j = 0; j < nk; ++j) B.col(j) = Q.col(fixed + j);
  }
};

// Point layout: (a, b, c_2..c_L) the z side (z_side()), then the nk key coordinates r outside the
// line, then (max) the teacher fields chi*_1..L.
template <int L>
ChannelSums sums_preint(const ReplicaSetting& set, const double* P, const SobolGaussian& pts,
                        int rep, bool want_at, bool want_jac) {
  const ProxAct act = set.activation == Activation::Softmax ? ProxAct::Softmax : ProxAct::Linear;
  const bool k_active = !(act == ProxAct::Softmax && L == 1);  // L = 1 softmax: sigma == 1
  const DrawState st(set, P);
  const LineBasis<L> lb(act);
  const int n = pts.points();
  const double c = set.task == Task::Spiked ? st.sq_k : st.s_k;  // d omega_chi / dx = c e
  const bool trivial = !k_active || !(c > 0);
  ChannelSums S;
  Draw<L> dr;
  dr.in.V_k = st.V_k;
  dr.in.V_v = st.V_v;
  LineRule<ProxPoint<L>> rule;
  rule.nodes.reserve(4 * set.line.nodes);
  LineOptions single = set.line;
  VecL<L> noise, base;
  auto key_at = [&](double x, const double* chis) {
    noise = base + x * lb.e;
    if (set.task == Task::Spiked)
      key_spiked<L>(st, noise.data(), dr);
    else
      key_max<L>(st, chis, noise.data(), dr);
  };
  for (int i = 0; i < n; ++i) {
    // An interrupt (SIGINT/SIGTERM, solver/interrupt.hpp) ends the sum at once: the caller's
    // iteration stops at its next poll and the interrupted curve is dropped, so a partial sum is
    // never used. Polled, not thrown: this may run inside an OpenMP task.
    if (interrupt_requested()) break;
    const double* u = pts.point(rep, i);
    z_side<L>(st, u[0], u[1], u + 2, dr);
    base.setZero();
    for (int j = 0; j < lb.nk; ++j) base += u[L + 1 + j] * lb.B.col(j);
    const double* chis = u + L + 1 + lb.nk;
    key_at(0.0, chis);
    if (dr.wgt == 0.0) continue;
    const double wgt = dr.wgt;
    ProxLine<L> prob(act, set.prox, dr.in, c * lb.e);
    if (trivial) {
      // Nothing depends on x (softmax L = 1, or no key noise): one node.
      rule.clear();
      LineNode<ProxPoint<L>> nd;
      nd.x = 0.0;
      nd.w = 1.0;
      nd.pt = prob.global(0.0);
      rule.nodes.push_back(nd);
    } else {
      build_line_rule(prob, single, rule);
    }
    for (const auto& nd : rule.nodes) {
      key_at(nd.x, chis);
      const ProxResult<L> pr = prob.result(nd.pt);
      accumulate<L>(S, act, k_active, st, dr, pr, wgt * nd.w, nd.w, want_at, want_jac);
      if (!trivial) {
        const VecL<L> gk = (pr.chi - dr.in.omega_chi) / st.V_k;
        S.S_gex += wgt * nd.w * gk.dot(lb.e) * nd.x;
        if (lb.nk > 0) {
          const JacobianBlocks<L> jb = jacobian_blocks<L>(act, dr.in, pr.chi);
          S.S_Jperp += wgt * nd.w * (jb.cc.trace() - lb.e.dot(jb.cc * lb.e));
        }
      }
    }
    if (rule.unresolved) S.S_unres += 1.0;
    for (const auto& jp : rule.jumps) {
      key_at(jp.x, chis);
      const ProxResult<L> pb = prob.result(jp.before), pa = prob.result(jp.after);
      const VecL<L> gkb = (pb.chi - dr.in.omega_chi) / st.V_k, gka = (pa.chi - dr.in.omega_chi) / st.V_k;
      const VecL<L> gzb = (pb.z - dr.in.omega_z) / st.V_v, gza = (pa.z - dr.in.omega_z) / st.V_v;
      // (S20b): the surface delta of the tie set weighs |Delta g|^2 (docs §4.9).
      S.S_jk += wgt * jp.density * (gka - gkb).squaredNorm();
      S.S_jv += wgt * jp.density * (gza - gzb).squaredNorm();
      S.S_jz1 += wgt * jp.density * (gza(0) - gzb(0)) * (gza(0) - gzb(0));
      S.S_jke += wgt * jp.density * std::pow(lb.e.dot(gka - gkb), 2);
      S.S_jumps += 1.0;
      if (want_jac) {
        // The jump point moves with P: d/dP of a piecewise integral gets
        // -[G] phi(x_j) dx_j/dP = [G] phi D_P / D_x = -density [G] D_P (D_x < 0), with
        // D_P = d/dP [Phi(after) - Phi(before)] at fixed x (envelope theorem).
        DrawDerivs<L> dd;
        draw_derivs<L>(st, dr, dd);
        double Gb[6], Ga[6];
        hat_summands<L>(dr, gkb, gzb, Gb);
        hat_summands<L>(dr, gka, gza, Ga);
        for (int j = 0; j < 6; ++j) {
          auto dphi = [&](const VecL<L>& gk, const VecL<L>& gz) {
            return -(gk.dot(dd.dwc[j]) + gz.dot(dd.dwz[j])) - (j == 2 ? 0.5 * gk.squaredNorm() : 0.0) -
                   (j == 5 ? 0.5 * gz.squaredNorm() : 0.0);
          };
          const double DP = dphi(gka, gza) - dphi(gkb, gzb);
          for (int row = k_active ? 0 : 3; row < 6; ++row)
            S.dS(row, j) += -wgt * jp.density * (Ga[row] - Gb[row]) * DP;
        }
      }
    }
  }
  return S;
}

}  // namespace

ChannelSums channel_sums_preint(int L, const ReplicaSetting& set, const double* P,
                                const SobolGaussian& pts, int rep, bool want_at, bool want_jac) {
  switch (L) {
    case 1: return sums_preint<1>(set, P, pts, rep, want_at, want_jac);
    case 2: return sums_preint<2>(set, P, pts, rep, want_at, want_jac);
    case 3: return sums_preint<3>(set, P, pts, rep, want_at, want_jac);
    case 4: return sums_preint<4>(set, P, pts, rep, want_at, want_jac);
    default: throw std::invalid_argument("L out of range for the replica channel");
  }
}

}  // namespace replica
}  // namespace slr
}  // namespace saddle
