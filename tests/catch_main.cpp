// Catch2 v2 main, compiled once and shared by every module's test program.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
