// ap_int.h -- vendor-free C-simulation model of Vitis HLS arbitrary-precision
// integers, written for streamdsl from the documented semantics (no vendor
// code).  See README.md in this directory.
//
//   ap_int<W>   signed,   1 <= W <= 64, two's complement
//   ap_uint<W>  unsigned, 1 <= W <= 64; and W > 64 (bus words, e.g. 512) with
//               bit/range access, bitwise ops, shifts and equality only.
//
// Narrow values live in one 64-bit word kept canonical: the low W bits, sign
// extended for ap_int.  Every store goes through wrap(), so assignment into a
// declared type always wraps at W bits.  Binary arithmetic returns the width
// Vitis gives it (ap_int_base's RType, a C integer counting as an ap_int of its
// size): + and - max(W1 + (S2 && !S1), W2 + (S1 && !S2)) + 1 bits (- always
// signed), * W1 + W2, / W1 + S2, % min(W1, W2 + (!S2 && S1)) with the
// dividend's signedness, & | ^ the max without the + 1; unary - one bit more.
// A result wider than 64 bits is kept at 64 (it wraps there).  Shifts keep
// the left operand's type, as in Vitis.  Comparisons are mathematically exact
// across signedness (ap_uint<8>(200) > -1 is true).
#ifndef STREAMDSL_AP_INT_H
#define STREAMDSL_AP_INT_H
#ifdef __SYNTHESIS__
#error "include/csim holds streamdsl's C-simulation headers (C++17, threads); keep it off the synthesis include path, where Vitis's own headers belong"
#endif

#include <cassert>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <string>
#include <type_traits>

// Quantisation / overflow modes (used by ap_fixed.h; declared here so that
// ap_int can name ap_fixed types before ap_fixed.h is included).
enum ap_q_mode { AP_RND, AP_RND_ZERO, AP_RND_MIN_INF, AP_RND_INF, AP_RND_CONV, AP_TRN, AP_TRN_ZERO };
enum ap_o_mode { AP_SAT, AP_SAT_ZERO, AP_SAT_SYM, AP_WRAP, AP_WRAP_SM };

namespace streamdsl_ap {

__extension__ typedef __int128 i128;
__extension__ typedef unsigned __int128 u128;
typedef unsigned long long u64;
typedef long long i64;

template <int W, bool S, bool Wide = (W > 64)> class ApInt;
template <int W, int I, bool S, ap_q_mode Q, ap_o_mode O, int N> class ApFixed;
class FixedVal;  // exact intermediate result of fixed-point arithmetic
template <class C> class BitRef;
template <class C> class RangeRef;

// Fixed-point values (ap_fixed.h); ap_int converts from them toward zero.
template <class T> struct is_fixed_like : std::false_type {};
template <int W, int I, bool S, ap_q_mode Q, ap_o_mode O, int N>
struct is_fixed_like<ApFixed<W, I, S, Q, O, N>> : std::true_type {};
template <> struct is_fixed_like<FixedVal> : std::true_type {};

// Value mask of the low n bits, 1 <= n <= 64 (no shift by 64: that is UB).
constexpr u64 low_mask(int n) { return ~0ull >> (64 - n); }

// float -> integer as a C cast truncates toward zero; values outside 64 bits
// keep their low 64 bits (Vitis converts by bits, i.e. modulo 2^W).  NaN and
// infinities have no integer value and become 0.
inline u64 real_to_bits(long double x) {
  if (!std::isfinite(x)) return 0;
  const long double two64 = 18446744073709551616.0L;
  long double m = std::fmod(std::trunc(x), two64);  // exact: long double has 64 mantissa bits
  if (m < 0) m += two64;
  return static_cast<u64>(m);
}

// ---------------------------------------------------------------- ap_int<W>, ap_uint<W>, W <= 64
template <int W, bool S>
class ApInt<W, S, false> {
  static_assert(W >= 1 && W <= 64, "ap_int/ap_uint width must be in [1, 64] (ap_uint may also be > 64)");

 public:
  using value_type = std::conditional_t<S, i64, u64>;
  static constexpr int width = W;
  static constexpr bool sign_flag = S;
  static constexpr u64 mask = low_mask(W);

