// Kernels of the SLR trainer: see mc/slr_erm_kernels.hpp.
//
// One arithmetic for every instruction set: a dot product is eight lane sums (lane j adds the
// products of the elements i = j mod 8 by fused multiply-adds, in increasing i), reduced as
// ((l0 + l4) + (l2 + l6)) + ((l1 + l5) + (l3 + l7)), then the D mod 8 tail elements are added
// in order by fused multiply-adds; a rank-one update is one fused multiply-add per element and
// row, rows in order. The AVX-512, AVX2 and scalar (std::fma) versions therefore give the same
// bits, and the fused per-sample kernels the same bits as the per-row ones.
#include "mc/slr_erm_kernels.hpp"

#include <cmath>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define SADDLE_SLR_X86 1
#endif

namespace saddle {
namespace slr {
namespace mc {

namespace {

// ---- scalar (std::fma) ------------------------------------------------------------------------
double lane_reduce(const double* l) {
  return ((l[0] + l[4]) + (l[2] + l[6])) + ((l[1] + l[5]) + (l[3] + l[7]));
}
void dot2_scalar(const float* x, const double* k, const double* v, int D, double* a, double* b) {
  double la[8] = {0, 0, 0, 0, 0, 0, 0, 0}, lb[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int i = 0;
  for (; i + 8 <= D; i += 8)
    for (int j = 0; j < 8; ++j) {
      la[j] = std::fma(double(x[i + j]), k[i + j], la[j]);
      lb[j] = std::fma(double(x[i + j]), v[i + j], lb[j]);
    }
  double sa = lane_reduce(la), sb = lane_reduce(lb);
  for (; i < D; ++i) {
    sa = std::fma(double(x[i]), k[i], sa);
    sb = std::fma(double(x[i]), v[i], sb);
  }
  *a = sa;
  *b = sb;
}
void axpy2_scalar(const float* x, double ck, double cv, int D, double* gk, double* gv) {
  for (int i = 0; i < D; ++i) {
    gk[i] = std::fma(double(x[i]), ck, gk[i]);
    gv[i] = std::fma(double(x[i]), cv, gv[i]);
  }
}
void sample_dots_scalar(const float* rows, int L, const double* k, const double* v, int D,
                        double* a, double* b) {
  for (int l = 0; l < L; ++l) dot2_scalar(rows + static_cast<std::size_t>(l) * D, k, v, D, &a[l], &b[l]);
}
void sample_axpy_scalar(const float* rows, int L, const double* ck, const double* cv, int D,
                        double* gk, double* gv) {
  for (int i = 0; i < D; ++i) {
    double g = gk[i], h = gv[i];
    for (int l = 0; l < L; ++l) {
      const double x = rows[static_cast<std::size_t>(l) * D + i];
      g = std::fma(x, ck[l], g);
      h = std::fma(x, cv[l], h);
    }
    gk[i] = g;
    gv[i] = h;
  }
}

#ifdef SADDLE_SLR_X86
// ---- AVX2/FMA ---------------------------------------------------------------------------------
#define SADDLE_AVX2 __attribute__((target("avx2,fma")))
SADDLE_AVX2 inline double reduce8(__m256d lo, __m256d hi) {  // lanes 0-3, 4-7
  const __m256d t = _mm256_add_pd(lo, hi);                    // l_j + l_{j+4}
  __m128d s = _mm_add_pd(_mm256_castpd256_pd128(t), _mm256_extractf128_pd(t, 1));
  return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}
SADDLE_AVX2 inline double fma1(double x, double y, double z) {
  return _mm_cvtsd_f64(_mm_fmadd_sd(_mm_set_sd(x), _mm_set_sd(y), _mm_set_sd(z)));
}
// Rows r0 .. r0 + R - 1 (R <= 2) of a sample against k and v.
template <int R>
SADDLE_AVX2 void dots_avx2(const float* rows, int D, const double* k, const double* v, double* a,
                           double* b) {
  __m256d al[R], ah[R], bl[R], bh[R];
  for (int r = 0; r < R; ++r) al[r] = ah[r] = bl[r] = bh[r] = _mm256_setzero_pd();
  int i = 0;
  for (; i + 8 <= D; i += 8) {
    const __m256d kl = _mm256_loadu_pd(k + i), kh = _mm256_loadu_pd(k + i + 4);
    const __m256d vl = _mm256_loadu_pd(v + i), vh = _mm256_loadu_pd(v + i + 4);
    for (int r = 0; r < R; ++r) {
      const __m256 xf = _mm256_loadu_ps(rows + static_cast<std::size_t>(r) * D + i);
      const __m256d xl = _mm256_cvtps_pd(_mm256_castps256_ps128(xf));
      const __m256d xh = _mm256_cvtps_pd(_mm256_extractf128_ps(xf, 1));
      al[r] = _mm256_fmadd_pd(xl, kl, al[r]);
      ah[r] = _mm256_fmadd_pd(xh, kh, ah[r]);
      bl[r] = _mm256_fmadd_pd(xl, vl, bl[r]);
      bh[r] = _mm256_fmadd_pd(xh, vh, bh[r]);
    }
  }
  for (int r = 0; r < R; ++r) {
    const float* x = rows + static_cast<std::size_t>(r) * D;
    double sa = reduce8(al[r], ah[r]), sb = reduce8(bl[r], bh[r]);
    for (int j = i; j < D; ++j) {
      sa = fma1(double(x[j]), k[j], sa);
      sb = fma1(double(x[j]), v[j], sb);
    }
    a[r] = sa;
    b[r] = sb;
  }
}
SADDLE_AVX2 void sample_dots_avx2(const float* rows, int L, const double* k, const double* v,
                                  int D, double* a, double* b) {
  int l = 0;
  for (; l + 2 <= L; l += 2) dots_avx2<2>(rows + static_cast<std::size_t>(l) * D, D, k, v, a + l, b + l);
  if (l < L) dots_avx2<1>(rows + static_cast<std::size_t>(l) * D, D, k, v, a + l, b + l);
}
// gk += sum_r ck_r x_r, gv += sum_r cv_r x_r over rows r < R (R <= 4), rows in order.
template <int R>
SADDLE_AVX2 void axpys_avx2(const float* rows, int D, const double* ck, const double* cv,
                            double* gk, double* gv) {
  __m256d c[R], d[R];
  for (int r = 0; r < R; ++r) {
    c[r] = _mm256_set1_pd(ck[r]);
    d[r] = _mm256_set1_pd(cv[r]);
  }
  int i = 0;
  for (; i + 8 <= D; i += 8) {
    __m256d gl = _mm256_loadu_pd(gk + i), gh = _mm256_loadu_pd(gk + i + 4);
    __m256d hl = _mm256_loadu_pd(gv + i), hh = _mm256_loadu_pd(gv + i + 4);
    for (int r = 0; r < R; ++r) {
      const __m256 xf = _mm256_loadu_ps(rows + static_cast<std::size_t>(r) * D + i);
      const __m256d xl = _mm256_cvtps_pd(_mm256_castps256_ps128(xf));
      const __m256d xh = _mm256_cvtps_pd(_mm256_extractf128_ps(xf, 1));
      gl = _mm256_fmadd_pd(xl, c[r], gl);
      gh = _mm256_fmadd_pd(xh, c[r], gh);
      hl = _mm256_fmadd_pd(xl, d[r], hl);
      hh = _mm256_fmadd_pd(xh, d[r], hh);
    }
    _mm256_storeu_pd(gk + i, gl);
    _mm256_storeu_pd(gk + i + 4, gh);
    _mm256_storeu_pd(gv + i, hl);
    _mm256_storeu_pd(gv + i + 4, hh);
  }
  for (; i < D; ++i) {
    double g = gk[i], h = gv[i];
    for (int r = 0; r < R; ++r) {
      const double x = rows[static_cast<std::size_t>(r) * D + i];
      g = fma1(x, ck[r], g);
      h = fma1(x, cv[r], h);
    }
    gk[i] = g;
    gv[i] = h;
  }
}
SADDLE_AVX2 void sample_axpy_avx2(const float* rows, int L, const double* ck, const double* cv,
                                  int D, double* gk, double* gv) {
  int l = 0;
  for (; l + 4 <= L; l += 4) axpys_avx2<4>(rows + static_cast<std::size_t>(l) * D, D, ck + l, cv + l, gk, gv);
  switch (L - l) {
    case 3: axpys_avx2<3>(rows + static_cast<std::size_t>(l) * D, D, ck + l, cv + l, gk, gv); break;
    case 2: axpys_avx2<2>(rows + static_cast<std::size_t>(l) * D, D, ck + l, cv + l, gk, gv); break;
    case 1: axpys_avx2<1>(rows + static_cast<std::size_t>(l) * D, D, ck + l, cv + l, gk, gv); break;
    default: break;
  }
}
SADDLE_AVX2 void dot2_avx2(const float* x, const double* k, const double* v, int D, double* a,
                           double* b) {
  dots_avx2<1>(x, D, k, v, a, b);
}
SADDLE_AVX2 void axpy2_avx2(const float* x, double ck, double cv, int D, double* gk, double* gv) {
  axpys_avx2<1>(x, D, &ck, &cv, gk, gv);
}

// ---- AVX-512 (the same lanes: one 8-wide register holds lanes 0-7) -----------------------------
// GCC 12 warns inside its own avx512fintrin.h (the "undefined" source operand of the unmasked
// conversions): a known false positive.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#define SADDLE_AVX512 __attribute__((target("avx512f,avx2,fma")))
SADDLE_AVX512 inline double reduce8_512(__m512d s) {
  return reduce8(_mm512_castpd512_pd256(s), _mm512_extractf64x4_pd(s, 1));
}
template <int R>
SADDLE_AVX512 void dots_avx512(const float* rows, int D, const double* k, const double* v,
                               double* a, double* b) {
  __m512d sa[R], sb[R];
  for (int r = 0; r < R; ++r) sa[r] = sb[r] = _mm512_setzero_pd();
  int i = 0;
  for (; i + 8 <= D; i += 8) {
    const __m512d kk = _mm512_loadu_pd(k + i), vv = _mm512_loadu_pd(v + i);
    for (int r = 0; r < R; ++r) {
      const __m512d x = _mm512_cvtps_pd(_mm256_loadu_ps(rows + static_cast<std::size_t>(r) * D + i));
      sa[r] = _mm512_fmadd_pd(x, kk, sa[r]);
      sb[r] = _mm512_fmadd_pd(x, vv, sb[r]);
    }
  }
  for (int r = 0; r < R; ++r) {
    const float* x = rows + static_cast<std::size_t>(r) * D;
    double ta = reduce8_512(sa[r]), tb = reduce8_512(sb[r]);
    for (int j = i; j < D; ++j) {
      ta = fma1(double(x[j]), k[j], ta);
      tb = fma1(double(x[j]), v[j], tb);
    }
    a[r] = ta;
    b[r] = tb;
  }
}
SADDLE_AVX512 void sample_dots_avx512(const float* rows, int L, const double* k, const double* v,
                                      int D, double* a, double* b) {
  int l = 0;
  for (; l + 4 <= L; l += 4) dots_avx512<4>(rows + static_cast<std::size_t>(l) * D, D, k, v, a + l, b + l);
  switch (L - l) {
    case 3: dots_avx512<3>(rows + static_cast<std::size_t>(l) * D, D, k, v, a + l, b + l); break;
    case 2: dots_avx512<2>(rows + static_cast<std::size_t>(l) * D, D, k, v, a + l, b + l); break;
    case 1: dots_avx512<1>(rows + static_cast<std::size_t>(l) * D, D, k, v, a + l, b + l); break;
    default: break;
  }
}
template <int R>
SADDLE_AVX512 void axpys_avx512(const float* rows, int D, const double* ck, const double* cv,
                                double* gk, double* gv) {
  __m512d c[R], d[R];
  for (int r = 0; r < R; ++r) {
    c[r] = _mm512_set1_pd(ck[r]);
    d[r] = _mm512_set1_pd(cv[r]);
  }
  int i = 0;
  for (; i + 8 <= D; i += 8) {
    __m512d g = _mm512_loadu_pd(gk + i), h = _mm512_loadu_pd(gv + i);
    for (int r = 0; r < R; ++r) {
      const __m512d x = _mm512_cvtps_pd(_mm256_loadu_ps(rows + static_cast<std::size_t>(r) * D + i));
      g = _mm512_fmadd_pd(x, c[r], g);
      h = _mm512_fmadd_pd(x, d[r], h);
    }
    _mm512_storeu_pd(gk + i, g);
    _mm512_storeu_pd(gv + i, h);
  }
  for (; i < D; ++i) {
    double g = gk[i], h = gv[i];
    for (int r = 0; r < R; ++r) {
      const double x = rows[static_cast<std::size_t>(r) * D + i];
      g = fma1(x, ck[r], g);
      h = fma1(x, cv[r], h);
    }
    gk[i] = g;
    gv[i] = h;
  }
}
SADDLE_AVX512 void sample_axpy_avx512(const float* rows, int L, const double* ck, const double* cv,
                                      int D, double* gk, double* gv) {
  int l = 0;
  for (; l + 4 <= L; l += 4) axpys_avx512<4>(rows + static_cast<std::size_t>(l) * D, D, ck + l, cv + l, gk, gv);
  switch (L - l) {
    case 3: axpys_avx512<3>(rows + static_cast<std::size_t>(l) * D, D, ck + l, cv + l, gk, gv); break;
    case 2: axpys_avx512<2>(rows + static_cast<std::size_t>(l) * D, D, ck + l, cv + l, gk, gv); break;
    case 1: axpys_avx512<1>(rows + static_cast<std::size_t>(l) * D, D, ck + l, cv + l, gk, gv); break;
    default: break;
  }
}
#pragma GCC diagnostic pop
#endif

}  // namespace

KernelSet detect_kernels() {
#ifdef SADDLE_SLR_X86
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx2") &&
      __builtin_cpu_supports("fma"))
    return KernelSet::Avx512;
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return KernelSet::Avx2;
#endif
  return KernelSet::Scalar;
}

KernelSet& kernel_set() {
  static KernelSet k = detect_kernels();
  return k;
}

const char* to_string(KernelSet k) {
  return k == KernelSet::Avx512 ? "avx512" : (k == KernelSet::Avx2 ? "avx2" : "scalar");
}

void dot2(const float* x, const double* k, const double* v, int D, double* a, double* b) {
#ifdef SADDLE_SLR_X86
  if (kernel_set() != KernelSet::Scalar) return dot2_avx2(x, k, v, D, a, b);
#endif
  dot2_scalar(x, k, v, D, a, b);
}

void axpy2(const float* x, double ck, double cv, int D, double* gk, double* gv) {
#ifdef SADDLE_SLR_X86
  if (kernel_set() != KernelSet::Scalar) return axpy2_avx2(x, ck, cv, D, gk, gv);
#endif
  axpy2_scalar(x, ck, cv, D, gk, gv);
}

void sample_dots(const float* rows, int L, const double* k, const double* v, int D, double* a,
                 double* b) {
#ifdef SADDLE_SLR_X86
  if (kernel_set() == KernelSet::Avx512) return sample_dots_avx512(rows, L, k, v, D, a, b);
  if (kernel_set() == KernelSet::Avx2) return sample_dots_avx2(rows, L, k, v, D, a, b);
#endif
  sample_dots_scalar(rows, L, k, v, D, a, b);
}

void sample_axpy(const float* rows, int L, const double* ck, const double* cv, int D, double* gk,
                 double* gv) {
#ifdef SADDLE_SLR_X86
  if (kernel_set() == KernelSet::Avx512) return sample_axpy_avx512(rows, L, ck, cv, D, gk, gv);
  if (kernel_set() == KernelSet::Avx2) return sample_axpy_avx2(rows, L, ck, cv, D, gk, gv);
#endif
  sample_axpy_scalar(rows, L, ck, cv, D, gk, gv);
}

}  // namespace mc
}  // namespace slr
}  // namespace saddle
