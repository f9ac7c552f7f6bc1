// solver/parallel.hpp: every iteration exactly once, nested loops share one team, exceptions are
// carried out of the team (lowest index first), never terminating the process.
#include <catch2/catch.hpp>
#include <omp.h>

#include <atomic>
#include <numeric>
#include <stdexcept>
#include <thread>
#include <vector>

#include "solver/parallel.hpp"

using namespace saddle;

TEST_CASE("parallel_for: every index once, any thread count", "[solver][parallel]") {
  for (int threads : {1, 2, 4}) {
    omp_set_num_threads(threads);
    for (std::size_t n : {0, 1, 2, 7, 100}) {
      std::vector<std::atomic<int>> hits(n);
      parallel_for(n, [&](std::size_t i) { ++hits[i]; });
      for (std::size_t i = 0; i < n; ++i) CHECK(hits[i] == 1);
    }
  }
  omp_set_num_threads(2);
}

TEST_CASE("parallel_for: nested loops become tasks of one team", "[solver][parallel]") {
  omp_set_num_threads(2);
  // An outer loop of 1 (a single curve) whose inner loop has 8 iterations: with a second thread in
  // the team the inner iterations run on both threads (a nested team would get one thread).
  std::vector<int> thread_of(8, -1);
  std::vector<std::vector<int>> sum(3, std::vector<int>(5, 0));
  parallel_for(1, [&](std::size_t) {
    parallel_for(8, [&](std::size_t i) {
      thread_of[i] = omp_get_thread_num();
      // keep each task busy long enough for the idle thread to take some
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    });
  });
  bool both = false;
  for (int t : thread_of) both = both || t != thread_of[0];
  if (omp_get_max_threads() >= 2) CHECK(both);
  // Two levels of real work: results in their slots, whatever the scheduling.
  parallel_for(3, [&](std::size_t a) { parallel_for(5, [&](std::size_t b) { sum[a][b] = int(10 * a + b); }); });
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 5; ++b) CHECK(sum[a][b] == 10 * a + b);
}

TEST_CASE("parallel_for: the lowest failing index is rethrown, nothing escapes", "[solver][parallel]") {
  for (int threads : {1, 2, 3}) {
    omp_set_num_threads(threads);
    INFO("threads " << threads);
    std::vector<std::atomic<int>> ran(50);
    try {
      parallel_for(50, [&](std::size_t i) {
        ++ran[i];
        if (i == 17 || i == 31) throw std::out_of_range("at " + std::to_string(i));
      });
      FAIL("no exception");
    } catch (const std::out_of_range& e) {  // the type is kept
      CHECK(std::string(e.what()) == "at 17");
    }
    for (std::size_t i = 0; i <= 17; ++i) CHECK(ran[i] == 1);  // every iteration before it ran
    // Thrown from a nested loop inside an outer one: carried out through both levels.
    CHECK_THROWS_WITH(parallel_for(4,
                                   [&](std::size_t a) {
                                     parallel_for(6, [&](std::size_t b) {
                                       if (a == 2 && b == 3) throw std::runtime_error("inner");
                                     });
                                   }),
                      "inner");
  }
  omp_set_num_threads(2);
}
