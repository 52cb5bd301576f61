// ap_fixed.h -- vendor-free C-simulation model of Vitis HLS fixed-point types,
// written for streamdsl from the documented semantics (no vendor code).
//
//   ap_fixed<W, I, Q = AP_TRN, O = AP_WRAP, N = 0>    signed,   1 <= W <= 64
//   ap_ufixed<W, I, Q = AP_TRN, O = AP_WRAP, N = 0>   unsigned, 1 <= W <= 64
//
// A value is the W-bit integer V (an ap_int<W>/ap_uint<W>, public as in
// Vitis) scaled by 2^-(W-I).  Every conversion into a fixed type quantises
// with Q and then handles overflow with O.  Defaults: AP_TRN (round toward
// -infinity, i.e. drop low bits of the two's complement value) and AP_WRAP
// (keep the low W bits).  All of AP_RND, AP_RND_ZERO, AP_RND_MIN_INF,
// AP_RND_INF, AP_RND_CONV, AP_TRN_ZERO and AP_SAT, AP_SAT_ZERO, AP_SAT_SYM are
// implemented; AP_WRAP_SM is treated as AP_WRAP and N (saturation bits) is
// ignored.
//
// Arithmetic between fixed values (and ap_int / C integers) returns a
// FixedVal: an exact value m * 2^-f with a 128-bit mantissa.  + - * are exact
// (for operand widths up to 64 bits); / divides as Vitis does: the dividend's
// raw value shifted left by the divisor's fraction bits, divided by the
// divisor's raw value and truncated toward zero, so the quotient sits on the
// dividend's grid (ap_fixed_base's RType::div).  Arithmetic with float/double
// is done in double.
#ifndef STREAMDSL_AP_FIXED_H
#define STREAMDSL_AP_FIXED_H
#ifdef __SYNTHESIS__
#error "include/csim holds streamdsl's C-simulation headers (C++17, threads); keep it off the synthesis include path, where Vitis's own headers belong"
#endif

#include "ap_int.h"

#include <cmath>
#include <iostream>
#include <type_traits>

namespace streamdsl_ap {

// ---------------------------------------------------------------- 128-bit helpers
inline int bitlen(i128 m) {  // bits of |m|
  u128 a = m < 0 ? u128(0) - static_cast<u128>(m) : static_cast<u128>(m);
  u64 hi = static_cast<u64>(a >> 64), lo = static_cast<u64>(a);
  if (hi) return 128 - __builtin_clzll(hi);
  return lo ? 64 - __builtin_clzll(lo) : 0;
}
inline i128 shl128(i128 m, int s) { return s >= 128 ? 0 : static_cast<i128>(static_cast<u128>(m) << s); }
inline i128 floor_shr(i128 m, int s) { return s >= 127 ? (m < 0 ? -1 : 0) : (m >> s); }  // arithmetic = floor

// ---------------------------------------------------------------- FixedVal: exact m * 2^-f
class FixedVal {
 public:
  i128 m = 0;
  int f = 0;
  FixedVal() = default;
  FixedVal(i128 mant, int frac) : m(mant), f(frac) {}

