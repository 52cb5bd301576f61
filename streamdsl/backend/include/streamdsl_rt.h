// streamdsl_rt.h: helpers the emitted HLS C++ uses so that it computes exactly
// what the reference simulator computes (see streamdsl/types.py for the rules).
// Synthesizable and plain C++14 (the synthesis path: no `if constexpr`, no `_v` traits; the kind of a type
// picks an overload instead): templates over scalar types, no heap, no recursion.  It includes ap_int.h,
// ap_fixed.h and hls_math.h by name: Vitis's own in synthesis, include/csim's in streamdsl's C-simulation.
#pragma once
// Kernels leave local arrays that they overwrite whole uninitialised, as HLS code does (an initialiser is a
// pass over the array in hardware); g++ -O2 cannot always prove that the writes cover every element.
#if defined(__GNUC__) && !defined(__clang__) && !defined(__SYNTHESIS__)
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

namespace kind {
// What a helper must do differently for a type: floats round, signed builtins trap on MIN / -1 (x86 SIGFPE),
// the rest (unsigned builtins, ap_int, ap_fixed) wrap.
struct real {};
struct signed_builtin {};
struct other {};
template <typename T> struct of {
  typedef typename std::conditional<
      std::is_floating_point<T>::value, real,
      typename std::conditional<std::is_integral<T>::value && std::is_signed<T>::value, signed_builtin,
                                other>::type>::type type;
};
}  // namespace kind

namespace detail {
// Floor division and modulo with Python semantics; x // 0 == 0 and x % 0 == 0 (checked by the callers).
template <typename T> inline T floordiv(T a, T b, kind::real) { return std::floor(a / b); }
template <typename T> inline T floordiv(T a, T b, kind::other) {
  T q = T(a / b);
  if ((a % b != T(0)) && ((a < T(0)) != (b < T(0)))) q = T(q - T(1));
  return q;
}
// The most negative value divided by -1 overflows (x86 traps: SIGFPE); the simulator (NumPy) wraps it to
// itself, with remainder 0.  The negation is done unsigned, where it wraps without undefined behaviour.
template <typename T> inline T floordiv(T a, T b, kind::signed_builtin) {
  typedef typename std::make_unsigned<T>::type U;
  if (b == T(-1)) return T(U(0) - U(a));
  return floordiv(a, b, kind::other());
}

template <typename T> inline T floormod(T a, T b, kind::real) {
  T r = std::fmod(a, b);
  if (r != T(0) && ((r < T(0)) != (b < T(0)))) r += b;
  return r;
}
template <typename T> inline T floormod(T a, T b, kind::other) {
  T r = T(a % b);
  if (r != T(0) && ((r < T(0)) != (b < T(0)))) r = T(r + b);
  return r;
}
template <typename T> inline T floormod(T a, T b, kind::signed_builtin) {
  if (b == T(-1)) return T(0);
  return floormod(a, b, kind::other());
}

// NaN in, NaN out for max and min of floats; other types have no NaN.
template <typename T> inline bool either_nan(T a, T b, kind::real) { return std::isnan(a) || std::isnan(b); }
template <typename T, typename K> inline bool either_nan(T, T, K) { return false; }
}  // namespace detail

template <typename T> inline T floordiv(T a, T b) {
  if (b == T(0)) return T(0);
  return detail::floordiv(a, b, typename kind::of<T>::type());
}

template <typename T> inline T floormod(T a, T b) {
  if (b == T(0)) return T(0);
  return detail::floormod(a, b, typename kind::of<T>::type());
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
  if (detail::either_nan(a, b, typename kind::of<T>::type())) return std::numeric_limits<T>::quiet_NaN();
  return a < b ? b : a;
}

template <typename T> inline T min(T a, T b) {
  if (detail::either_nan(a, b, typename kind::of<T>::type())) return std::numeric_limits<T>::quiet_NaN();
  return b < a ? b : a;
}

template <typename T> inline T abs(T a) { return a < T(0) ? T(-a) : a; }

template <typename T> inline T sigmoid(T x) { return T(1) / (T(1) + hls::exp(-x)); }

// Float -> integer: truncate toward zero, saturate at the range, NaN -> 0.
// In the value's own precision: a float converts with one single-precision float-to-integer operator (never
// through double, which would be a double converter in every lane).  (F)hi may round up past hi; a value at or
// above it saturates, and every float below it is below hi too.
template <typename I, typename F> inline I cast_int(F x, long long lo, unsigned long long hi) {
  if (x != x) return I(0);
  const F v = std::trunc(x);
  if (v <= (F)lo) return I(lo);
  if (v >= (F)hi) return I(hi);
  if (v < 0) return I((long long)v);
  return I((unsigned long long)v);
}

// ---------------------------------------------------------------------------- the bus
// A stream token moves as beats of L values (at most 512 bits: streamdsl/dfg/packing.py); DRAM holds dense
// 512-bit words, value i of a word in bits [i*B, (i+1)*B) (B the value's width).
template <typename T, int L> struct beat {
  T v[L];
};

typedef ap_uint<512> word;

