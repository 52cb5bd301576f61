// hls_math.h -- vendor-free C-simulation model of the Vitis HLS math library
// (namespace hls), written for streamdsl.  Everything is <cmath>:
//   * float and double arguments compute in that precision (hls::exp(float)
//     returns float), like the vendor's overloads;
//   * C integers and ap_int/ap_uint compute in double and return double;
//   * ap_fixed/ap_ufixed compute in double via to_double() and return the
//     same fixed type (quantised with its Q/O modes); a fixed-point expression
//     (FixedVal) returns double.
// The vendor's hardware approximations (e.g. for float exp/log) may differ in
// the last ulps; here results are what <cmath> gives.  half is not provided.
#ifndef STREAMDSL_HLS_MATH_H
#define STREAMDSL_HLS_MATH_H
#ifdef __SYNTHESIS__
#error "include/csim holds streamdsl's C-simulation headers (C++17, threads); keep it off the synthesis include path, where Vitis's own headers belong"
#endif

#include "ap_fixed.h"
#include "ap_int.h"

#include <cmath>
#include <type_traits>

namespace hls {
namespace detail {

namespace ap = ::streamdsl_ap;

template <class T>
constexpr bool is_apint_v = ap::IntOp<T>::ok && !std::is_floating_point_v<T>;  // C ints, ap_int, bit/range refs
template <class T>
constexpr bool is_ap_v = ap::IntOp<T>::ap || ap::is_fixed_like<T>::value;      // one of our types

template <class T> inline double to_real(const T& x) {
  if constexpr (ap::is_fixed_like<T>::value) return x.to_double();
  else if constexpr (std::is_floating_point_v<T>) return static_cast<double>(x);
  else return static_cast<double>(ap::ival(x));
}

// Functions missing from <cmath> (F is float or double).
template <class F> inline F rsqrt(F x) { return F(1) / std::sqrt(x); }
template <class F> inline F recip(F x) { return F(1) / x; }

}  // namespace detail

// SDSL_HLS_UNARY(name, impl): float and double overloads, a float-suffixed
// alias (hls::expf), and templates for integers and fixed point.
#define SDSL_HLS_UNARY(NAME, IMPL)                                                         \
  inline float NAME(float x) { return IMPL(x); }                                           \
  inline double NAME(double x) { return IMPL(x); }                                         \
  inline float NAME##f(float x) { return IMPL(x); }                                        \
  template <class T, std::enable_if_t<detail::is_apint_v<T>, int> = 0>                     \
  inline double NAME(const T& x) { return IMPL(detail::to_real(x)); }                      \
  inline double NAME(const ::streamdsl_ap::FixedVal& x) { return IMPL(x.to_double()); }   \
  template <int W, int I, bool S, ap_q_mode Q, ap_o_mode O, int N>                         \
  inline ::streamdsl_ap::ApFixed<W, I, S, Q, O, N> NAME(const ::streamdsl_ap::ApFixed<W, I, S, Q, O, N>& x) { \
    return ::streamdsl_ap::ApFixed<W, I, S, Q, O, N>(IMPL(x.to_double()));                 \
  }

SDSL_HLS_UNARY(exp, std::exp)
SDSL_HLS_UNARY(exp2, std::exp2)
SDSL_HLS_UNARY(expm1, std::expm1)
SDSL_HLS_UNARY(log, std::log)
SDSL_HLS_UNARY(log2, std::log2)
SDSL_HLS_UNARY(log10, std::log10)
SDSL_HLS_UNARY(log1p, std::log1p)
SDSL_HLS_UNARY(sqrt, std::sqrt)
SDSL_HLS_UNARY(rsqrt, detail::rsqrt)
SDSL_HLS_UNARY(recip, detail::recip)
SDSL_HLS_UNARY(cbrt, std::cbrt)
SDSL_HLS_UNARY(sin, std::sin)
SDSL_HLS_UNARY(cos, std::cos)
SDSL_HLS_UNARY(tan, std::tan)
SDSL_HLS_UNARY(asin, std::asin)
SDSL_HLS_UNARY(acos, std::acos)
SDSL_HLS_UNARY(atan, std::atan)
SDSL_HLS_UNARY(sinh, std::sinh)
SDSL_HLS_UNARY(cosh, std::cosh)
SDSL_HLS_UNARY(tanh, std::tanh)
SDSL_HLS_UNARY(erf, std::erf)
SDSL_HLS_UNARY(erfc, std::erfc)
SDSL_HLS_UNARY(floor, std::floor)
SDSL_HLS_UNARY(ceil, std::ceil)
SDSL_HLS_UNARY(round, std::round)  // halfway cases away from zero, like C round()
SDSL_HLS_UNARY(trunc, std::trunc)
SDSL_HLS_UNARY(rint, std::rint)
SDSL_HLS_UNARY(fabs, std::fabs)
#undef SDSL_HLS_UNARY

// Binary functions: float/float stays float, anything else computes in double.
#define SDSL_HLS_BINARY(NAME, IMPL)                                                      \
  inline float NAME(float x, float y) { return IMPL(x, y); }                             \
  inline double NAME(double x, double y) { return IMPL(x, y); }                          \
  inline float NAME##f(float x, float y) { return IMPL(x, y); }                          \
  template <class A, class B,                                                            \
            std::enable_if_t<!(std::is_same_v<A, B> && std::is_floating_point_v<A>) &&   \
                                 (std::is_arithmetic_v<A> || detail::is_ap_v<A>) &&      \
                                 (std::is_arithmetic_v<B> || detail::is_ap_v<B>), int> = 0> \
  inline double NAME(const A& x, const B& y) { return IMPL(detail::to_real(x), detail::to_real(y)); }

SDSL_HLS_BINARY(pow, std::pow)
SDSL_HLS_BINARY(fmax, std::fmax)
SDSL_HLS_BINARY(fmin, std::fmin)
SDSL_HLS_BINARY(fmod, std::fmod)
SDSL_HLS_BINARY(atan2, std::atan2)
SDSL_HLS_BINARY(hypot, std::hypot)
SDSL_HLS_BINARY(copysign, std::copysign)
#undef SDSL_HLS_BINARY

// abs keeps the argument's type (ap_int, ap_fixed, C integers, floats).
inline float abs(float x) { return std::fabs(x); }
inline double abs(double x) { return std::fabs(x); }
inline float absf(float x) { return std::fabs(x); }
template <class T, std::enable_if_t<std::is_integral_v<T>, int> = 0>
inline T abs(T x) {
  if constexpr (std::is_signed_v<T>) return x < 0 ? static_cast<T>(-x) : x;
  else return x;
}
template <class T, std::enable_if_t<detail::is_ap_v<T> && !std::is_integral_v<T>, int> = 0>
inline T abs(const T& x) { return x < 0 ? T(-x) : x; }

// max/min: floats follow fmax/fmin (a NaN operand is ignored); integers and
// ap types compare exactly.  With one ap operand the result has its type
// (hls::max(x_fixed, 0) is a fixed value); two C types give their common type.
template <class A, class B, std::enable_if_t<std::is_arithmetic_v<A> && std::is_arithmetic_v<B>, int> = 0>
inline std::common_type_t<A, B> max(A a, B b) {
  using C = std::common_type_t<A, B>;
  if constexpr (std::is_floating_point_v<C>) return std::fmax(C(a), C(b));
  else return C(a) > C(b) ? C(a) : C(b);
}
template <class A, class B, std::enable_if_t<std::is_arithmetic_v<A> && std::is_arithmetic_v<B>, int> = 0>
inline std::common_type_t<A, B> min(A a, B b) {
  using C = std::common_type_t<A, B>;
  if constexpr (std::is_floating_point_v<C>) return std::fmin(C(a), C(b));
  else return C(a) < C(b) ? C(a) : C(b);
}
template <class A, class B>
using ApPick = std::enable_if_t<detail::is_ap_v<A> || detail::is_ap_v<B>, std::conditional_t<detail::is_ap_v<A>, A, B>>;
template <class A, class B>
inline ApPick<A, B> max(const A& a, const B& b) { using R = ApPick<A, B>; return a > b ? R(a) : R(b); }
template <class A, class B>
inline ApPick<A, B> min(const A& a, const B& b) { using R = ApPick<A, B>; return a < b ? R(a) : R(b); }

}  // namespace hls

#endif  // STREAMDSL_HLS_MATH_H
