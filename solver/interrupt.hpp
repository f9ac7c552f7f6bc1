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
// (exit code 130).
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

// Points done / points to do of the running grid (the runner updates them; a front end may poll).
struct ProgressCounters {
  std::atomic<std::size_t> done{0}, total{0};
};
inline ProgressCounters& progress_counters() {
  static ProgressCounters p;
  return p;
}

}  // namespace saddle