  long double to_ldouble() const { return std::ldexp(static_cast<long double>(m), -f); }
  double to_double() const { return static_cast<double>(to_ldouble()); }
  float to_float() const { return static_cast<float>(to_ldouble()); }
  operator double() const { return to_double(); }
  i64 to_int64() const {  // toward zero, like a C cast
    if (f <= 0) return static_cast<i64>(shl128(m, -f));
    return m >= 0 ? static_cast<i64>(floor_shr(m, f)) : -static_cast<i64>(floor_shr(-m, f));
  }
  int to_int() const { return static_cast<int>(to_int64()); }
  FixedVal operator-() const { return FixedVal(-m, f); }
  FixedVal operator+() const { return *this; }
};

// Exact decomposition of a finite double: x = m * 2^-f.
inline FixedVal real_to_fv(double x) {
  if (x == 0) return FixedVal();
  int e;
  double fr = std::frexp(x, &e);  // |fr| in [0.5, 1): fr * 2^62 is an exact integer
  return FixedVal(static_cast<i128>(static_cast<i64>(std::ldexp(fr, 62))), 62 - e);
}

// Bring a and b to the same f.  Normally the coarser one is shifted up
// (exact); if that would overflow 125 bits the finer one is floored instead.
inline void fv_align(FixedVal& a, FixedVal& b) {
  if (a.f == b.f) return;
  FixedVal& c = a.f < b.f ? a : b;  // coarser
  FixedVal& fn = a.f < b.f ? b : a;  // finer
  int d = fn.f - c.f, room = 125 - bitlen(c.m);
  if (c.m == 0 || d <= room) {
    c.m = shl128(c.m, d);
    c.f = fn.f;
  } else {
    c.m = shl128(c.m, room);
    c.f += room;
    fn.m = floor_shr(fn.m, fn.f - c.f);
    fn.f = c.f;
  }
}
inline FixedVal fv_add(FixedVal a, FixedVal b) { fv_align(a, b); return FixedVal(a.m + b.m, a.f); }
inline FixedVal fv_sub(FixedVal a, FixedVal b) { fv_align(a, b); return FixedVal(a.m - b.m, a.f); }
inline FixedVal fv_mul(FixedVal a, FixedVal b) {
  int excess = bitlen(a.m) + bitlen(b.m) - 126;  // only for operands wider than ~63 bits
  if (excess > 0) {
    FixedVal& big = bitlen(a.m) >= bitlen(b.m) ? a : b;
    big.m = floor_shr(big.m, excess);
    big.f -= excess;
  }
  return FixedVal(a.m * b.m, a.f + b.f);
}
inline FixedVal fv_div(FixedVal a, FixedVal b) {  // b == 0 traps, like C
  int s = b.f > 0 ? b.f : 0;  // (Va << max(F2, 0)) / Vb, toward zero: the quotient's grid is a.f (+ -F2 if F2 < 0)
  return FixedVal(shl128(a.m, s) / b.m, a.f + s - b.f);
}
inline int fv_cmp(FixedVal a, FixedVal b) {
  fv_align(a, b);
  return a.m < b.m ? -1 : (a.m > b.m ? 1 : 0);
}

// ---------------------------------------------------------------- ApFixed
template <int W, int I, bool S, ap_q_mode Q, ap_o_mode O, int N>
class ApFixed {
  static_assert(W >= 1 && W <= 64, "ap_fixed width must be in [1, 64]");

 public:
  static constexpr int width = W, iwidth = I, fwidth = W - I;
  static constexpr ap_q_mode qmode = Q;
  static constexpr ap_o_mode omode = O;
  using raw_type = ApInt<W, S>;

  raw_type V;  // the scaled integer, public as in Vitis (x.V)

  ApFixed() : V(0) {}
  ApFixed(const ApFixed&) = default;
  ApFixed& operator=(const ApFixed&) = default;
  // From any fixed, fixed expression, ap_int or C integer (exact source value).
  template <class T, std::enable_if_t<is_fixed_like<T>::value || IntOp<T>::ok, int> = 0>
  ApFixed(const T& x) : V(raw_type::from_bits(quantize(to_fv_any(x)))) {}
  template <class T, std::enable_if_t<std::is_floating_point_v<T>, int> = 0>
  ApFixed(T x) : V(raw_type::from_bits(quantize_real(static_cast<double>(x)))) {}

  static ApFixed from_raw(u64 bits) { ApFixed r; r.V = raw_type::from_bits(bits); return r; }

  FixedVal value() const { return FixedVal(static_cast<i128>(V.raw()), W - I); }
  double to_double() const { return value().to_double(); }
  float to_float() const { return value().to_float(); }
  long double to_ldouble() const { return value().to_ldouble(); }
  operator double() const { return to_double(); }
  i64 to_int64() const { return value().to_int64(); }  // toward zero
  u64 to_uint64() const { return static_cast<u64>(to_int64()); }
  int to_int() const { return static_cast<int>(to_int64()); }
  unsigned to_uint() const { return static_cast<unsigned>(to_int64()); }
  long to_long() const { return static_cast<long>(to_int64()); }
  int length() const { return W; }
  bool iszero() const { return V.raw() == 0; }

  // Bits of V.
  BitRef<raw_type> operator[](int i) { return V[i]; }
  bool operator[](int i) const { return V.test(i); }
  RangeRef<raw_type> range(int hi, int lo) const { return V.range(hi, lo); }
  RangeRef<raw_type> range() const { return V.range(); }