// raw<T>: a value's bit pattern (at most 64 bits) and back.  C++14 (specialisations, no if constexpr).
template <typename T, typename Enable = void> struct raw;
template <> struct raw<float> {
  static unsigned long long to(float x) { union { float f; uint32_t u; } c; c.f = x; return c.u; }
  static float from(unsigned long long b) { union { float f; uint32_t u; } c; c.u = (uint32_t)b; return c.f; }
};
template <> struct raw<double> {
  static unsigned long long to(double x) { union { double f; uint64_t u; } c; c.f = x; return c.u; }
  static double from(unsigned long long b) { union { double f; uint64_t u; } c; c.u = (uint64_t)b; return c.f; }
};
template <typename T> struct raw<T, typename std::enable_if<std::is_integral<T>::value>::type> {
  typedef typename std::make_unsigned<T>::type U;
  static unsigned long long to(T x) { return (unsigned long long)(U)x; }
  static T from(unsigned long long b) { return (T)(U)b; }
};
template <int W> struct raw<ap_int<W>> {
  static unsigned long long to(const ap_int<W>& x) { return x.range(W - 1, 0).to_uint64(); }
  static ap_int<W> from(unsigned long long b) { ap_int<W> r; r.range(W - 1, 0) = b; return r; }
};
template <int W> struct raw<ap_uint<W>> {
  static unsigned long long to(const ap_uint<W>& x) { return x.range(W - 1, 0).to_uint64(); }
  static ap_uint<W> from(unsigned long long b) { ap_uint<W> r; r.range(W - 1, 0) = b; return r; }
};
template <int W, int I, ap_q_mode Q, ap_o_mode O, int N> struct raw<ap_fixed<W, I, Q, O, N>> {
  static unsigned long long to(const ap_fixed<W, I, Q, O, N>& x) { return x.range(W - 1, 0).to_uint64(); }
  static ap_fixed<W, I, Q, O, N> from(unsigned long long b) { ap_fixed<W, I, Q, O, N> r; r.range(W - 1, 0) = b; return r; }
};
template <int W, int I, ap_q_mode Q, ap_o_mode O, int N> struct raw<ap_ufixed<W, I, Q, O, N>> {
  static unsigned long long to(const ap_ufixed<W, I, Q, O, N>& x) { return x.range(W - 1, 0).to_uint64(); }
  static ap_ufixed<W, I, Q, O, N> from(unsigned long long b) { ap_ufixed<W, I, Q, O, N> r; r.range(W - 1, 0) = b; return r; }
};

// Value i of a word, and the word of a beat (B: the value's width in bits).
template <typename T, int B> inline T word_value(const word& w, int i) {
  return raw<T>::from(w.range(i * B + B - 1, i * B).to_uint64());
}
template <typename T, int B> inline void set_word_value(word& w, int i, const T& x) {
  w.range(i * B + B - 1, i * B) = raw<T>::to(x);
}
template <typename T, int L, int B> inline beat<T, L> word_beat(const word& w) {
  beat<T, L> b;
  for (int i = 0; i < L; i++) {
#pragma HLS unroll
    b.v[i] = word_value<T, B>(w, i);
  }
  return b;
}
// The L values of a word from value ``start`` on (a tile smaller than a word: several lie in one).
template <typename T, int L, int B> inline beat<T, L> word_beat_at(const word& w, int start) {
  beat<T, L> b;
  for (int i = 0; i < L; i++) {
#pragma HLS unroll
    b.v[i] = word_value<T, B>(w, start + i);
  }
  return b;
}
template <typename T, int L, int B> inline word beat_word(const beat<T, L>& b) {
  word w = 0;
  for (int i = 0; i < L; i++) {
#pragma HLS unroll
    set_word_value<T, B>(w, i, b.v[i]);
  }
  return w;
}

}  // namespace sd

// Loop counters for the emitted-code accounting (HLSProject.accounting): every labelled loop of the emitted
// code counts its entries and its iterations when the C-simulation is compiled with -DSD_ACCOUNT, and the
// counts are written at exit to the file $SD_ACCOUNT_FILE names.  Otherwise (and in synthesis) they are nothing.
#if defined(SD_ACCOUNT) && !defined(__SYNTHESIS__)
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
namespace sd {
namespace account {
struct counter {
  const char* fn;
  const char* label;
  unsigned long long entries, trips;
  counter* next;
};
struct registry {
  std::mutex mu;
  counter* head = nullptr;
  ~registry() {
    const char* path = std::getenv("SD_ACCOUNT_FILE");
    if (!path) return;
    FILE* f = std::fopen(path, "w");
    if (!f) return;
    for (counter* c = head; c; c = c->next) std::fprintf(f, "%s %s %llu %llu\n", c->fn, c->label, c->entries, c->trips);
    std::fclose(f);
  }
};
inline registry& reg() {
  static registry r;
  return r;
}
inline counter* find(const char* fn, const char* label) {
  registry& r = reg();
  std::lock_guard<std::mutex> lk(r.mu);
  for (counter* c = r.head; c; c = c->next)
    if (!std::strcmp(c->fn, fn) && !std::strcmp(c->label, label)) return c;
  r.head = new counter{fn, label, 0, 0, r.head};
  return r.head;
}
}  // namespace account
}  // namespace sd
#define SD_ENTRY(l) do { static sd::account::counter* sd_c_ = sd::account::find(__func__, #l); sd_c_->entries++; } while (0)
#define SD_TRIP(l) do { static sd::account::counter* sd_c_ = sd::account::find(__func__, #l); sd_c_->trips++; } while (0)
#else
#define SD_ENTRY(l) ((void)0)
#define SD_TRIP(l) ((void)0)
#endif
