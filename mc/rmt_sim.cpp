// Monte Carlo of the finite-size RMT model, docs/equations/rmt.md §8.1 (true kernel, ridge baseline, trace
// statistic) and §8.2 (Gaussian-equivalent surrogate).
#include "mc/rmt_sim.hpp"

#include <chrono>
#include <cmath>
#include <stdexcept>

#include "integrators/special.hpp"
#include "mc/random.hpp"
#include "solver/interrupt.hpp"
#include "solver/parallel.hpp"

namespace saddle {
namespace rmt {
namespace mc {

std::string to_string(Model m) {
  switch (m) {
    case Model::True: return "true";
    case Model::Surrogate: return "surrogate";
    case Model::Ridge: return "ridge";
  }
  return "?";
}

Model parse_model(const std::string& s) {
  if (s == "true") return Model::True;
  if (s == "surrogate") return Model::Surrogate;
  if (s == "ridge") return Model::Ridge;
  throw std::invalid_argument("unknown model '" + s + "' (allowed: true, surrogate, ridge)");
}

int SimSetting::p() const { return static_cast<int>(std::lround(c * n)); }

void validate_setting(const SimSetting& s) {
  if (s.n < 2) throw std::invalid_argument("n must be >= 2");
  if (!(s.c > 0.0) || !std::isfinite(s.c)) throw std::invalid_argument("c must be > 0");
  if (!(s.c * s.n * static_cast<double>(s.n) <= 1.2e8))  // before forming p (an int)
    throw std::invalid_argument("p * n > 1.2e8: too large for this simulation");
  if (s.p() < 3) throw std::invalid_argument("p = round(c n) must be >= 3 (mu, w_K, w_Q live on e1..e3)");
  if (static_cast<double>(s.p()) * s.n > 1.2e8)
    throw std::invalid_argument("p * n > 1.2e8: too large for this simulation");
  if (!(s.snr >= 0.0) || !std::isfinite(s.snr)) throw std::invalid_argument("snr must be >= 0");
  if (!s.wk.allFinite() || !s.wq.allFinite()) throw std::invalid_argument("w_K, w_Q must be finite");
  if (s.gammas.empty()) throw std::invalid_argument("empty gamma grid");
  for (double g : s.gammas)
    if (!(g > 0.0) || !std::isfinite(g))
      throw std::invalid_argument("Monte Carlo needs finite gamma > 0");
  if (s.draws < 1) throw std::invalid_argument("draws must be >= 1");
  if (s.models.empty()) throw std::invalid_argument("no model selected");
  if (s.keep_diagonal && !std::isfinite(s.h.kappa_d))
    throw std::invalid_argument("the diagonal can only be kept for finite kappa_d (not exp)");
}


namespace {

// Long steps are cut into blocks with a poll of the interrupt between them (solver/interrupt.hpp),
// so that a stop waits for one block (well under a second at n = 7000), never for one whole
// product or decomposition of a large draw.
constexpr Eigen::Index kPollBlock = 128;

// G += scale M^T M (lower triangle), as a sum over row blocks of M; with `rows`, G += scale M M^T
// as a sum over column blocks.
void gram(const Eigen::MatrixXd& M, double scale, Eigen::MatrixXd& G, bool rows = false) {
  const Eigen::Index len = rows ? M.cols() : M.rows();
  for (Eigen::Index r = 0; r < len; r += kPollBlock) {
    check_interrupt();
    const Eigen::Index b = std::min(kPollBlock, len - r);
    if (rows)
      G.selfadjointView<Eigen::Lower>().rankUpdate(M.middleCols(r, b), scale);
    else
      G.selfadjointView<Eigen::Lower>().rankUpdate(M.middleRows(r, b).transpose(), scale);
  }
}

// Householder reduction of the symmetric A (lower triangle read, overwritten) to the tridiagonal
// T = Q^T A Q, Q = H_0 H_1 ... H_{n-2} (the algorithm of Eigen's Tridiagonalization, one column
// at a time with a poll between columns). Returns T's diagonal and subdiagonal, and v <- Q^T v.
void tridiagonalize(Eigen::MatrixXd& A, Eigen::VectorXd& diag, Eigen::VectorXd& sub, Eigen::VectorXd& v) {
  const Eigen::Index n = A.rows();
  Eigen::VectorXd w(n);
  sub.resize(std::max<Eigen::Index>(n - 1, 0));
  for (Eigen::Index i = 0; i + 1 < n; ++i) {
    if (i % 16 == 0) check_interrupt();
    const Eigen::Index rem = n - i - 1;
    double tau = 0, beta = 0;
    A.col(i).tail(rem).makeHouseholderInPlace(tau, beta);  // H_i = I - tau u u^T, u = (1, essential)
    A.coeffRef(i + 1, i) = 1;
    auto u = A.col(i).tail(rem);
    auto Ar = A.bottomRightCorner(rem, rem);
    // A_r <- H A_r H = A_r - u z^T - z u^T, z = tau A_r u - (tau^2/2)(u^T A_r u) u.
    w.tail(rem).noalias() = Ar.selfadjointView<Eigen::Lower>() * (tau * u);
    w.tail(rem) += (-0.5 * tau * w.tail(rem).dot(u)) * u;
    Ar.selfadjointView<Eigen::Lower>().rankUpdate(u, w.tail(rem), -1.0);
    v.tail(rem) -= (tau * u.dot(v.tail(rem))) * u;  // Q^T v = ... H_1 H_0 v
    A.coeffRef(i + 1, i) = beta;
    sub(i) = beta;
  }
  diag = A.diagonal();
}

// x = (T + g I)^-1 b for the tridiagonal T (diag, sub) and g > 0 (T + g I positive definite):
// LDL^T elimination.
Eigen::VectorXd tridiagonal_solve(const Eigen::VectorXd& diag, const Eigen::VectorXd& sub, double g,
                                  const Eigen::VectorXd& b) {
  const Eigen::Index n = diag.size();
  Eigen::VectorXd d(n), l(std::max<Eigen::Index>(n - 1, 0)), x = b;
  d(0) = diag(0) + g;
  for (Eigen::Index i = 0; i + 1 < n; ++i) {
    l(i) = sub(i) / d(i);
    d(i + 1) = diag(i + 1) + g - l(i) * sub(i);
  }
  for (Eigen::Index i = 1; i < n; ++i) x(i) -= l(i - 1) * x(i - 1);
  x.array() /= d.array();
  for (Eigen::Index i = n - 2; i >= 0; --i) x(i) -= l(i) * x(i + 1);
  return x;
}

}  // namespace

void spectral_errors(const Eigen::MatrixXd& Phi, const Eigen::VectorXd& y,
                     const std::vector<double>& gammas, std::vector<double>& error,
                     std::vector<double>& trace) {
  // The smaller Gram matrix G (n x n when p >= n, else p x p), reduced to a tridiagonal
  // T = Q^T G Q (§8.1.4): E and the trace statistic need T's eigenvalues and one tridiagonal
  // solve per gamma, never G's eigenvectors.
  const int p = static_cast<int>(Phi.rows()), n = static_cast<int>(Phi.cols());
  const double yy = y.squaredNorm();
  error.assign(gammas.size(), 0.0);
  trace.assign(gammas.size(), 0.0);
  const bool wide = p >= n;
  const Eigen::Index m = wide ? n : p;
  Eigen::MatrixXd A = Eigen::MatrixXd::Zero(m, m);
  Eigen::VectorXd v;  // Q^T y (p >= n) or Q^T Phi y (p < n)
  if (wide) {
    gram(Phi, 1.0 / n, A);  // Phi^T Phi / n
    v = y;
  } else {
    gram(Phi, 1.0 / n, A, true);  // Phi Phi^T / n
    check_interrupt();
    v = Phi * y;
  }
  Eigen::VectorXd diag, sub;
  tridiagonalize(A, diag, sub, v);
  A.resize(0, 0);
  check_interrupt();
  Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> es;
  es.computeFromTridiagonal(diag, sub, Eigen::EigenvaluesOnly);
  const Eigen::VectorXd lam = es.eigenvalues().cwiseMax(0.0);
  for (std::size_t k = 0; k < gammas.size(); ++k) {
    const double g = gammas[k];
    const Eigen::VectorXd x = tridiagonal_solve(diag, sub, g, v);  // (G + g)^-1 in Q's basis
    double t = 0.0;
    for (Eigen::Index i = 0; i < m; ++i) t += (g / (lam(i) + g)) * (g / (lam(i) + g));
    if (wide) {
      // (R9): E = (1/n) sum_i (g/(lambda_i + g))^2 c_i^2 = (g^2/n) |(G + g)^-1 y|^2.
      error[k] = g * g * x.squaredNorm() / n;
      trace[k] = t / n;
    } else {
      // E = (1/n)[|y|^2 - sum_i (lambda_i + 2g)/(lambda_i + g)^2 b_i^2 / n] with
      // sum_i (lambda_i + 2g)/(lambda_i + g)^2 b_i^2 = b^T x + g |x|^2, x = (G + g)^-1 b, b = Phi y.
      error[k] = (yy - (v.dot(x) + g * x.squaredNorm()) / n) / n;
      trace[k] = (t + (n - p)) / n;  // n - p zero eigenvalues of Phi^T Phi / n
    }
  }
}

DrawResult simulate_draw(const SimSetting& s, int draw_index) {
  const int n = s.n, p = s.p();
  const double sqp = std::sqrt(static_cast<double>(p));
  // §8.1.1: y, Z, X = Z + mu y^T with mu = sqrt(snr) e1.
  Rng rng(s.seed, static_cast<std::uint64_t>(draw_index), 0);
  Eigen::VectorXd y(n);
  for (int i = 0; i < n; ++i) y(i) = rng.sign();
  Eigen::MatrixXd X(p, n);
  for (int j = 0; j < n; ++j) {
    if (j % 64 == 0) check_interrupt();
    for (int i = 0; i < p; ++i) X(i, j) = rng.normal();
  }
  X.row(0) += std::sqrt(s.snr) * y.transpose();
  DrawResult out;
  Eigen::MatrixXd T;  // §8.1.2: T = X^T X + a b^T, a = X^T w_K, b = X^T w_Q
  auto build_T = [&] {
    if (T.size()) return;
    T = Eigen::MatrixXd::Zero(n, n);
    gram(X, 1.0, T);  // X^T X
    T.triangularView<Eigen::StrictlyUpper>() = T.transpose();
    Eigen::VectorXd a = X.topRows(3).transpose() * s.wk, b = X.topRows(3).transpose() * s.wq;
    T.noalias() += a * b.transpose();
  };
  // An interrupt is polled between the steps, and inside each long one (between its blocks,
  // kPollBlock): a stop never waits for a whole product or decomposition.
  for (Model m : s.models) {
    check_interrupt();
    std::vector<double> e, t;
    if (m == Model::Ridge) {
      spectral_errors(X, y, s.gammas, e, t);  // §8.1.6: Phi = X
    } else {
      build_T();
      check_interrupt();
      Eigen::MatrixXd K(n, n);
      if (m == Model::True) {
        // §8.1.3: K_ij = f_c(T_ij / sqrt p) / sqrt p, f_c = f - a0; K_ii = 0 unless kept
        // (f is evaluated off the diagonal only: T_ii / sqrt p ~ sqrt p overflows exp-type f).
        const double a0 = s.h.a0;
        for (int j = 0; j < n; ++j) {
          if (j % 64 == 0) check_interrupt();
          for (int i = 0; i < n; ++i)
            K(i, j) = (i == j && !s.keep_diagonal) ? 0.0 : (s.act.raw(T(i, j) / sqp) - a0) / sqp;
        }
      } else {
        // §8.2: K~ = a1 (T/p - I) + sigma Xi / sqrt p (+ kappa_d I), Xi = (G + G^T)/sqrt 2, diag 0.
        Rng rx(s.seed, static_cast<std::uint64_t>(draw_index), 1);
        const double sig = std::sqrt(s.h.sigma2), a1 = s.h.a1;
        K = a1 * (T / p);
        K.diagonal().array() -= a1;
        if (s.keep_diagonal) K.diagonal().array() += s.h.kappa_d;
        for (int j = 0; j < n; ++j) {
          if (j % 64 == 0) check_interrupt();
          for (int i = j + 1; i < n; ++i) {
            const double xi = rx.normal();  // (G_ij + G_ji)/sqrt 2 ~ N(0, 1)
            K(i, j) += sig * xi / sqp;
            K(j, i) += sig * xi / sqp;
          }
        }
      }
      Eigen::MatrixXd Phi(p, n);  // §8.1.4: Phi = X K, in column blocks
      for (Eigen::Index j = 0; j < n; j += kPollBlock) {
        check_interrupt();
        const Eigen::Index b = std::min<Eigen::Index>(kPollBlock, n - j);
        Phi.middleCols(j, b).noalias() = X * K.middleCols(j, b);
      }
      spectral_errors(Phi, y, s.gammas, e, t);
    }
    out.error.push_back(std::move(e));
    out.trace.push_back(std::move(t));
  }
  return out;
}

SimSummary simulate(const SimSetting& s) {
  validate_setting(s);
  auto t0 = std::chrono::steady_clock::now();
  std::vector<DrawResult> draws(s.draws);
  // Draws are tasks of one thread team (solver/parallel.hpp); an interrupt or an error in a draw
  // stops the loop and is rethrown here.
  const WorkShare work = current_work();  // progress: each draw an equal part (solver/interrupt.hpp)
  parallel_for(static_cast<std::size_t>(s.draws), [&](std::size_t d) {
    check_interrupt();
    draws[d] = simulate_draw(s, static_cast<int>(d));
    work.add(1.0 / s.draws);
  });
  SimSummary sum;
  sum.n = s.n;
  sum.p = s.p();
  sum.draws = s.draws;
  const std::size_t M = s.models.size(), G = s.gammas.size();
  // Mean and s.e. (sd / sqrt(draws)) of x(draw, model, gamma), summed in draw order.
  auto stat = [&](auto x) {
    std::vector<std::vector<Estimate>> out(M, std::vector<Estimate>(G));
    std::vector<double> v(draws.size());
    for (std::size_t m = 0; m < M; ++m)
      for (std::size_t k = 0; k < G; ++k) {
        for (std::size_t d = 0; d < draws.size(); ++d) v[d] = x(draws[d], m, k);
        out[m][k] = summarize(v);
      }
    return out;
  };
  sum.error = stat([](const DrawResult& d, std::size_t m, std::size_t k) { return d.error[m][k]; });
  sum.trace = stat([](const DrawResult& d, std::size_t m, std::size_t k) { return d.trace[m][k]; });
  for (std::size_t r = 0; r < M; ++r)
    if (s.models[r] == Model::Ridge) {
      sum.diff_ridge = stat([r](const DrawResult& d, std::size_t m, std::size_t k) {
        return d.error[m][k] - d.error[r][k];
      });
      break;
    }
  sum.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return sum;
}

}  // namespace mc
}  // namespace rmt
}  // namespace saddle