  // Canonical form of an arbitrary 64-bit pattern: low W bits, sign-extended.
  static value_type wrap(u64 b) {
    b &= mask;
    if constexpr (S) {
      if (W < 64 && ((b >> (W - 1)) & 1)) b |= ~mask;
      return static_cast<i64>(b);
    } else {
      return b;
    }
  }
  static ApInt from_bits(u64 b) { ApInt r; r.v_ = wrap(b); return r; }

  // Vitis leaves a default-constructed ap_int uninitialised; zero is kinder.
  ApInt() : v_(0) {}
  ApInt(const ApInt&) = default;
  ApInt& operator=(const ApInt&) = default;

  template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0>
  ApInt(T x) : v_(init(x)) {}
  template <int W2, bool S2>
  ApInt(const ApInt<W2, S2, false>& o) : v_(wrap(static_cast<u64>(o.raw()))) {}
  template <int W2>
  ApInt(const ApInt<W2, false, true>& o) : v_(wrap(o.to_uint64())) {}  // truncates
  template <class C>
  ApInt(const BitRef<C>& b) : v_(wrap(b.get() ? 1 : 0)) {}
  template <class C>
  ApInt(const RangeRef<C>& r) : v_(wrap(r.low64())) {}
  // From ap_fixed (or a fixed-point expression): truncate toward zero.
  template <class T, std::enable_if_t<is_fixed_like<T>::value, int> = 0>
  ApInt(const T& f) : v_(wrap(static_cast<u64>(f.to_int64()))) {}
  // From text: optional sign, then 0x / 0b / 0o prefix or decimal; or an
  // explicit radix.  Out-of-range values wrap.
  explicit ApInt(const char* s, int radix = 0) : v_(wrap(parse(s, radix))) {}

  // Conversions.  The implicit one lets ap values index arrays, drive
  // switch/if and mix with C integers the way the vendor type does.
  operator value_type() const { return v_; }
  value_type raw() const { return v_; }
  u64 bits() const { return static_cast<u64>(v_) & mask; }
  int to_int() const { return static_cast<int>(v_); }
  unsigned to_uint() const { return static_cast<unsigned>(v_); }
  long to_long() const { return static_cast<long>(v_); }
  unsigned long to_ulong() const { return static_cast<unsigned long>(v_); }
  i64 to_int64() const { return static_cast<i64>(v_); }
  u64 to_uint64() const { return static_cast<u64>(v_); }
  double to_double() const { return static_cast<double>(v_); }
  float to_float() const { return static_cast<float>(v_); }
  bool to_bool() const { return v_ != 0; }
  int length() const { return W; }
  bool iszero() const { return v_ == 0; }
  bool sign() const { return S && static_cast<i64>(v_) < 0; }

  // Bit access.  x[i] / x.range(hi, lo) return proxies that can be assigned.
  bool test(int i) const { assert(0 <= i && i < W); return (bits() >> i) & 1; }
  void set_bit(int i, bool b) {
    assert(0 <= i && i < W);
    v_ = wrap(b ? (bits() | (1ull << i)) : (bits() & ~(1ull << i)));
  }
  void set(int i) { set_bit(i, true); }
  void clear(int i) { set_bit(i, false); }
  void invert(int i) { set_bit(i, !test(i)); }
  bool get_bit(int i) const { return test(i); }
  u64 get_bits(int lo, int n) const {  // bits [lo, lo+n), n <= 64
    assert(lo >= 0 && n >= 1 && lo + n <= W);
    return (bits() >> lo) & low_mask(n);
  }
  void set_bits(int lo, int n, u64 val) {
    assert(lo >= 0 && n >= 1 && lo + n <= W);
    u64 m = low_mask(n) << lo;
    v_ = wrap((bits() & ~m) | ((val << lo) & m));
  }
  BitRef<ApInt> operator[](int i) { return BitRef<ApInt>(this, i); }
  bool operator[](int i) const { return test(i); }
  BitRef<ApInt> bit(int i) { return BitRef<ApInt>(this, i); }
  // Like the vendor type, range() on a const object still yields a proxy.
  RangeRef<ApInt> range(int hi, int lo) const { return RangeRef<ApInt>(const_cast<ApInt*>(this), hi, lo); }
  RangeRef<ApInt> range() const { return range(W - 1, 0); }
  RangeRef<ApInt> operator()(int hi, int lo) const { return range(hi, lo); }

