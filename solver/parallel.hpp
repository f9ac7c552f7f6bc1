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
// not yet started when an exception is recorded are skipped.
//
// Determinism is the caller's part: body(i) writes only its own slot i, and reductions are done
// afterwards in index order; then the result does not depend on the number of threads.
#pragma once
#include <omp.h>

#include <atomic>
#include <cstddef>
#include <exception>
#include <limits>
#include <mutex>

namespace saddle {

// The first (lowest-index) exception of a parallel loop: record() from a catch block.
class FirstError {
 public:
  void record(std::size_t i) {
    std::lock_guard<std::mutex> lock(mu_);
    if (i < index_) {
      index_ = i;
      error_ = std::current_exception();
    }
    failed_.store(true, std::memory_order_relaxed);
  }
  bool failed() const { return failed_.load(std::memory_order_relaxed); }
  std::size_t index() const { return index_; }
  std::exception_ptr error() const { return error_; }
  void rethrow() const {
    if (error_) std::rethrow_exception(error_);
  }

 private:
  std::mutex mu_;
  std::size_t index_ = std::numeric_limits<std::size_t>::max();
  std::exception_ptr error_;
  std::atomic<bool> failed_{false};
};

// Whether a call made here runs its iterations as tasks of an enclosing team.
inline bool inside_parallel_team() { return omp_in_parallel() != 0; }

// Runs body(i) for i = 0 .. n-1, in parallel as OpenMP tasks (see above), and returns when all
// are done; rethrows the exception of the lowest failing index.
template <class F>
void parallel_for(std::size_t n, const F& body) {
  if (n == 0) return;
  FirstError err;
  // Each task takes the next index from a counter, so iterations START in ascending order
  // whichever task a thread picks (OpenMP runs a waiting thread's own tasks newest first): the
  // grid runner's ordered output then advances as chains finish.
  std::atomic<std::size_t> next{0};
  auto run = [&](std::size_t) {
    const std::size_t i = next.fetch_add(1);
    if (err.failed()) return;  // an earlier error: start nothing new
    try {
      body(i);
    } catch (...) {
      err.record(i);
    }
  };
  if (n == 1) {
    run(0);
  } else if (inside_parallel_team()) {
    // Tasks of the enclosing team; the taskloop waits for them (and its thread helps).
#pragma omp taskloop grainsize(1)
    for (std::size_t i = 0; i < n; ++i) run(i);
  } else {
#pragma omp parallel
#pragma omp single
    {
#pragma omp taskloop grainsize(1)
      for (std::size_t i = 0; i < n; ++i) run(i);
    }
  }
  err.rethrow();
}

}  // namespace saddle
