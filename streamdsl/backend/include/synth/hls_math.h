// synth/hls_math.h: the declarations of Vitis HLS's hls_math.h that streamdsl's emitted code may use, in
// C++14, from UG1399 ("HLS Math Library": the float and double versions of each function, the ...f float
// names, and the fixed-point versions of the functions UG1399 lists for ap_[u]fixed; no vendor code;
// declarations only, for the -D__SYNTHESIS__ syntax check described in synth/ap_int.h and include/README.md).
#pragma once
#include "ap_fixed.h"
#include "ap_int.h"

namespace hls {

#define SD_HLS_UNARY(NAME)   \
  float NAME(float x);       \
  double NAME(double x);     \
  float NAME##f(float x);
SD_HLS_UNARY(exp)
SD_HLS_UNARY(exp2)
SD_HLS_UNARY(exp10)
SD_HLS_UNARY(expm1)
SD_HLS_UNARY(log)
SD_HLS_UNARY(log2)
SD_HLS_UNARY(log10)
SD_HLS_UNARY(log1p)
SD_HLS_UNARY(sqrt)
SD_HLS_UNARY(rsqrt)
SD_HLS_UNARY(recip)
SD_HLS_UNARY(cbrt)
SD_HLS_UNARY(sin)
SD_HLS_UNARY(cos)
SD_HLS_UNARY(tan)
SD_HLS_UNARY(asin)
SD_HLS_UNARY(acos)
SD_HLS_UNARY(atan)
SD_HLS_UNARY(sinh)
SD_HLS_UNARY(cosh)
SD_HLS_UNARY(tanh)
SD_HLS_UNARY(asinh)
SD_HLS_UNARY(acosh)
SD_HLS_UNARY(atanh)
SD_HLS_UNARY(erf)
SD_HLS_UNARY(erfc)
SD_HLS_UNARY(floor)
SD_HLS_UNARY(ceil)
SD_HLS_UNARY(trunc)
SD_HLS_UNARY(round)
SD_HLS_UNARY(rint)
SD_HLS_UNARY(fabs)
#undef SD_HLS_UNARY

#define SD_HLS_BINARY(NAME)          \
  float NAME(float x, float y);      \
  double NAME(double x, double y);   \
  float NAME##f(float x, float y);
SD_HLS_BINARY(pow)
SD_HLS_BINARY(atan2)
SD_HLS_BINARY(hypot)
SD_HLS_BINARY(fmod)
SD_HLS_BINARY(fmax)
SD_HLS_BINARY(fmin)
SD_HLS_BINARY(copysign)
#undef SD_HLS_BINARY

bool isnan(float x);
bool isnan(double x);
bool isinf(float x);
bool isinf(double x);

// Fixed point (UG1399 "Fixed-Point Math Functions": ap_fixed<W, I>, I <= 33, W - I <= 32; ap_ufixed likewise).
#define SD_HLS_FIXED_UNARY(NAME)                                     \
  template <int W, int I> ap_fixed<W, I> NAME(ap_fixed<W, I> x);     \
  template <int W, int I> ap_ufixed<W, I> NAME(ap_ufixed<W, I> x);
SD_HLS_FIXED_UNARY(exp)
SD_HLS_FIXED_UNARY(log)
SD_HLS_FIXED_UNARY(sqrt)
SD_HLS_FIXED_UNARY(rsqrt)
SD_HLS_FIXED_UNARY(sin)
SD_HLS_FIXED_UNARY(cos)
SD_HLS_FIXED_UNARY(tanh)
SD_HLS_FIXED_UNARY(erf)
SD_HLS_FIXED_UNARY(fabs)
SD_HLS_FIXED_UNARY(floor)
SD_HLS_FIXED_UNARY(ceil)
#undef SD_HLS_FIXED_UNARY

}  // namespace hls