  bool and_reduce() const { return bits() == mask; }
  bool or_reduce() const { return bits() != 0; }
  bool xor_reduce() const { return __builtin_parityll(bits()) != 0; }

  // Shifts keep this type; a negative amount shifts the other way.
  ApInt shl(u64 n) const { return n >= static_cast<u64>(W) ? ApInt() : from_bits(bits() << n); }
  ApInt shr(u64 n) const {
    if (n >= static_cast<u64>(W)) return from_bits(S && static_cast<i64>(v_) < 0 ? ~0ull : 0ull);
    ApInt r; r.v_ = v_ >> n;  // arithmetic for ap_int (sign-extended storage)
    return r;
  }

  // Unary operators: -x is signed and one bit wider (as Vitis widens it).
  ApInt<(W < 64 ? W + 1 : 64), true> operator-() const {
    return ApInt<(W < 64 ? W + 1 : 64), true>::from_bits(0ull - static_cast<u64>(v_));
  }
  ApInt operator+() const { return *this; }
  ApInt operator~() const { return from_bits(~bits()); }
  bool operator!() const { return v_ == 0; }

  ApInt& operator++() { v_ = wrap(bits() + 1); return *this; }
  ApInt& operator--() { v_ = wrap(bits() - 1); return *this; }
  ApInt operator++(int) { ApInt t = *this; ++*this; return t; }
  ApInt operator--(int) { ApInt t = *this; --*this; return t; }

  // x op= y is x = type(x op y): compute wide, then wrap into this type.
#define SDSL_AP_COMPOUND(OP) \
  template <class T> ApInt& operator OP##=(const T& b) { *this = ApInt(*this OP b); return *this; }
  SDSL_AP_COMPOUND(+) SDSL_AP_COMPOUND(-) SDSL_AP_COMPOUND(*) SDSL_AP_COMPOUND(/)
  SDSL_AP_COMPOUND(%) SDSL_AP_COMPOUND(&) SDSL_AP_COMPOUND(|) SDSL_AP_COMPOUND(^)
  SDSL_AP_COMPOUND(<<) SDSL_AP_COMPOUND(>>)
#undef SDSL_AP_COMPOUND

 private:
  template <class T> static value_type init(T x) {
    if constexpr (std::is_floating_point_v<T>) return wrap(real_to_bits(x));
    else return wrap(static_cast<u64>(x));  // C ints: sign-extend to 64 bits first
  }
  static u64 parse(const char* s, int radix) {
    bool neg = false;
    if (*s == '-' || *s == '+') neg = (*s++ == '-');
    if (radix == 0) {
      radix = 10;
      if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) { radix = 16; s += 2; }
      else if (s[0] == '0' && (s[1] == 'b' || s[1] == 'B')) { radix = 2; s += 2; }
      else if (s[0] == '0' && (s[1] == 'o' || s[1] == 'O')) { radix = 8; s += 2; }
    }
    u64 v = 0;
    for (; *s; ++s) {
      int d = (*s >= '0' && *s <= '9') ? *s - '0'
            : (*s >= 'a' && *s <= 'z') ? *s - 'a' + 10
            : (*s >= 'A' && *s <= 'Z') ? *s - 'A' + 10 : 99;
      if (*s == '_' || *s == '\'') continue;  // digit separators
      assert(d < radix && "bad digit in ap_int string");
      v = v * static_cast<u64>(radix) + static_cast<u64>(d);
    }
    return neg ? 0ull - v : v;
  }

  value_type v_;
};

// ---------------------------------------------------------------- proxies
// One bit of an ap value (narrow or wide).
template <class C>
class BitRef {
 public:
  BitRef(C* p, int i) : p_(p), i_(i) { assert(0 <= i && i < C::width); }
  bool get() const { return p_->test(i_); }
  operator bool() const { return get(); }
  bool to_bool() const { return get(); }
  int length() const { return 1; }
  bool operator~() const { return !get(); }
  bool operator!() const { return !get(); }
  BitRef& operator=(u64 v) { p_->set_bit(i_, v != 0); return *this; }
  BitRef& operator=(const BitRef& o) { return *this = static_cast<u64>(o.get()); }  // copies the value

