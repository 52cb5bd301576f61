// streamdsl_native.h: the value semantics of streamdsl/numeric.py in C++, for the simulator's compiled
// path (streamdsl/backend/cgen.py prints kernels against it; streamdsl/backend/native.py compiles and
// loads them).  Every helper computes exactly what the interpreter's NumPy code computes, bit for bit:
// integers are int64_t (uint64_t for u64) wrapped at their declared width, f16/bf16/f32 compute in
// float and round back, f64 and fixed point in double.  Transcendentals call NumPy's (and SciPy's) own
// ufunc inner loops through pointers the loader binds (sd_bind), so they are the interpreter's
// functions, not libm's.  Not for HLS: the emitter has its own headers beside this one.
#pragma once
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

namespace sdn {

// ------------------------------------------------------------------ errors
// An index outside its dimension: thrown where it happens, caught by the exported entry point, which
// hands the checked access's number back to Python (the node and its source line).
struct Oob {
  int64_t node, dim, index, size;
};

[[noreturn]] __attribute__((noinline, cold)) static void oob(int64_t i, int64_t n, int64_t node, int64_t dim) {
  throw Oob{node, dim, i, n};
}

static inline int64_t ck(int64_t i, int64_t n, int64_t node, int64_t dim) {
  if (__builtin_expect((uint64_t)i >= (uint64_t)n, 0)) oob(i, n, node, dim);
  return i;
}

// A local array: its memory is made when its statement first runs and reused by later runs of it in the
// call (the interpreter makes a new one per Alloc; the contents are refilled at the statement, so reusing
// the memory is the same program).  A failure names the local (-1 - id) for the interpreter's error.
template <class T> struct Buf {
  T* p = nullptr;
  Buf() = default;
  ~Buf() { free(p); }
  Buf(const Buf&) = delete;
  Buf& operator=(const Buf&) = delete;
  T* at(size_t n, int64_t id) {
    if (!p && !(p = (T*)calloc(n ? n : 1, sizeof(T)))) throw Oob{-1 - id, 0, 0, 0};
    return p;
  }
};

template <class T> static inline void fill(T* p, size_t n, T v) {
  for (size_t i = 0; i < n; i++) p[i] = v;
}

// ------------------------------------------------------------ bit casts
static inline uint32_t fbits(float x) { uint32_t u; memcpy(&u, &x, 4); return u; }
static inline float bitsf(uint32_t u) { float x; memcpy(&x, &u, 4); return x; }
static inline uint64_t dbits(double x) { uint64_t u; memcpy(&u, &x, 8); return u; }
static inline double bitsd(uint64_t u) { double x; memcpy(&x, &u, 8); return x; }

// --------------------------------------------------------------- integers
// Two's-complement wrap of a 64-bit pattern to W bits (numeric.wrap_int).
template <int W> static inline int64_t ws(uint64_t x) {
  if constexpr (W == 64) return (int64_t)x;
  else return (int64_t)(x << (64 - W)) >> (64 - W);
}
template <int W> static inline uint64_t wu(uint64_t x) {
  if constexpr (W == 64) return x;
  else return x & ((uint64_t(1) << W) - 1);
}

// Python floor division and modulo; x // 0 == 0 and x % 0 == 0 (ops._safe_div); NumPy's
// INT64_MIN // -1 == INT64_MIN and INT64_MIN % -1 == 0.
static inline int64_t fdiv(int64_t a, int64_t b) {
  if (b == 0) return 0;
  if (b == -1) return (int64_t)(0 - (uint64_t)a);
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
  return q;
}
static inline uint64_t fdiv(uint64_t a, uint64_t b) { return b == 0 ? 0 : a / b; }
static inline int64_t fmod_(int64_t a, int64_t b) {
  if (b == 0 || b == -1) return 0;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
static inline uint64_t fmod_(uint64_t a, uint64_t b) { return b == 0 ? 0 : a % b; }

// Shifts (ops._shl/_shr): by 64 or more, or a negative amount, 0 (or the sign for >> of a negative).
static inline int64_t shl(int64_t a, int64_t n) { return (n < 0 || n >= 64) ? 0 : (int64_t)((uint64_t)a << n); }
static inline uint64_t shl(uint64_t a, int64_t n) { return (n < 0 || n >= 64) ? 0 : a << n; }
static inline int64_t shr(int64_t a, int64_t n) { return (n < 0 || n >= 64) ? (a < 0 ? -1 : 0) : a >> n; }
static inline uint64_t shr(uint64_t a, int64_t n) { return (n < 0 || n >= 64) ? 0 : a >> n; }

template <class T> static inline T imax(T a, T b) { return a >= b ? a : b; }
template <class T> static inline T imin(T a, T b) { return a <= b ? a : b; }

// np.maximum / np.minimum on floats: a NaN operand wins (the first one if both are).
template <class F> static inline F fmax_(F a, F b) { return (a >= b || a != a) ? a : b; }
template <class F> static inline F fmin_(F a, F b) { return (a <= b || a != a) ? a : b; }

// Float -> integer (numeric._float_to_int): truncate toward zero, saturate, NaN -> 0.
static inline int64_t f2s(double x, double lo, double hi, int64_t ilo, int64_t ihi) {
  double t = x != x ? 0.0 : trunc(x);
  if (t <= lo) return ilo;
  if (t >= hi) return ihi;
  return (int64_t)t;
}
static inline uint64_t f2u(double x, double hi, uint64_t ihi) {
  double t = x != x ? 0.0 : trunc(x);
  if (t <= 0.0) return 0;
  if (t >= hi) return ihi;
  return (uint64_t)t;
}

// ------------------------------------------------------------------ floats
// f16 storage is the half's bits; NumPy rounds to nearest-even (directly from double for f64 sources).
static inline float h2f(uint16_t h) { _Float16 x; memcpy(&x, &h, 2); return (float)x; }
static inline uint16_t nan16(uint16_t sgn, uint64_t sig) {  // NumPy keeps the top payload bits of a NaN
  uint16_t r = (uint16_t)(0x7c00u + sig);
  return (uint16_t)(sgn + (r == 0x7c00u ? 0x7c01u : r));
}
static inline uint16_t f2h(float x) {
  if (x != x) { uint32_t u = fbits(x); return nan16((uint16_t)((u >> 16) & 0x8000u), (u & 0x7fffffu) >> 13); }
  _Float16 h = (_Float16)x; uint16_t r; memcpy(&r, &h, 2); return r;
}
static inline uint16_t d2h(double x) {
  if (x != x) { uint64_t u = dbits(x); return nan16((uint16_t)((u >> 48) & 0x8000u), (u & 0xfffffffffffffull) >> 42); }
  _Float16 h = (_Float16)x; uint16_t r; memcpy(&r, &h, 2); return r;
}
static inline float r16(float x) { return h2f(f2h(x)); }

// bf16 (numeric.round_bf16): nearest-even to the upper half of an f32; any NaN becomes NumPy's NaN.
static inline float rbf16(float x) {
  if (x != x) return bitsf(0x7fc00000u);
  uint32_t u = fbits(x);
  return bitsf((u + 0x7fffu + ((u >> 16) & 1u)) & 0xffff0000u);
}

// np.mod on doubles (npy_divmod): the sign of the divisor, a zero result +0.
static inline double pymod(double a, double b) {
  double m = fmod(a, b);
  if (b == 0.0) return m;
  if (m != 0.0) {
    if ((b < 0) != (m < 0)) m += b;
  } else {
    m = copysign(0.0, b);
  }
  return m;
}

// Fixed point (numeric.quantize_fixed): toward -inf on the 2**-frac grid, wrapped at the width.
static inline double fix(double x, double scale, double m, bool sgn) {
  double v = (x != x || x == INFINITY || x == -INFINITY) ? 0.0 : x;
  v = floor(v * scale);
  v = sgn ? pymod(v + m / 2, m) - m / 2 : pymod(v, m);
  return v / scale;
}

// ------------------------------------------------------- float32 lanes
// Four jammed iterations in the lanes of a vector (backend/clanes.py): IEEE arithmetic per lane, as the
// scalar code.  tr4 transposes four rows of four (lane l's next four elements -> the l-th of each).
typedef float f4 __attribute__((vector_size(16)));
typedef int32_t i4 __attribute__((vector_size(16)));
static inline f4 splat4(float x) { return (f4){x, x, x, x}; }
static inline f4 ld4(const float* p) { f4 v; memcpy(&v, p, sizeof v); return v; }
#if defined(__clang__)
#define SDN_SHUF(a, b, i, j, k, l) __builtin_shufflevector(a, b, i, j, k, l)
#else
#define SDN_SHUF(a, b, i, j, k, l) __builtin_shuffle(a, b, (i4){i, j, k, l})
#endif
static inline void tr4(f4& a, f4& b, f4& c, f4& d) {
  const f4 t0 = SDN_SHUF(a, b, 0, 4, 1, 5), t1 = SDN_SHUF(a, b, 2, 6, 3, 7);
  const f4 t2 = SDN_SHUF(c, d, 0, 4, 1, 5), t3 = SDN_SHUF(c, d, 2, 6, 3, 7);
  a = SDN_SHUF(t0, t2, 0, 1, 4, 5);
  b = SDN_SHUF(t0, t2, 2, 3, 6, 7);
  c = SDN_SHUF(t1, t3, 0, 1, 4, 5);
  d = SDN_SHUF(t1, t3, 2, 3, 6, 7);
}

// ---------------------------------------------------- NumPy's own loops
// A ufunc inner loop (PyUFuncGenericFunction) and its data, bound by the loader.
typedef void (*Loop)(char**, const intptr_t*, const intptr_t*, void*);
struct Bound {
  Loop fn;
  void* data;
};

}  // namespace sdn

extern "C" sdn::Bound sd_loops[16];
sdn::Bound sd_loops[16];
extern "C" void sd_bind(int slot, void* fn, void* data) {
  sd_loops[slot].fn = (sdn::Loop)fn;
  sd_loops[slot].data = data;
}

namespace sdn {
template <class F> static inline F call1(int slot, F x) {
  F out;
  char* args[2] = {(char*)&x, (char*)&out};
  intptr_t n = 1, st[2] = {sizeof(F), sizeof(F)};
  sd_loops[slot].fn(args, &n, st, sd_loops[slot].data);
  return out;
}
// n elements in one call, as the interpreter's vector call (each element is computed on its own)
template <class F> static inline void vcall1(int slot, const F* x, F* out, int64_t n) {
  char* args[2] = {(char*)x, (char*)out};
  intptr_t len = n, st[2] = {sizeof(F), sizeof(F)};
  sd_loops[slot].fn(args, &len, st, sd_loops[slot].data);
}
template <class F> static inline F call2(int slot, F x, F y) {
  F out;
  char* args[3] = {(char*)&x, (char*)&y, (char*)&out};
  intptr_t n = 1, st[3] = {sizeof(F), sizeof(F), sizeof(F)};
  sd_loops[slot].fn(args, &n, st, sd_loops[slot].data);
  return out;
}
}  // namespace sdn