  // Shifts keep the type: they move V's bits (so they wrap / drop bits).
  ApFixed operator<<(int n) const { ApFixed r; r.V = n >= 0 ? V.shl(static_cast<u64>(n)) : V.shr(static_cast<u64>(-n)); return r; }
  ApFixed operator>>(int n) const { ApFixed r; r.V = n >= 0 ? V.shr(static_cast<u64>(n)) : V.shl(static_cast<u64>(-n)); return r; }
  ApFixed& operator<<=(int n) { return *this = *this << n; }
  ApFixed& operator>>=(int n) { return *this = *this >> n; }

  FixedVal operator-() const { return -value(); }
  ApFixed operator+() const { return *this; }
  bool operator!() const { return iszero(); }
  ApFixed& operator++() { return *this = ApFixed(fv_add(value(), FixedVal(1, 0))); }
  ApFixed& operator--() { return *this = ApFixed(fv_sub(value(), FixedVal(1, 0))); }
  ApFixed operator++(int) { ApFixed t = *this; ++*this; return t; }
  ApFixed operator--(int) { ApFixed t = *this; --*this; return t; }

#define SDSL_FX_COMPOUND(OP) \
  template <class T> ApFixed& operator OP##=(const T& b) { return *this = ApFixed(*this OP b); }
  SDSL_FX_COMPOUND(+) SDSL_FX_COMPOUND(-) SDSL_FX_COMPOUND(*) SDSL_FX_COMPOUND(/)
#undef SDSL_FX_COMPOUND

  // Quantise then overflow-handle an exact value into raw W-bit form.
  static u64 quantize(FixedVal v) {
    int d = v.f - (W - I);  // low bits to drop (> 0) or zeros to append (< 0)
    i128 q;
    bool huge = false;  // |value| >= 2^126 LSBs: certainly out of range
    if (d > 0) {
      if (d > 126) {  // keep d small enough for 128-bit arithmetic; a sticky bit keeps rounding exact
        int k = d - 126;
        i128 kept = floor_shr(v.m, k);
        if (k >= 127 ? v.m != 0 && v.m != kept : shl128(kept, k) != v.m) kept |= 1;
        v.m = kept;
        d = 126;
      }
      q = floor_shr(v.m, d);
      i128 r = v.m - shl128(q, d), half = shl128(1, d - 1);  // 0 <= r < 2^d
      bool neg = v.m < 0, up = false;
      switch (Q) {
        case AP_TRN: break;
        case AP_TRN_ZERO: up = neg && r != 0; break;
        case AP_RND: up = r >= half; break;                                    // half toward +inf
        case AP_RND_MIN_INF: up = r > half; break;                             // half toward -inf
        case AP_RND_ZERO: up = r > half || (r == half && neg); break;          // half toward zero
        case AP_RND_INF: up = r > half || (r == half && !neg); break;          // half away from zero
        case AP_RND_CONV: up = r > half || (r == half && (q & 1) != 0); break;  // half to even
      }
      if (up) ++q;
    } else {
      huge = v.m != 0 && bitlen(v.m) - d > 126;
      q = shl128(v.m, -d);  // low 64 bits stay right even when huge
    }
    return overflow(q, huge, v.m < 0);
  }