 private:
  C* p_;
  int i_;
};

// Bits [lo, hi] of an ap value; reads as an unsigned value (at most 64 bits),
// assignment replaces the bits (zero-extending or truncating the source).
// hi < lo (bit-reversed ranges) is not supported.
template <class C>
class RangeRef {
 public:
  RangeRef(C* p, int hi, int lo) : p_(p), hi_(hi), lo_(lo) {
    assert(0 <= lo && lo <= hi && hi < C::width && "range(hi, lo) out of bounds");
  }
  int length() const { return hi_ - lo_ + 1; }
  int lo() const { return lo_; }
  const C& base() const { return *p_; }
  u64 low64() const { return p_->get_bits(lo_, length() < 64 ? length() : 64); }
  u64 get() const { assert(length() <= 64 && "read a >64-bit range into an ap_uint<W> instead"); return low64(); }
  operator u64() const { return get(); }
  u64 to_uint64() const { return get(); }
  i64 to_int64() const { return static_cast<i64>(get()); }
  unsigned to_uint() const { return static_cast<unsigned>(get()); }
  int to_int() const { return static_cast<int>(get()); }
  long to_long() const { return static_cast<long>(get()); }
  unsigned long to_ulong() const { return static_cast<unsigned long>(get()); }

  RangeRef& operator=(u64 v) {
    for (int off = 0; off < length(); off += 64, v = 0)
      p_->set_bits(lo_ + off, chunk(off), v);
    return *this;
  }
  RangeRef& operator=(const RangeRef& o) { copy_from(o.base(), o.lo(), o.length()); return *this; }
  template <class C2> RangeRef& operator=(const RangeRef<C2>& o) { copy_from(o.base(), o.lo(), o.length()); return *this; }
  template <int W2> RangeRef& operator=(const ApInt<W2, false, true>& v) { copy_from(v, 0, W2); return *this; }

 private:
  int chunk(int off) const { return length() - off < 64 ? length() - off : 64; }
  // Copy n source bits from src (anything with get_bits) starting at slo.
  template <class Src> void copy_from(const Src& src, int slo, int n) {
    for (int off = 0; off < length(); off += 64) {
      int k = chunk(off), avail = n - off;
      u64 v = avail <= 0 ? 0 : src.get_bits(slo + off, avail < k ? avail : k);
      p_->set_bits(lo_ + off, k, v);
    }
  }
  C* p_;
  int hi_, lo_;
};

// ---------------------------------------------------------------- operand traits
// IntOp<T>: integer operands (ap values, bit/range proxies, C integers), with
// their signedness, width and a 64-bit value getter.
template <class T> struct IntOp {
  static constexpr bool ok = std::is_integral_v<T>, ap = false, sgn = std::is_signed_v<T>;
  static constexpr int width = std::is_same_v<T, bool> ? 1 : int(sizeof(T) * 8);
  static auto get(const T& x) {
    if constexpr (std::is_signed_v<T>) return static_cast<i64>(x);
    else return static_cast<u64>(x);
  }
};
template <int W, bool S> struct IntOp<ApInt<W, S, false>> {
  static constexpr bool ok = true, ap = true, sgn = S;
  static constexpr int width = W;
  static auto get(const ApInt<W, S, false>& x) { return x.raw(); }
};
template <class C> struct IntOp<BitRef<C>> {
  static constexpr bool ok = true, ap = true, sgn = false;
  static constexpr int width = 1;
  static u64 get(const BitRef<C>& x) { return x.get() ? 1 : 0; }
};
template <class C> struct IntOp<RangeRef<C>> {
  static constexpr bool ok = true, ap = true, sgn = false;
  static constexpr int width = 64;  // its length is known at run time only
  static u64 get(const RangeRef<C>& x) { return x.get(); }
};
template <class T> auto ival(const T& x) { return IntOp<T>::get(x); }
template <class T> u64 ubits(const T& x) { return static_cast<u64>(ival(x)); }

