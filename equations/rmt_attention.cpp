// Deterministic equivalent of nonlinear attention, docs/equations/rmt.md §6: bulk (R1)-(R2), spike step
// (R3)-(R4), error (R5) with the exact derivative (R6).
#include "equations/rmt_attention.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <stdexcept>

namespace saddle {
namespace rmt {

AttentionParams make_params(double c, double gamma, const HermiteData& h, bool keep_diagonal,
                            const Geometry& geo) {
  if (!(c > 0.0) || !std::isfinite(c)) throw std::invalid_argument("c must be a finite number > 0");
  if (!(gamma > 0.0) || !std::isfinite(gamma))
    throw std::invalid_argument("gamma must be a finite number > 0 for the attention DE");
  if (!std::isfinite(h.a1) || !std::isfinite(h.sigma2))
    throw std::invalid_argument("Hermite data are not finite");
  if (keep_diagonal && !std::isfinite(h.kappa_d))
    throw std::invalid_argument(
        "the diagonal can only be kept for finite kappa_d = lim f(t)/t (not for exp); "
        "drop --keep-diagonal");
  for (const auto* v : {&geo.mu, &geo.wk, &geo.wq})
    if (!v->allFinite()) throw std::invalid_argument("mu, w_K, w_Q must be finite");
  AttentionParams p;
  p.c = c;
  p.gamma = gamma;
  p.a1 = h.a1;
  p.sigma2 = h.sigma2;
  p.kappa_d = keep_diagonal ? h.kappa_d : 0.0;
  p.geo = geo;
  return p;
}

BulkEval bulk_eval(const AttentionParams& p, const MPRule& rule, double delta, double dtilde) {
  const double c = p.c, g = p.gamma, a1 = p.a1, kd = p.kappa_d, s2c = p.sigma2 / c;
  const double kappa = s2c * dtilde, opd = 1.0 + delta;
  double Iu = 0, Iu2 = 0, Ia = 0, Iv = 0, Iv2a = 0, Iv2b = 0, Iv2c = 0;
  for (int j = 0; j < rule.size(); ++j) {
    const double s = rule.s[j], w = rule.w[j];
    const double d = a1 * (s / c - 1.0) + kd;
    const double sd2 = s * d * d;
    const double ks = 1.0 + kappa * s, rho = 1.0 / ks;
    const double u = g * opd + sd2 * rho;          // (R1)
    const double v = g * ks + sd2 / opd;           // (R2)
    const double iu = 1.0 / u, iv = 1.0 / v;
    Iu += w * iu;
    Iu2 += w * iu * iu;
    Ia += w * sd2 * s * rho * rho * iu * iu;       // <s^2 d^2 rho^2 / u^2>
    Iv += w * s * iv;
    Iv2a += w * s * sd2 * iv * iv;                 // <s^2 d^2 / v^2>
    Iv2b += w * s * s * iv * iv;                   // <s^2 / v^2>
    Iv2c += w * s * ks * iv * iv;                  // <s (1 + kappa s) / v^2>
  }
  BulkEval e;
  e.map_delta_tilde = Iu;
  e.map_delta = s2c * Iv;
  e.F1 = dtilde - Iu;
  e.F2 = delta - s2c * Iv;
  // §6.4 partial derivatives (the Newton Jacobian and the right-hand side of (R6)).
  e.J(0, 0) = g * Iu2;
  e.J(0, 1) = 1.0 - s2c * Ia;
  e.J(1, 0) = 1.0 - s2c * Iv2a / (opd * opd);
  e.J(1, 1) = g * s2c * s2c * Iv2b;
  e.dF_dgamma(0) = opd * Iu2;
  e.dF_dgamma(1) = s2c * Iv2c;
  return e;
}

namespace {

double rel_residual(const BulkEval& e, double delta, double dtilde) {
  return std::max(std::abs(e.F1) / std::abs(dtilde), std::abs(e.F2) / (1.0 + std::abs(delta)));
}

// (R3)-(R4) in a scalar type S (double, or complex<double> for the complex-step derivative).
template <class S>
S spike_q_impl(const AttentionParams& p, const MPRule& rule, S gamma, S delta, S dtilde) {
  constexpr int k = 3, r = k + 1;
  using MatS = Eigen::Matrix<S, Eigen::Dynamic, Eigen::Dynamic>;
  using VecS = Eigen::Matrix<S, Eigen::Dynamic, 1>;
  const double c = p.c, a1 = p.a1, kd = p.kappa_d;
  const S one(1.0), s2c(p.sigma2 / c);
  const S kappa = s2c * dtilde;
  const S gu = gamma * (one + delta);
  S mrho(0.0), mphi(0.0);
  S G[3][3];
  for (auto& row : G)
    for (auto& x : row) x = S(0.0);
  for (int j = 0; j < rule.size(); ++j) {
    const S s(rule.s[j]), w(rule.w[j]);
    const S d(a1 * (rule.s[j] / c - 1.0) + kd);
    const S rho = one / (one + kappa * s);
    const S phi = s * rho;
    const S iu = w / (gu + s * d * d * rho);  // w / u
    const S b2 = d * phi, b3 = d * rho;       // b1 = 1, b2 = d phi, b3 = d rho
    mrho += w * rho;
    mphi += w * phi;
    G[0][0] += iu;
    G[0][1] += b2 * iu;
    G[0][2] += b3 * iu;
    G[1][1] += b2 * b2 * iu;
    G[1][2] += b2 * b3 * iu;
    G[2][2] += b3 * b3 * iu;
  }
  G[1][0] = G[0][1];
  G[2][0] = G[0][2];
  G[2][1] = G[1][2];
  // (R3): M_S = [mu_S | I_k], W_S = I_k + w_K w_Q^T, Delta_S = (a1/c) M_S^T W_S M_S, M = M_S^T M_S.
  Eigen::Matrix<double, k, r> MS;
  MS.col(0) = p.geo.mu;
  MS.template rightCols<k>().setIdentity();
  Eigen::Matrix3d WS = Eigen::Matrix3d::Identity() + p.geo.wk * p.geo.wq.transpose();
  Eigen::Matrix4d DeltaS = (a1 / c) * MS.transpose() * WS * MS;
  Eigen::Matrix4d M = MS.transpose() * MS;
  MatS Dl = DeltaS.cast<S>(), Mm = M.cast<S>();
  MatS I = MatS::Identity(r, r);
  MatS Mrho = (I + (kappa * mrho) * Mm).partialPivLu().solve(Mm);  // (I + kappa<rho>M)^-1 M
  // C in r x r blocks ordered (b1, b2, b3).
  MatS C = MatS::Zero(3 * r, 3 * r);
  C.block(0, 0, r, r) = mphi * Dl.transpose() * Dl + (mrho * mrho) * Dl.transpose() * Mrho * Dl;
  C.block(0, r, r, r) = Dl.transpose();
  C.block(0, 2 * r, r, r) = mrho * Dl.transpose() * Mrho;
  C.block(r, 0, r, r) = Dl;
  C.block(2 * r, 0, r, r) = mrho * Mrho * Dl;
  C.block(2 * r, 2 * r, r, r) = Mrho;
  MatS GI = MatS::Zero(3 * r, 3 * r);  // G (x) I_r
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) GI.block(a * r, b * r, r, r) = G[a][b] * I;
  VecS gy = VecS::Zero(3 * r);
  for (int a = 0; a < 3; ++a) gy(a * r) = G[a][0];  // (G11 e1; G21 e1; G31 e1)
  MatS A = MatS::Identity(3 * r, 3 * r) + C * GI;
  VecS x = A.partialPivLu().solve(C * gy);
  // (R4): q = G11 - g_y^T (I + C (G (x) I))^-1 C g_y (plain transpose, no conjugation).
  return G[0][0] - (gy.transpose() * x)(0);
}

}  // namespace

double spike_q(const AttentionParams& p, const MPRule& rule, double delta, double dtilde) {
  using ld = long double;
  return static_cast<double>(spike_q_impl<ld>(p, rule, p.gamma, delta, dtilde));
}

std::vector<std::complex<double>> integrand_poles(const AttentionParams& p, double delta,
                                                   double dtilde) {
  // D(s) = gamma(1+delta)(1 + kappa s) + s (alpha s + beta)^2, alpha = a1/c, beta = kappa_d - a1:
  // u = D / (1 + kappa s) and v = D / (1 + delta); rho and phi have the pole s = -1/kappa.
  const double alpha = p.a1 / p.c, beta = p.kappa_d - p.a1;
  const double kappa = p.sigma2 / p.c * dtilde, g1 = p.gamma * (1.0 + delta);
  std::vector<std::complex<double>> poles =
      poly_roots({g1, beta * beta + g1 * kappa, 2.0 * alpha * beta, alpha * alpha});
  if (kappa > 0.0) poles.emplace_back(-1.0 / kappa, 0.0);
  return poles;
}

namespace {

// Solves the bulk (R1)-(R2) from (delta, dtilde) on `rule` with the solver module; fills
// res.delta, delta_tilde, iterations (added), residual, converged, reason, path. opt.max_iter
// caps the iterations of the whole point: those already in res.iterations (pass 1) count.
// Returns the bulk evaluation at the result (the system's last one when it was there, else a
// new one).
BulkEval solve_bulk(const AttentionParams& p, const MPRule& rule, const AttentionOptions& opt,
                    double delta, double dtilde, AttentionResult& res) {
  const BulkSystem sys(p, &rule);
  Vec x0(2);
  x0 << delta, dtilde;
  const SolveResult sr = solve(sys, x0, bulk_solver_options(opt, opt.max_iter - res.iterations));
  res.delta = sr.x(0);
  res.delta_tilde = sr.x(1);
  res.iterations += sr.summary.steps;
  res.residual = sr.summary.residual;
  res.converged = sr.summary.converged;
  res.reason = sr.summary.reason;
  res.path = sr.summary.path;
  BulkEval e;
  if (!sys.last_eval(res.delta, res.delta_tilde, e)) e = bulk_eval(p, rule, res.delta, res.delta_tilde);
  return e;
}

// Derivatives (R6) and the spike step (R4)-(R5) at the solved bulk state.
// `e` = bulk_eval(p, rule) at the solved state.
void finish_spike(const AttentionParams& p, const MPRule& rule, const BulkEval& e, AttentionResult& res) {
  const double g = p.gamma, delta = res.delta, dtilde = res.delta_tilde;
  // (R6): J (delta', delta_tilde')^T = -dF/dgamma.
  Eigen::Vector2d dx = -e.J.partialPivLu().solve(e.dF_dgamma);
  res.ddelta = dx(0);
  res.ddelta_tilde = dx(1);
  // (R4) and its total derivative by a complex step along (1, delta', delta_tilde') (§6.4.3).
  // Evaluated in extended precision: A = I + C (G (x) I) has entries ~ 1/gamma (the atom of mu_S
  // at s = 0 and the peak at s_0), so double precision loses ~log10(1/gamma) digits of q'.
  using cld = std::complex<long double>;
  const long double h = 1e-30L * g;
  cld qc = spike_q_impl<cld>(p, rule, cld(g, h), cld(delta, h * dx(0)), cld(dtilde, h * dx(1)));
  res.q = static_cast<double>(qc.real());
  res.dq = static_cast<double>(qc.imag() / h);
  res.error = -g * g * res.dq;  // (R5)
  if (!std::isfinite(res.q) || !std::isfinite(res.error)) {
    res.converged = false;
    res.reason = Termination::NonFinite;
  }
}

}  // namespace

SolverOptions bulk_solver_options(const AttentionOptions& opt, int max_iter) {
  constexpr int kSteps = 60, kHalvings = 39;
  SolverOptions s;
  s.method = Method::Newton;
  s.newton_halvings = kHalvings;
  s.newton_steps = 1 + kSteps * (kHalvings + 1);  // evaluations of kSteps steps
  s.newton_fallback = Method::Damped;
  s.mix = 0.5;
  s.tol = opt.tol;
  s.max_iter = max_iter;  // 0 (spent by pass 1): no step, the start is reported
  s.newton_polish = false;
  return s;
}

AttentionResult solve_attention(const AttentionParams& p, const MPRule& rule,
                                const AttentionOptions& opt) {
  AttentionResult res;
  const BulkEval e = solve_bulk(p, rule, opt, 0.0, 1.0 / p.gamma, res);  // start of §6.2: (0, 1/gamma)
  finish_spike(p, rule, e, res);
  return res;
}

AttentionResult solve_attention(const AttentionParams& p, const AttentionOptions& opt) {
  // Pass 1: rule clustered at the poles of the sigma^2 = 0 integrands (gamma + s d^2).
  MPRule rule = mp_split_rule(p.c, p.gamma, p.a1, p.kappa_d, opt.nodes_per_side);
  AttentionResult res;
  BulkEval e = solve_bulk(p, rule, opt, 0.0, 1.0 / p.gamma, res);
  // Pass 2 (sigma^2 > 0): re-cluster at the actual poles of the integrands at the solution
  // (roots of D(s) and -1/kappa; e.g. the edge s = 0 at c = 1 when kappa is large) and re-solve
  // from the pass-1 solution (1-3 Newton steps).
  if (p.sigma2 > 0.0 && std::isfinite(res.delta) && std::isfinite(res.delta_tilde)) {
    rule = mp_split_rule(p.c, integrand_poles(p, res.delta, res.delta_tilde),
                         opt.nodes_per_side);
    e = solve_bulk(p, rule, opt, res.delta, res.delta_tilde, res);
  }
  finish_spike(p, rule, e, res);
  return res;
}

const BulkEval& BulkSystem::eval(double delta, double dtilde) const {
  if (!(has_last_ && last_delta_ == delta && last_dtilde_ == dtilde)) {
    last_ = bulk_eval(p_, *rule_, delta, dtilde);
    last_delta_ = delta;
    last_dtilde_ = dtilde;
    has_last_ = true;
  }
  return last_;
}

bool BulkSystem::last_eval(double delta, double dtilde, BulkEval& e) const {
  if (!(has_last_ && last_delta_ == delta && last_dtilde_ == dtilde)) return false;
  e = last_;
  return true;
}

Vec BulkSystem::map(const Vec& x) const {
  const BulkEval& e = eval(x(0), x(1));
  Vec out(2);
  out << e.map_delta, e.map_delta_tilde;
  return out;
}

void BulkSystem::project(Vec& x) const {
  if (!(x(0) >= 0.0)) x(0) = 0.0;
  if (!(x(1) > 0.0)) x(1) = 1e-300;
}

double BulkSystem::residual_norm(const Vec& x, const Vec& fx) const {
  // F1 = delta_tilde - (R1) rhs, F2 = delta - (R2) rhs.
  return std::max(std::abs(x(1) - fx(1)) / std::abs(x(1)), std::abs(x(0) - fx(0)) / (1.0 + std::abs(x(0))));
}

bool BulkSystem::chart_residual(const Vec& x, Vec& R, Eigen::MatrixXd& JL, double& norm) const {
  const double delta = x(0), dtilde = x(1);
  const BulkEval& e = eval(delta, dtilde);
  norm = rel_residual(e, delta, dtilde);
  // R = (F1/delta_tilde, F2/(1+delta)) and dR/d(log(1+delta), log delta_tilde) from §6.4's J.
  const double opd = 1.0 + delta;
  R.resize(2);
  R << e.F1 / dtilde, e.F2 / opd;
  JL.resize(2, 2);
  JL(0, 0) = e.J(0, 0) * opd / dtilde;
  JL(0, 1) = e.J(0, 1) - R(0);
  JL(1, 0) = e.J(1, 0) - R(1);
  JL(1, 1) = e.J(1, 1) * dtilde / opd;
  return true;
}

void BulkSystem::to_chart(const Vec& x, Vec& z) const {
  z.resize(2);
  z << std::log1p(x(0)), std::log(x(1));
}

void BulkSystem::from_chart(const Vec& z, Vec& x) const {
  x.resize(2);
  x << std::expm1(z(0)), std::exp(z(1));
}

}  // namespace rmt
}  // namespace saddle