 private:
  static u64 overflow(i128 q, bool huge, bool neg) {
    const i128 hi = S ? (static_cast<i128>(1) << (W - 1)) - 1 : (static_cast<i128>(1) << W) - 1;
    const i128 lo = S ? -(static_cast<i128>(1) << (W - 1)) : 0;
    bool over = huge ? !neg : q > hi, under = huge ? neg : q < lo;
    switch (O) {
      case AP_WRAP: case AP_WRAP_SM: return static_cast<u64>(static_cast<u128>(q));
      case AP_SAT: break;
      case AP_SAT_ZERO: if (over || under) return 0; break;
      case AP_SAT_SYM: if (S && (under || q == lo)) return static_cast<u64>(-hi); break;
    }
    if (over) return static_cast<u64>(hi);
    if (under) return static_cast<u64>(lo);
    return static_cast<u64>(static_cast<u128>(q));
  }
  static u64 quantize_real(double x) {
    if (std::isnan(x)) return 0;
    if (std::isinf(x)) return (O == AP_WRAP || O == AP_WRAP_SM) ? 0 : overflow(0, true, x < 0);
    return quantize(real_to_fv(x));
  }
  template <class T> static FixedVal to_fv_any(const T& x);
};

// Exact FixedVal view of any operand fixed arithmetic accepts.
inline FixedVal to_fv(const FixedVal& v) { return v; }
template <int W, int I, bool S, ap_q_mode Q, ap_o_mode O, int N>
inline FixedVal to_fv(const ApFixed<W, I, S, Q, O, N>& x) { return x.value(); }
template <class T, std::enable_if_t<IntOp<T>::ok, int> = 0>
inline FixedVal to_fv(const T& x) {
  if constexpr (IntOp<T>::sgn) return FixedVal(static_cast<i128>(static_cast<i64>(ival(x))), 0);
  else return FixedVal(static_cast<i128>(static_cast<u64>(ival(x))), 0);
}
template <int W, int I, bool S, ap_q_mode Q, ap_o_mode O, int N>
template <class T>
inline FixedVal ApFixed<W, I, S, Q, O, N>::to_fv_any(const T& x) { return to_fv(x); }

// ---------------------------------------------------------------- operators
// Exact operators: both operands fixed-like or integer, at least one fixed-like.
template <class T> constexpr bool fx_ok_v = is_fixed_like<T>::value || IntOp<T>::ok;
template <class A, class B>
using FxBin = std::enable_if_t<fx_ok_v<A> && fx_ok_v<B> && (is_fixed_like<A>::value || is_fixed_like<B>::value), int>;

#define SDSL_FX_ARITH(OP, FN) \
  template <class A, class B, FxBin<A, B> = 0> \
  inline FixedVal operator OP(const A& a, const B& b) { return FN(to_fv(a), to_fv(b)); }
SDSL_FX_ARITH(+, fv_add) SDSL_FX_ARITH(-, fv_sub) SDSL_FX_ARITH(*, fv_mul) SDSL_FX_ARITH(/, fv_div)
#undef SDSL_FX_ARITH
#define SDSL_FX_CMP(OP) \
  template <class A, class B, FxBin<A, B> = 0> \
  inline bool operator OP(const A& a, const B& b) { return fv_cmp(to_fv(a), to_fv(b)) OP 0; }
SDSL_FX_CMP(==) SDSL_FX_CMP(!=) SDSL_FX_CMP(<) SDSL_FX_CMP(>) SDSL_FX_CMP(<=) SDSL_FX_CMP(>=)
#undef SDSL_FX_CMP

// With float/double: computed in double.
template <class A, class B>
using FxFlt = std::enable_if_t<(is_fixed_like<A>::value && std::is_floating_point_v<B>) ||
                               (std::is_floating_point_v<A> && is_fixed_like<B>::value), int>;
template <class T> inline double fx_real(const T& x) {
  if constexpr (std::is_floating_point_v<T>) return static_cast<double>(x);
  else return x.to_double();
}
#define SDSL_FX_FLT(OP, R) \
  template <class A, class B, FxFlt<A, B> = 0> \
  inline R operator OP(const A& a, const B& b) { return fx_real(a) OP fx_real(b); }
SDSL_FX_FLT(+, double) SDSL_FX_FLT(-, double) SDSL_FX_FLT(*, double) SDSL_FX_FLT(/, double)
SDSL_FX_FLT(==, bool) SDSL_FX_FLT(!=, bool) SDSL_FX_FLT(<, bool) SDSL_FX_FLT(>, bool)
SDSL_FX_FLT(<=, bool) SDSL_FX_FLT(>=, bool)
#undef SDSL_FX_FLT

// Printed as a double, honouring the stream's precision/format flags.
template <int W, int I, bool S, ap_q_mode Q, ap_o_mode O, int N>
inline std::ostream& operator<<(std::ostream& os, const ApFixed<W, I, S, Q, O, N>& x) { return os << x.to_double(); }
inline std::ostream& operator<<(std::ostream& os, const FixedVal& x) { return os << x.to_double(); }

}  // namespace streamdsl_ap

template <int W, int I, ap_q_mode Q = AP_TRN, ap_o_mode O = AP_WRAP, int N = 0>
using ap_fixed = streamdsl_ap::ApFixed<W, I, true, Q, O, N>;
template <int W, int I, ap_q_mode Q = AP_TRN, ap_o_mode O = AP_WRAP, int N = 0>
using ap_ufixed = streamdsl_ap::ApFixed<W, I, false, Q, O, N>;

#endif  // STREAMDSL_AP_FIXED_H