// Both integer operands, at least one of them ours (never hijack int + int).
template <class A, class B>
constexpr bool int_bin_v = IntOp<A>::ok && IntOp<B>::ok && (IntOp<A>::ap || IntOp<B>::ap);
template <class A, class B> using IntBin = std::enable_if_t<int_bin_v<A, B>, int>;

// The result widths of ap_int_base's RType, kept within 64 bits.
constexpr int cap64(int w) { return w > 64 ? 64 : w; }
template <class A, class B> struct RType {
  static constexpr int w1 = IntOp<A>::width, w2 = IntOp<B>::width;
  static constexpr bool s1 = IntOp<A>::sgn, s2 = IntOp<B>::sgn, s = s1 || s2;
  static constexpr int logic = cap64(w1 + (s2 && !s1) > w2 + (s1 && !s2) ? w1 + (s2 && !s1) : w2 + (s1 && !s2));
  static constexpr int plus = cap64(logic + 1), mult = cap64(w1 + w2), div = cap64(w1 + s2);
  static constexpr int mod = w1 < w2 + (!s2 && s1) ? w1 : w2 + (!s2 && s1);
  using plus_t = ApInt<plus, s>;
  using minus_t = ApInt<plus, true>;
  using mult_t = ApInt<mult, s>;
  using div_t = ApInt<div, s>;
  using mod_t = ApInt<mod, s1>;
  using logic_t = ApInt<logic, s>;
};

// ---------------------------------------------------------------- integer binary operators
// Two's complement is the same bit pattern signed or unsigned: the low 64 bits of the exact result, kept
// to the result's width.
#define SDSL_AP_BINARY(OP, T)                                          \
  template <class A, class B, IntBin<A, B> = 0>                        \
  inline typename RType<A, B>::T operator OP(const A& a, const B& b) { \
    return RType<A, B>::T::from_bits(ubits(a) OP ubits(b));           \
  }
SDSL_AP_BINARY(+, plus_t) SDSL_AP_BINARY(-, minus_t) SDSL_AP_BINARY(*, mult_t)
SDSL_AP_BINARY(&, logic_t) SDSL_AP_BINARY(|, logic_t) SDSL_AP_BINARY(^, logic_t)
#undef SDSL_AP_BINARY

// Division by zero traps (SIGFPE) just like C; INT64_MIN / -1 wraps.
template <class A, class B, IntBin<A, B> = 0>
inline typename RType<A, B>::div_t operator/(const A& a, const B& b) {
  using R = typename RType<A, B>::div_t;
  if constexpr (IntOp<A>::sgn || IntOp<B>::sgn) {
    i64 x = static_cast<i64>(ubits(a)), y = static_cast<i64>(ubits(b));
    return R::from_bits(y == -1 ? 0ull - static_cast<u64>(x) : static_cast<u64>(x / y));
  } else {
    return R::from_bits(ubits(a) / ubits(b));
  }
}
// C remainder (sign of the dividend); the result has the dividend's signedness.
template <class A, class B, IntBin<A, B> = 0>
inline typename RType<A, B>::mod_t operator%(const A& a, const B& b) {
  using R = typename RType<A, B>::mod_t;
  if constexpr (IntOp<A>::sgn || IntOp<B>::sgn) {
    i64 x = static_cast<i64>(ubits(a)), y = static_cast<i64>(ubits(b));
    return R::from_bits(y == -1 ? 0ull : static_cast<u64>(x % y));
  } else {
    return R::from_bits(ubits(a) % ubits(b));
  }
}

// Exact comparison of two integers of any signedness: -1, 0 or 1.
template <class A, class B>
inline int int_cmp(const A& a, const B& b) {
  auto x = ival(a);
  auto y = ival(b);
  if constexpr (IntOp<A>::sgn == IntOp<B>::sgn) {
    return x < y ? -1 : (x > y ? 1 : 0);
  } else if constexpr (IntOp<A>::sgn) {  // signed x vs unsigned y
    if (x < 0) return -1;
    u64 ux = static_cast<u64>(x);
    return ux < y ? -1 : (ux > y ? 1 : 0);
  } else {  // unsigned x vs signed y
    if (y < 0) return 1;
    u64 uy = static_cast<u64>(y);
    return x < uy ? -1 : (x > uy ? 1 : 0);
  }
}
#define SDSL_AP_CMP(OP) \
  template <class A, class B, IntBin<A, B> = 0> \
  inline bool operator OP(const A& a, const B& b) { return int_cmp(a, b) OP 0; }
