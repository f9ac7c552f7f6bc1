// The hot loops of the SLR trainer (mc/slr_erm_objective.cpp) and of its data and test sets
// (mc/slr_erm_data.cpp): dot products of float token rows with double vectors, and rank-one
// gradient updates, in double arithmetic. Versions for AVX-512, AVX2/FMA and plain C++, chosen at
// run time by the CPU (never by the thread count); all three give the same bits (see the .cpp).
// The per-sample kernels treat the L rows of one sample together: the vectors k, v (or the
// gradient) are loaded once per element for all rows, and the sample's rows stay in L1 between
// the forward and the backward pass, so one evaluation of (S13) streams the float design matrix
// from memory once.
#pragma once

namespace saddle {
namespace slr {
namespace mc {

// a = x.k, b = x.v (x: D floats; k, v: D doubles).
void dot2(const float* x, const double* k, const double* v, int D, double* a, double* b);
// gk += ck x, gv += cv x.
void axpy2(const float* x, double ck, double cv, int D, double* gk, double* gv);

// The L rows x_l = rows + l D of one sample: a_l = x_l.k, b_l = x_l.v (the same bits as dot2 per
// row).
void sample_dots(const float* rows, int L, const double* k, const double* v, int D, double* a,
                 double* b);
// gk += sum_l ck_l x_l, gv += sum_l cv_l x_l, rows in order (the same bits as axpy2 per row).
void sample_axpy(const float* rows, int L, const double* ck, const double* cv, int D, double* gk,
                 double* gv);

// The instruction set in use (detected once; tests may switch it to compare the versions).
enum class KernelSet { Scalar, Avx2, Avx512 };
KernelSet detect_kernels();  // the best this CPU runs
KernelSet& kernel_set();
const char* to_string(KernelSet k);

}  // namespace mc
}  // namespace slr
}  // namespace saddle
