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
  const bool spiked = set.task == Task::Spiked;
  const double c = spiked ? st.sq_k : st.s_k;  // d omega_chi / dx = c e
  // dc/dP: spiked c = sqrt(q_k); max c = sqrt(q_k - m_k^2)
  double dc[6] = {0, 0, 0, 0, 0, 0};
  if (c > 0) {
    dc[1] = 0.5 / c;
    if (!spiked) dc[0] = -st.m_k / c;
  }
  const bool trivial = !k_active || !(c > 0);
  ChannelSums S;
  Draw<L> dr;
  dr.in.V_k = st.V_k;
  dr.in.V_v = st.V_v;
  LineRule<ProxPoint<L>> rule;
  rule.nodes.reserve(4 * set.line.nodes);
  LineOptions single = set.line;
  VecL<L> noise, base;
  LineTerms<L> lt;
  lt.on = !trivial;
  lt.e = lb.e;
  auto key_at = [&](double x, const double* chis) {
    noise = base + x * lb.e;
    if (spiked)
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
    } else if constexpr (L == 2) {
      if (act == ProxAct::Softmax && set.line.exact_softmax2)
        build_line_rule_softmax2(dr.in, c, single, rule);  // the exact 1-D rule
      else
        build_line_rule(prob, single, rule);
    } else {
      build_line_rule(prob, single, rule);
    }
    for (const auto& nd : rule.nodes) {
      key_at(nd.x, chis);
      lt.x = nd.x;
      const NodeEval<L> ne = node_eval<L>(act, dr.in, nd.pt.pr.chi, nd.pt.pr.objective);
      accumulate<L>(S, act, k_active, st, dr, ne, wgt * nd.w, nd.w, lt, want_at, want_jac, set.line.exact_jacobian);
    }
    if (rule.unresolved) S.S_unres += 1.0;
    for (const auto& jp : rule.jumps) {
      key_at(jp.x, chis);
      lt.x = jp.x;
      const NodeEval<L> nb = node_eval<L>(act, dr.in, jp.before.pr.chi, jp.before.pr.objective);
      const NodeEval<L> na = node_eval<L>(act, dr.in, jp.after.pr.chi, jp.after.pr.objective);
      const VecL<L> gkb = (nb.pr.chi - dr.in.omega_chi) / st.V_k, gka = (na.pr.chi - dr.in.omega_chi) / st.V_k;
      const VecL<L> gzb = (nb.pr.z - dr.in.omega_z) / st.V_v, gza = (na.pr.z - dr.in.omega_z) / st.V_v;
      const VecL<L> jk = gka - gkb, jz = gza - gzb;
      const double rho = jp.density;
      // (S20b): the surface delta of the tie set weighs |[g]|^2 (docs §4.9).
      const double Q[4] = {jk.squaredNorm(), jz.squaredNorm(), jz(0) * jz(0), std::pow(lb.e.dot(jk), 2)};
      for (int q = 0; q < 4; ++q) S.v(kJumpK + q) += wgt * rho * Q[q];
      S.S_jumps += 1.0;
      if (want_jac) {
        // The jump point x_j moves with P (D(x_j, P) = 0, D = Phi_after - Phi_before):
        // dx_j/dP = -D_P / D_x with D_P = d/dP [Phi_after - Phi_before] at fixed x (envelope
        // theorem) and D_x = -[g^chi].a (a = c e). A piecewise integral gets (Leibniz)
        // [G] phi(x_j) dx_j/dP = -rho [G] D_P for every node sum G. The jump sums rho Q change
        // through rho = phi(x_j)/|D_x| and [g] at the moving x_j.
        DrawDerivs<L> dd;
        draw_derivs<L>(st, dr, dd);
        double Gb[kNodeSums], Ga[kNodeSums];
        node_summands<L>(k_active, dr, gkb, gzb, nb, lt, Gb);
        node_summands<L>(k_active, dr, gka, gza, na, lt, Ga);
        const VecL<L> a = c * lb.e;
        const double Dx = -jk.dot(a);
        for (int j = 0; j < 6; ++j) {
          auto dphi = [&](const VecL<L>& gk, const VecL<L>& gz) {
            return -(gk.dot(dd.dwc[j]) + gz.dot(dd.dwz[j])) - (j == 2 ? 0.5 * gk.squaredNorm() : 0.0) -
                   (j == 5 ? 0.5 * gz.squaredNorm() : 0.0);
          };
          const double DP = dphi(gka, gza) - dphi(gkb, gzb);
          for (int row = 0; row < kNodeSums; ++row) S.d(row, j) += -wgt * rho * (Ga[row] - Gb[row]) * DP;
          if (!(Dx < 0)) continue;
          const double dx = -DP / Dx;
          // total d g / dP on each branch at the moving x_j: dg = -J (d omega + dV g), with
          // d omega_chi = dwc_j + a dx_j
          auto dg = [&](const NodeEval<L>& ne, const VecL<L>& gk, const VecL<L>& gz, VecL<L>& dgk, VecL<L>& dgz) {
            const VecL<L> ac = dd.dwc[j] + (j == 2 ? 1.0 : 0.0) * gk + dx * a;
            const VecL<L> az = dd.dwz[j] + (j == 5 ? 1.0 : 0.0) * gz;
            dgk = -(ne.jb.cc * ac + ne.jb.cz * az);
            dgz = -(ne.jb.cz.transpose() * ac + ne.jb.zz * az);
          };
          VecL<L> dgkb, dgzb, dgka, dgza;
          dg(nb, gkb, gzb, dgkb, dgzb);
          dg(na, gka, gza, dgka, dgza);
          const VecL<L> djk = dgka - dgkb, djz = dgza - dgzb;
          const double dDx = -djk.dot(a) - jk.dot(lb.e) * dc[j];
          const double drho = rho * (-jp.x * dx + dDx / (-Dx));
          const double ek = lb.e.dot(jk);
          const double dQ[4] = {2.0 * jk.dot(djk), 2.0 * jz.dot(djz), 2.0 * jz(0) * djz(0),
                                2.0 * ek * lb.e.dot(djk)};
          for (int q = 0; q < 4; ++q) S.d(kJumpK + q, j) += wgt * (drho * Q[q] + rho * dQ[q]);
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
