// Tests of solver/parallel.hpp: iterations start in ascending order (the grid runner's ordered
// output advances as chains finish), every index runs once, the lowest failing index's exception
// is rethrown, for 1 and 2 threads and nested loops.
#include <catch2/catch.hpp>
#include <omp.h>

#include <mutex>
#include <stdexcept>
#include <vector>

#include "solver/parallel.hpp"

using namespace saddle;

TEST_CASE("parallel_for: ascending start order, each index once, nested loops", "[parallel]") {
  const int saved = omp_get_max_threads();
  for (int threads : {1, 2}) {
    omp_set_num_threads(threads);
    std::mutex mu;
    std::vector<std::size_t> order;
    std::vector<int> inner(12 * 5, 0);
    parallel_for(12, [&](std::size_t i) {
      {
        std::lock_guard<std::mutex> lock(mu);
        order.push_back(i);
      }
      parallel_for(5, [&](std::size_t j) { inner[i * 5 + j] += 1; });
    });
    INFO("threads " << threads);
    REQUIRE(order.size() == 12);
    if (threads == 1)
      for (std::size_t k = 0; k < order.size(); ++k) CHECK(order[k] == k);
    for (int c : inner) CHECK(c == 1);
  }
  omp_set_num_threads(saved);
}

TEST_CASE("parallel_for: the lowest failing index's exception reaches the caller", "[parallel]") {
  const int saved = omp_get_max_threads();
  omp_set_num_threads(2);
  try {
    parallel_for(8, [](std::size_t i) {
      if (i >= 3) throw std::runtime_error("index " + std::to_string(i));
    });
    FAIL("no exception");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()) == "index 3");
  }
  omp_set_num_threads(saved);
}
