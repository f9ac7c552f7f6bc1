// Process-wide run control shared by the solvers, the grid runner and the front ends (the CLI and
// the Python module): an interrupt flag that long loops poll, and the progress counters of the
// current run. The flag is a lock-free atomic, so setting it is async-signal-safe (a SIGINT
// handler, or the Python module's signal watcher, may call request_interrupt()).
#pragma once
#include <atomic>
#include <cstddef>
#include <stdexcept>
#include <string>

namespace saddle {

// Thrown by check_interrupt() once an interrupt was requested; the front end reports it.
// The grid runner throws it too, after SIGINT/SIGTERM, once every complete chain is written
// (exit code 130): a signal sets the interrupt flag, so the chains in progress stop within a
// fraction of a second (every long loop polls it) and are dropped.
struct Interrupted : std::runtime_error {
  explicit Interrupted(const std::string& what = "interrupted") : std::runtime_error(what) {}
};

inline std::atomic<bool>& interrupt_flag() {
  static std::atomic<bool> flag{false};
  return flag;
}
inline void request_interrupt() { interrupt_flag().store(true, std::memory_order_relaxed); }
inline void clear_interrupt() { interrupt_flag().store(false, std::memory_order_relaxed); }
inline bool interrupt_requested() { return interrupt_flag().load(std::memory_order_relaxed); }
// Called between points (outside OpenMP regions, or inside a try block within them): throws
// Interrupted when asked to stop. Loops that may run inside a parallel region without a try block
// (the fixed-point iteration) poll interrupt_requested() and stop early instead: an exception must
// not leave an OpenMP region. The runner drops a chain finished after an interrupt.
inline void check_interrupt() {
  if (interrupt_requested()) throw Interrupted();
}

// Points done / points to do of the running grid (the runner updates them, point by point, a
// few times a second; a front end may poll).
struct ProgressCounters {
  std::atomic<std::size_t> done{0}, total{0};
};
inline ProgressCounters& progress_counters() {
  static ProgressCounters p;
  return p;
}

// Progress inside one work item (a chain of the grid runner): the code computing the item adds
// the fractions of it that are done (a solve of a curve point, a seed of a simulation), from any
// thread; the runner shows them as points. Fractions are summed in units of 2^-24 of the item.
class WorkMeter {
 public:
  void add(double fraction) {
    if (fraction > 0) units_.fetch_add(static_cast<long long>(fraction * kUnit + 0.5), std::memory_order_relaxed);
  }
  double done() const {  // in [0, 1]
    const double f = static_cast<double>(units_.load(std::memory_order_relaxed)) / kUnit;
    return f < 1.0 ? f : 1.0;
  }
  void reset() { units_.store(0, std::memory_order_relaxed); }

 private:
  static constexpr double kUnit = 16777216.0;
  std::atomic<long long> units_{0};
};

// The share of a work item that the calling code computes: `meter` (null: no one listens) and
// the fraction of the item it stands for. The runner sets it on the thread that runs a chain; a
// solver that splits its work into tasks reads it on the calling thread (current_work()) and
// passes part of it to each task (the tasks run on other threads, which do not see it).
struct WorkShare {
  WorkMeter* meter = nullptr;
  double share = 1.0;
  void add(double fraction) const {
    if (meter) meter->add(fraction * share);
  }
  WorkShare part(double fraction) const { return {meter, share * fraction}; }
};
inline WorkShare& current_work() {
  static thread_local WorkShare w;
  return w;
}
// Sets current_work() for a scope (a task that calls code reporting its own progress).
class WorkScope {
 public:
  explicit WorkScope(const WorkShare& w) : saved_(current_work()) { current_work() = w; }
  ~WorkScope() { current_work() = saved_; }
  WorkScope(const WorkScope&) = delete;
  WorkScope& operator=(const WorkScope&) = delete;

 private:
  WorkShare saved_;
};

}  // namespace saddle
