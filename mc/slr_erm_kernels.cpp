// Kernels of the SLR trainer: see mc/slr_erm_kernels.hpp.
#include "mc/slr_erm_kernels.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define SADDLE_SLR_X86 1
#endif

namespace saddle {
namespace slr {
namespace mc {

namespace {

void dot2_scalar(const float* x, const double* k, const double* v, int D, double* a, double* b) {
  double a0 = 0, a1 = 0, b0 = 0, b1 = 0;
  int i = 0;
  for (; i + 1 < D; i += 2) {
    const double x0 = x[i], x1 = x[i + 1];
    a0 += x0 * k[i];
    a1 += x1 * k[i + 1];
    b0 += x0 * v[i];
    b1 += x1 * v[i + 1];
  }
  for (; i < D; ++i) {
    a0 += double(x[i]) * k[i];
    b0 += double(x[i]) * v[i];
  }
  *a = a0 + a1;
  *b = b0 + b1;
}
void axpy2_scalar(const float* x, double ck, double cv, int D, double* gk, double* gv) {
  for (int i = 0; i < D; ++i) {
    const double xi = x[i];
    gk[i] += ck * xi;
    gv[i] += cv * xi;
  }
}

#ifdef SADDLE_SLR_X86
__attribute__((target("avx2,fma"))) inline double hsum256(__m256d a) {
  __m128d lo = _mm256_castpd256_pd128(a), hi = _mm256_extractf128_pd(a, 1);
  lo = _mm_add_pd(lo, hi);
  __m128d sh = _mm_unpackhi_pd(lo, lo);
  return _mm_cvtsd_f64(_mm_add_sd(lo, sh));
}
__attribute__((target("avx2,fma"))) void dot2_avx2(const float* x, const double* k,
                                                    const double* v, int D, double* a, double* b) {
  __m256d a0 = _mm256_setzero_pd(), a1 = _mm256_setzero_pd();
  __m256d b0 = _mm256_setzero_pd(), b1 = _mm256_setzero_pd();
  int i = 0;
  for (; i + 8 <= D; i += 8) {
    const __m256 xf = _mm256_loadu_ps(x + i);
    const __m256d xl = _mm256_cvtps_pd(_mm256_castps256_ps128(xf));
    const __m256d xh = _mm256_cvtps_pd(_mm256_extractf128_ps(xf, 1));
    a0 = _mm256_fmadd_pd(xl, _mm256_loadu_pd(k + i), a0);
    a1 = _mm256_fmadd_pd(xh, _mm256_loadu_pd(k + i + 4), a1);
    b0 = _mm256_fmadd_pd(xl, _mm256_loadu_pd(v + i), b0);
    b1 = _mm256_fmadd_pd(xh, _mm256_loadu_pd(v + i + 4), b1);
  }
  double sa = hsum256(_mm256_add_pd(a0, a1)), sb = hsum256(_mm256_add_pd(b0, b1));
  for (; i < D; ++i) {
    sa += double(x[i]) * k[i];
    sb += double(x[i]) * v[i];
  }
  *a = sa;
  *b = sb;
}
__attribute__((target("avx2,fma"))) void axpy2_avx2(const float* x, double ck, double cv, int D,
                                                     double* gk, double* gv) {
  const __m256d vk = _mm256_set1_pd(ck), vv = _mm256_set1_pd(cv);
  int i = 0;
  for (; i + 8 <= D; i += 8) {
    const __m256 xf = _mm256_loadu_ps(x + i);
    const __m256d xl = _mm256_cvtps_pd(_mm256_castps256_ps128(xf));
    const __m256d xh = _mm256_cvtps_pd(_mm256_extractf128_ps(xf, 1));
    _mm256_storeu_pd(gk + i, _mm256_fmadd_pd(xl, vk, _mm256_loadu_pd(gk + i)));
    _mm256_storeu_pd(gk + i + 4, _mm256_fmadd_pd(xh, vk, _mm256_loadu_pd(gk + i + 4)));
    _mm256_storeu_pd(gv + i, _mm256_fmadd_pd(xl, vv, _mm256_loadu_pd(gv + i)));
    _mm256_storeu_pd(gv + i + 4, _mm256_fmadd_pd(xh, vv, _mm256_loadu_pd(gv + i + 4)));
  }
  for (; i < D; ++i) {
    const double xi = x[i];
    gk[i] += ck * xi;
    gv[i] += cv * xi;
  }
}
bool have_avx2() {
  static const bool ok = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return ok;
}
#endif

}  // namespace

bool kernels_use_avx2() {
#ifdef SADDLE_SLR_X86
  return have_avx2();
#else
  return false;
#endif
}

void dot2(const float* x, const double* k, const double* v, int D, double* a, double* b) {
#ifdef SADDLE_SLR_X86
  if (have_avx2()) return dot2_avx2(x, k, v, D, a, b);
#endif
  dot2_scalar(x, k, v, D, a, b);
}

void axpy2(const float* x, double ck, double cv, int D, double* gk, double* gv) {
#ifdef SADDLE_SLR_X86
  if (have_avx2()) return axpy2_avx2(x, ck, cv, D, gk, gv);
#endif
  axpy2_scalar(x, ck, cv, D, gk, gv);
}

}  // namespace mc
}  // namespace slr
}  // namespace saddle