SDSL_AP_CMP(==) SDSL_AP_CMP(!=) SDSL_AP_CMP(<) SDSL_AP_CMP(>) SDSL_AP_CMP(<=) SDSL_AP_CMP(>=)
#undef SDSL_AP_CMP

// Shifts: ap << n keeps the ap type (bits shifted out are lost); a negative
// signed amount shifts the other way.  C-int << ap gives the C type.
template <class B> inline u64 shift_amount(const B& b, bool& reverse) {
  auto n = ival(b);
  reverse = false;
  if constexpr (IntOp<B>::sgn) {
    if (n < 0) { reverse = true; return 0ull - static_cast<u64>(n); }
  }
  return static_cast<u64>(n);
}
// Result type of shifting A: A itself for ap values, 64-bit for proxies.
template <class A> struct ShiftRes { using type = ApInt<64, false>; };
template <int W, bool S> struct ShiftRes<ApInt<W, S, false>> { using type = ApInt<W, S, false>; };
template <class A, class B, std::enable_if_t<IntOp<A>::ap && IntOp<B>::ok, int> = 0>
inline typename ShiftRes<A>::type operator<<(const A& a, const B& b) {
  using R = typename ShiftRes<A>::type;
  bool rev;
  u64 n = shift_amount(b, rev);
  return rev ? R(a).shr(n) : R(a).shl(n);
}
template <class A, class B, std::enable_if_t<IntOp<A>::ap && IntOp<B>::ok, int> = 0>
inline typename ShiftRes<A>::type operator>>(const A& a, const B& b) {
  using R = typename ShiftRes<A>::type;
  bool rev;
  u64 n = shift_amount(b, rev);
  return rev ? R(a).shl(n) : R(a).shr(n);
}
template <class A, class B, std::enable_if_t<!IntOp<A>::ap && IntOp<A>::ok && IntOp<B>::ap, int> = 0>
inline A operator<<(A a, const B& b) {
  u64 n = ubits(b);
  return n >= 64 ? A(0) : static_cast<A>(static_cast<u64>(a) << n);
}
template <class A, class B, std::enable_if_t<!IntOp<A>::ap && IntOp<A>::ok && IntOp<B>::ap, int> = 0>
inline A operator>>(A a, const B& b) {
  u64 n = ubits(b);
  if constexpr (std::is_signed_v<A>) return static_cast<A>(static_cast<i64>(a) >> (n > 63 ? 63 : n));
  else return n >= 64 ? A(0) : static_cast<A>(static_cast<u64>(a) >> n);
}

// ---------------------------------------------------------------- with floating point
// ap op float -> float, ap op double -> double (computed in that type).
template <class A, class B>
constexpr bool int_flt_v = (IntOp<A>::ap && std::is_floating_point_v<B>) || (std::is_floating_point_v<A> && IntOp<B>::ap);
template <class A, class B>
using FltRes = std::conditional_t<std::is_floating_point_v<A>, A, B>;
template <class F, class T> inline F as_real(const T& x) {
  if constexpr (std::is_floating_point_v<T>) return static_cast<F>(x);
  else return static_cast<F>(ival(x));
}
#define SDSL_AP_FLT(OP)                                                             \
  template <class A, class B, std::enable_if_t<int_flt_v<A, B>, int> = 0>           \
  inline FltRes<A, B> operator OP(const A& a, const B& b) {                        \
    return as_real<FltRes<A, B>>(a) OP as_real<FltRes<A, B>>(b);                    \
  }
SDSL_AP_FLT(+) SDSL_AP_FLT(-) SDSL_AP_FLT(*) SDSL_AP_FLT(/)
#undef SDSL_AP_FLT
#define SDSL_AP_FLT_CMP(OP)                                                          \
  template <class A, class B, std::enable_if_t<int_flt_v<A, B>, int> = 0>            \
  inline bool operator OP(const A& a, const B& b) {                                 \
    return as_real<long double>(a) OP as_real<long double>(b);                        \
  }
