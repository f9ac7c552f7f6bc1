// One level of parallelism for the whole program: every parallel loop (the grid runner's chains,
// the curve driver's (start, replicate) solves, the trainer's seeds and objective blocks, Monte
// Carlo draws) is a set of OpenMP tasks on ONE team of threads. A loop called inside another
// loop's body does not open a nested team (which OpenMP would give one thread): its iterations
// become tasks of the same team, so a single curve with 8 replicates fills every core, and a grid
// of many chains does not oversubscribe. `--threads N` is the size of that one team: N cores in
// total, whatever the nesting.
//
// Exceptions never leave a task or a parallel region: each iteration runs inside a try block, and
// after every iteration has finished the exception of the LOWEST failing index is rethrown on the
// calling thread (so which error is reported does not depend on the thread count). Iterations
// after a failed one are not started.
//
// Determinism is the caller's part: body(i) writes only its own slot i, and reductions are done
// afterwards in index order; then the result does not depend on the number of threads.
#pragma once
#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <limits>
#include <mutex>
#include <vector>

#include "solver/interrupt.hpp"

namespace saddle {

// The first (lowest-index) exception of a parallel loop: record() from a catch block.
class FirstError {
 public:
  void record(std::size_t i) {
    std::lock_guard<std::mutex> lock(mu_);
    if (i < index_.load(std::memory_order_relaxed)) {
      index_.store(i, std::memory_order_relaxed);
      error_ = std::current_exception();
    }
  }
  bool failed() const { return index_.load(std::memory_order_relaxed) != kNone; }
  // Whether iteration i is after a recorded error (and so need not start).
  bool after_error(std::size_t i) const { return i > index_.load(std::memory_order_relaxed); }
  std::size_t index() const { return index_.load(std::memory_order_relaxed); }
  std::exception_ptr error() const { return error_; }
  void rethrow() const {
    if (error_) std::rethrow_exception(error_);
  }

 private:
  static constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
  std::mutex mu_;
  std::atomic<std::size_t> index_{kNone};
  std::exception_ptr error_;
};

// Whether a call made here runs its iterations as tasks of an enclosing team.
inline bool inside_parallel_team() { return omp_in_parallel() != 0; }

// Runs body(i) for i = 0 .. n-1 in parallel (see above) and returns when all are done; rethrows
// the exception of the lowest failing index. Iterations are claimed in increasing order from a
// shared counter (so an ordered consumer, such as the runner's incremental output, sees a growing
// prefix), by up to team-size workers: outside a parallel region a new team, each of whose
// threads is a worker; inside one, tasks of the enclosing team, the calling thread being one of
// the workers. An iteration after a failed one is not started; every iteration before it runs, so
// the reported error does not depend on the number of threads.
template <class F>
void parallel_for(std::size_t n, const F& body) {
  if (n == 0) return;
  FirstError err;
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < n;) {
      if (err.after_error(i)) continue;
      try {
        body(i);
      } catch (...) {
        err.record(i);
      }
    }
  };
  if (n == 1) {
    worker();
  } else if (inside_parallel_team()) {
    const std::size_t team = static_cast<std::size_t>(omp_get_num_threads());
    const std::size_t extra = std::min(n, team) - 1;
    for (std::size_t w = 0; w < extra; ++w) {
#pragma omp task default(shared)
      worker();
    }
    worker();
#pragma omp taskwait
  } else {
    const int threads = static_cast<int>(std::min<std::size_t>(n, static_cast<std::size_t>(omp_get_max_threads())));
#pragma omp parallel num_threads(threads)
    worker();
  }
  err.rethrow();
}

// Runs run_case(i) for the n cases of a validation (parallel_for), each an equal share of the
// progress (solver/interrupt.hpp). Returns n. When the run is interrupted and `keep_complete`, it
// returns instead how many leading cases completed (a case cut short by the interrupt is not
// complete); any other exception, or an interrupt without `keep_complete`, is rethrown.
// on_prefix(k) is called, one call at a time, each time the leading complete cases grow to k (so
// that a caller can keep what is complete while the rest runs).
template <class F, class P>
std::size_t parallel_cases(std::size_t n, bool keep_complete, const F& run_case, const P& on_prefix) {
  std::vector<char> finished(n, 0);
  std::mutex mu;
  std::size_t prefix = 0;  // under mu
  const WorkShare work = current_work();
  try {
    parallel_for(n, [&](std::size_t i) {
      check_interrupt();
      {
        WorkScope scope(work.part(1.0 / n));
        run_case(i);
      }
      check_interrupt();
      std::lock_guard<std::mutex> lock(mu);
      finished[i] = 1;
      const std::size_t before = prefix;
      while (prefix < n && finished[prefix]) ++prefix;
      if (prefix > before) on_prefix(prefix);
    });
    return n;
  } catch (const std::exception&) {
    if (!keep_complete || !interrupt_requested()) throw;
  }
  return prefix;
}
template <class F>
std::size_t parallel_cases(std::size_t n, bool keep_complete, const F& run_case) {
  return parallel_cases(n, keep_complete, run_case, [](std::size_t) {});
}

// The rows of the first k cases (per_case[i]: the rows of case i), in case order: what
// parallel_cases' leading complete cases hold.
template <class Row>
std::vector<Row> leading_rows(const std::vector<std::vector<Row>>& per_case, std::size_t k) {
  std::vector<Row> rows;
  for (std::size_t i = 0; i < k; ++i) rows.insert(rows.end(), per_case[i].begin(), per_case[i].end());
  return rows;
}

}  // namespace saddle
