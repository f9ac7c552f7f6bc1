// The hot loops of the SLR trainer (mc/slr_erm_objective.cpp) and of its data and test sets
// (mc/slr_erm_data.cpp): dot products of float token rows with double vectors, and rank-one
// gradient updates, in double arithmetic. Each has an AVX2/FMA version chosen at run time and a
// scalar fallback; the choice depends on the CPU only (never on the thread count), so results
// are the same for any number of threads on one machine.
#pragma once

namespace saddle {
namespace slr {
namespace mc {

// a = x.k, b = x.v (x: D floats; k, v: D doubles).
void dot2(const float* x, const double* k, const double* v, int D, double* a, double* b);
// gk += ck x, gv += cv x.
void axpy2(const float* x, double ck, double cv, int D, double* gk, double* gv);

// Whether the AVX2/FMA versions are in use on this CPU.
bool kernels_use_avx2();

}  // namespace mc
}  // namespace slr
}  // namespace saddle