SDSL_AP_FLT_CMP(==) SDSL_AP_FLT_CMP(!=) SDSL_AP_FLT_CMP(<) SDSL_AP_FLT_CMP(>) SDSL_AP_FLT_CMP(<=) SDSL_AP_FLT_CMP(>=)
#undef SDSL_AP_FLT_CMP

template <int W, bool S>
inline std::ostream& operator<<(std::ostream& os, const ApInt<W, S, false>& x) { return os << x.raw(); }

// ---------------------------------------------------------------- ap_uint<W>, W > 64
// Array of 64-bit words, least significant first; bits above W kept zero.
// Meant for memory-bus words: bit/range get and set, bitwise ops, shifts,
// equality.  No arithmetic.
template <int W>
class ApInt<W, true, true> {
  static_assert(W <= 64, "ap_int<W> (signed) supports W <= 64; only ap_uint<W> may be wider");
};

template <int W>
class ApInt<W, false, true> {
  static_assert(W <= 4096, "ap_uint<W> supports W <= 4096");
  static constexpr int N = (W + 63) / 64;

 public:
  static constexpr int width = W;

  ApInt() : w_{} {}
  ApInt(const ApInt&) = default;
  ApInt& operator=(const ApInt&) = default;
  // From a C integer or narrow ap value: sign-extend, then keep W bits.
  template <class T, std::enable_if_t<IntOp<T>::ok, int> = 0>
  ApInt(const T& x) : w_{} {
    u64 v = ubits(x);
    bool neg = IntOp<T>::sgn && static_cast<i64>(v) < 0;
    w_[0] = v;
    for (int i = 1; i < N; ++i) w_[i] = neg ? ~0ull : 0ull;
    trim();
  }
  template <int W2>
  ApInt(const ApInt<W2, false, true>& o) : w_{} { copy_bits(o, 0, W2); }
  template <class C>
  ApInt(const RangeRef<C>& r) : w_{} { copy_bits(r.base(), r.lo(), r.length()); }

  bool test(int i) const { assert(0 <= i && i < W); return (w_[i / 64] >> (i % 64)) & 1; }
  void set_bit(int i, bool b) {
    assert(0 <= i && i < W);
    if (b) w_[i / 64] |= 1ull << (i % 64);
    else w_[i / 64] &= ~(1ull << (i % 64));
  }
  // Bits [lo, lo+n), n <= 64, possibly straddling two words.
  u64 get_bits(int lo, int n) const {
    assert(lo >= 0 && n >= 1 && n <= 64 && lo + n <= W);
    int wi = lo / 64, off = lo % 64;
    u64 v = w_[wi] >> off;
    if (off != 0 && wi + 1 < N) v |= w_[wi + 1] << (64 - off);
    return v & low_mask(n);
  }
  void set_bits(int lo, int n, u64 v) {
    assert(lo >= 0 && n >= 1 && n <= 64 && lo + n <= W);
    u64 m = low_mask(n);
    v &= m;
    int wi = lo / 64, off = lo % 64;
    w_[wi] = (w_[wi] & ~(m << off)) | (v << off);
    if (off != 0 && off + n > 64 && wi + 1 < N) {  // spill into the next word (wi + 1 < N: for g++ -Warray-bounds)
      int sh = 64 - off;
      w_[wi + 1] = (w_[wi + 1] & ~(m >> sh)) | (v >> sh);
    }
  }
  BitRef<ApInt> operator[](int i) { return BitRef<ApInt>(this, i); }
  bool operator[](int i) const { return test(i); }
  RangeRef<ApInt> range(int hi, int lo) const { return RangeRef<ApInt>(const_cast<ApInt*>(this), hi, lo); }
  RangeRef<ApInt> range() const { return range(W - 1, 0); }
  RangeRef<ApInt> operator()(int hi, int lo) const { return range(hi, lo); }

