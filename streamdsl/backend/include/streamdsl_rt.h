// streamdsl_rt.h: helpers the emitted HLS C++ uses so that it computes exactly
// what the reference simulator computes (see streamdsl/types.py for the rules).
// Synthesizable: templates over scalar types, no heap, no recursion.
#pragma once
// Kernels leave local arrays that they overwrite whole uninitialised, as HLS code does (an initialiser is a
// pass over the array in hardware); g++ -O2 cannot always prove that the writes cover every element.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "ap_fixed.h"
#include "ap_int.h"
#include "hls_math.h"

namespace sd {

// Floor division and modulo with Python semantics; x // 0 == 0 and x % 0 == 0.
// The most negative value divided by -1 overflows (x86 traps: SIGFPE); the simulator (NumPy) wraps it to
// itself, with remainder 0.  The negation is done unsigned, where it wraps without undefined behaviour.
template <typename T> constexpr bool is_signed_builtin = std::is_integral<T>::value && std::is_signed<T>::value;

template <typename T> inline T floordiv(T a, T b) {
  if (b == T(0)) return T(0);
  if constexpr (is_signed_builtin<T>) {
    if (b == T(-1)) return T(std::make_unsigned_t<T>(0) - std::make_unsigned_t<T>(a));
  }
  if constexpr (std::is_floating_point<T>::value) {
    return std::floor(a / b);
  } else {
    T q = T(a / b);
    if ((a % b != T(0)) && ((a < T(0)) != (b < T(0)))) q = T(q - T(1));
    return q;
  }
}

template <typename T> inline T floormod(T a, T b) {
  if (b == T(0)) return T(0);
  if constexpr (is_signed_builtin<T>) {
    if (b == T(-1)) return T(0);
  }
  if constexpr (std::is_floating_point<T>::value) {
    T r = std::fmod(a, b);
    if (r != T(0) && ((r < T(0)) != (b < T(0)))) r += b;
    return r;
  } else {
    T r = T(a % b);
    if (r != T(0) && ((r < T(0)) != (b < T(0)))) r = T(r + b);
    return r;
  }
}

// Shifts by the type's width or more give 0 (or the sign for >> of negatives).
template <typename T, typename S> inline T shl(T a, S s) {
  long long n = (long long)s;
  if (n < 0 || n >= 64) return T(0);
  return T((unsigned long long)(long long)a << n);
}

template <typename T, typename S> inline T shr(T a, S s) {
  long long n = (long long)s;
  if (n < 0 || n >= 64) return a < T(0) ? T(-1) : T(0);
  return T(a >> (int)n);
}

// Fixed point: shifts move the raw bits and keep the type (ap_fixed's << and >>); an amount out of range
// gives 0 (<<) or the sign (>>), as for integers.
template <typename T, typename S> inline T fshl(T a, S s) {
  long long n = (long long)s;
  if (n < 0 || n >= 64) return T(0);
  return T(a << (int)n);
}

template <typename T, typename S> inline T fshr(T a, S s) {
  long long n = (long long)s;
  if (n < 0 || n >= 64) n = 63;
  return T(a >> (int)n);
}

// Fixed-point division as ap_fixed divides (truncated toward zero on the dividend's grid); x / 0 == 0.
template <typename A, typename B> inline auto fixdiv(A a, B b) -> decltype(a / b) {
  if (b == 0) return decltype(a / b){};
  return a / b;
}

template <typename T> inline T max(T a, T b) {
  if constexpr (std::is_floating_point<T>::value) {
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
  }
  return a < b ? b : a;
}

template <typename T> inline T min(T a, T b) {
  if constexpr (std::is_floating_point<T>::value) {
    if (std::isnan(a) || std::isnan(b)) return std::numeric_limits<T>::quiet_NaN();
  }
  return b < a ? b : a;
}

template <typename T> inline T abs(T a) { return a < T(0) ? T(-a) : a; }

template <typename T> inline T sigmoid(T x) { return T(1) / (T(1) + hls::exp(-x)); }

// Float -> integer: truncate toward zero, saturate at the range, NaN -> 0.
template <typename I, typename F> inline I cast_int(F x, long long lo, unsigned long long hi) {
  double v = (double)x;
  if (std::isnan(v)) return I(0);
  v = std::trunc(v);
  if (v <= (double)lo) return I(lo);
  if (v >= (double)hi) return I(hi);
  if (v < 0) return I((long long)v);
  return I((unsigned long long)v);
}

// One token of a dataflow stream: an element tile of N values, row-major
// (the itensor's element shape flattened).  Streams carry whole tokens.
template <typename T, int N> struct token {
  T v[N];
};

}  // namespace sd