  u64 to_uint64() const { return w_[0]; }
  i64 to_int64() const { return static_cast<i64>(w_[0]); }
  unsigned to_uint() const { return static_cast<unsigned>(w_[0]); }
  int to_int() const { return static_cast<int>(w_[0]); }
  int length() const { return W; }
  bool iszero() const { for (int i = 0; i < N; ++i) if (w_[i]) return false; return true; }
  explicit operator bool() const { return !iszero(); }
  u64 word(int i) const { return w_[i]; }

  ApInt operator~() const { ApInt r; for (int i = 0; i < N; ++i) r.w_[i] = ~w_[i]; r.trim(); return r; }
  ApInt operator<<(int n) const {
    if (n < 0) return *this >> -n;
    ApInt r;
    for (int i = W - 1; i >= n; --i) r.set_bit(i, test(i - n));  // bit loop: simple, csim-fast enough
    return r;
  }
  ApInt operator>>(int n) const {
    if (n < 0) return *this << -n;
    ApInt r;
    for (int i = 0; i + n < W; ++i) r.set_bit(i, test(i + n));
    return r;
  }
  ApInt& operator<<=(int n) { return *this = *this << n; }
  ApInt& operator>>=(int n) { return *this = *this >> n; }
  ApInt& operator&=(const ApInt& b) { for (int i = 0; i < N; ++i) w_[i] &= b.w_[i]; return *this; }
  ApInt& operator|=(const ApInt& b) { for (int i = 0; i < N; ++i) w_[i] |= b.w_[i]; return *this; }
  ApInt& operator^=(const ApInt& b) { for (int i = 0; i < N; ++i) w_[i] ^= b.w_[i]; return *this; }

  // Hidden friends: found by ADL, and allow conversions on either side (w == 0).
  friend ApInt operator&(ApInt a, const ApInt& b) { return a &= b; }
  friend ApInt operator|(ApInt a, const ApInt& b) { return a |= b; }
  friend ApInt operator^(ApInt a, const ApInt& b) { return a ^= b; }
  friend bool operator==(const ApInt& a, const ApInt& b) {
    for (int i = 0; i < N; ++i) if (a.w_[i] != b.w_[i]) return false;
    return true;
  }
  friend bool operator!=(const ApInt& a, const ApInt& b) { return !(a == b); }

  // Decimal by default (repeated division by 1e19), hex with std::hex.
  friend std::ostream& operator<<(std::ostream& os, const ApInt& x) {
    std::string s;
    if (os.flags() & std::ios::hex) {
      const char* dig = "0123456789abcdef";
      for (int i = W - 1; i >= 0; i -= 4) {
        int lo = i - 3 < 0 ? 0 : i - 3;
        s += dig[x.get_bits(lo, i - lo + 1)];
      }
      s.erase(0, s.find_first_not_of('0') == std::string::npos ? s.size() - 1 : s.find_first_not_of('0'));
      return os << s;
    }
    u64 t[N];
    for (int i = 0; i < N; ++i) t[i] = x.w_[i];
    const u64 base = 10000000000000000000ull;  // 1e19
    for (;;) {
      u128 rem = 0;
      bool more = false;
      for (int i = N - 1; i >= 0; --i) {
        u128 cur = (rem << 64) | t[i];
        t[i] = static_cast<u64>(cur / base);
        rem = cur % base;
        more = more || t[i] != 0;
      }
      std::string chunk = std::to_string(static_cast<u64>(rem));
      if (more) chunk.insert(0, 19 - chunk.size(), '0');
      s.insert(0, chunk);
      if (!more) break;
    }
    return os << s;
  }

 private:
  void trim() { if (W % 64) w_[N - 1] &= low_mask(W % 64); }
  template <class Src> void copy_bits(const Src& src, int slo, int n) {
    int len = n < W ? n : W;
    for (int off = 0; off < len; off += 64)
      set_bits(off, len - off < 64 ? len - off : 64, src.get_bits(slo + off, len - off < 64 ? len - off : 64));
  }
  u64 w_[N];
};

}  // namespace streamdsl_ap

// Public names.  Aliases (not derived classes) so that every operation returns
// exactly ap_int<W> / ap_uint<W>, and templates can still deduce W.
template <int W> using ap_int = streamdsl_ap::ApInt<W, true>;
template <int W> using ap_uint = streamdsl_ap::ApInt<W, false>;

#endif  // STREAMDSL_AP_INT_H
