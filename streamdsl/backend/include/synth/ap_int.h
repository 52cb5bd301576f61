// synth/ap_int.h: the declarations of Vitis HLS's ap_int.h that streamdsl's emitted code may use, in C++14,
// written for streamdsl from UG1399 ("Arbitrary Precision Data Types Library": names, template parameters,
// constructors, member functions and the widths of operator results).  No vendor code, and declarations
// only: nothing here runs or synthesizes.  They stand in for Vitis's headers in one check,
//     g++ -std=c++14 -D__SYNTHESIS__ -fsyntax-only -Iinclude/synth -Iinclude kernel.cpp
// so the synthesis path of a generated kernel is checked as plain C++14 against the vendor's API where no
// Vitis is installed (tests/backend/test_synthesis_path.py).  See include/README.md.
#pragma once
#ifndef __SYNTHESIS__
#error "include/synth declares the vendor's API for a -D__SYNTHESIS__ syntax check only; C-simulate with include/csim"
#endif

// The widest ap_[u]int a design may use unless it defines AP_INT_MAX_W (at most 4096) first (UG1399).
#ifndef AP_INT_MAX_W
#define AP_INT_MAX_W 1024
#endif

enum ap_q_mode { AP_RND, AP_RND_ZERO, AP_RND_MIN_INF, AP_RND_INF, AP_RND_CONV, AP_TRN, AP_TRN_ZERO };
enum ap_o_mode { AP_SAT, AP_SAT_ZERO, AP_SAT_SYM, AP_WRAP, AP_WRAP_SM };

typedef long long ap_slong;
typedef unsigned long long ap_ulong;

template <int _AP_W, bool _AP_S> struct ap_int_base;
template <int _AP_W> struct ap_int;
template <int _AP_W> struct ap_uint;
template <int _AP_W, bool _AP_S> struct ap_range_ref;
template <int _AP_W, bool _AP_S> struct ap_bit_ref;
template <int _AP_W, int _AP_I, bool _AP_S, ap_q_mode _AP_Q = AP_TRN, ap_o_mode _AP_O = AP_WRAP, int _AP_N = 0>
struct ap_fixed_base;
template <int _AP_W, int _AP_I, ap_q_mode _AP_Q = AP_TRN, ap_o_mode _AP_O = AP_WRAP, int _AP_N = 0>
struct ap_fixed;
template <int _AP_W, int _AP_I, ap_q_mode _AP_Q = AP_TRN, ap_o_mode _AP_O = AP_WRAP, int _AP_N = 0>
struct ap_ufixed;

// ap_int<W> or ap_uint<W>: what an operator of the library returns.
template <int _AP_W, bool _AP_S> struct _ap_int_factory { typedef ap_int<_AP_W> type; };
template <int _AP_W> struct _ap_int_factory<_AP_W, false> { typedef ap_uint<_AP_W> type; };

// The C integer types an ap value mixes with, as the ap_int_base of their width and signedness.
template <typename T> struct _ap_c_int {};
#define SD_AP_C_INT(C_TYPE, BITS, SIGNED) \
  template <> struct _ap_c_int<C_TYPE> { enum { width = BITS, sign = SIGNED }; };
SD_AP_C_INT(bool, 1, false)
SD_AP_C_INT(char, 8, (char(-1) < char(0)))
SD_AP_C_INT(signed char, 8, true)
SD_AP_C_INT(unsigned char, 8, false)
SD_AP_C_INT(short, 8 * sizeof(short), true)
SD_AP_C_INT(unsigned short, 8 * sizeof(short), false)
SD_AP_C_INT(int, 8 * sizeof(int), true)
SD_AP_C_INT(unsigned int, 8 * sizeof(int), false)
SD_AP_C_INT(long, 8 * sizeof(long), true)
SD_AP_C_INT(unsigned long, 8 * sizeof(long), false)
SD_AP_C_INT(long long, 64, true)
SD_AP_C_INT(unsigned long long, 64, false)
#undef SD_AP_C_INT

// The constructors every ap type has (as in the vendor's library, implicit): from any ap value and from each C
// arithmetic type, a string and a string in a radix.  Kept defined for ap_fixed.h.
#define _SD_CONVERTING_CTORS(NAME)                                                                  \
  template <int _AP_W2> NAME(const ap_int<_AP_W2>& op);                                             \
  template <int _AP_W2> NAME(const ap_uint<_AP_W2>& op);                                            \
  template <int _AP_W2, bool _AP_S2> NAME(const ap_int_base<_AP_W2, _AP_S2>& op);                    \
  template <int _AP_W2, bool _AP_S2> NAME(const ap_range_ref<_AP_W2, _AP_S2>& ref);                  \
  template <int _AP_W2, bool _AP_S2> NAME(const ap_bit_ref<_AP_W2, _AP_S2>& ref);                    \
  template <int _AP_W2, int _AP_I2, ap_q_mode _AP_Q2, ap_o_mode _AP_O2, int _AP_N2>                 \
  NAME(const ap_fixed<_AP_W2, _AP_I2, _AP_Q2, _AP_O2, _AP_N2>& op);                                 \
  template <int _AP_W2, int _AP_I2, ap_q_mode _AP_Q2, ap_o_mode _AP_O2, int _AP_N2>                 \
  NAME(const ap_ufixed<_AP_W2, _AP_I2, _AP_Q2, _AP_O2, _AP_N2>& op);                                \
  template <int _AP_W2, int _AP_I2, bool _AP_S2, ap_q_mode _AP_Q2, ap_o_mode _AP_O2, int _AP_N2>    \
  NAME(const ap_fixed_base<_AP_W2, _AP_I2, _AP_S2, _AP_Q2, _AP_O2, _AP_N2>& op);                    \
  NAME(bool val);                                                                                   \
  NAME(char val);                                                                                   \
  NAME(signed char val);                                                                            \
  NAME(unsigned char val);                                                                          \
  NAME(short val);                                                                                  \
  NAME(unsigned short val);                                                                         \
  NAME(int val);                                                                                    \
  NAME(unsigned int val);                                                                           \
  NAME(long val);                                                                                   \
  NAME(unsigned long val);                                                                          \
  NAME(ap_slong val);                                                                               \
  NAME(ap_ulong val);                                                                               \
  NAME(float val);                                                                                  \
  NAME(double val);                                                                                 \
  NAME(const char* s);                                                                              \
  NAME(const char* s, signed char radix);

// The integer conversions every ap type and range has.  Kept defined for ap_fixed.h.
#define _SD_TO_INTEGERS           \
  int to_int() const;             \
  unsigned to_uint() const;       \
  long to_long() const;           \
  unsigned long to_ulong() const; \
  ap_slong to_int64() const;      \
  ap_ulong to_uint64() const;     \
  int length() const;

template <int _AP_W, bool _AP_S> struct ap_int_base {
  static_assert(_AP_W >= 1 && _AP_W <= AP_INT_MAX_W, "ap_[u]int width must be in [1, AP_INT_MAX_W]");
  static const int width = _AP_W;
  typedef typename _ap_int_factory<_AP_W, _AP_S>::type Type;
  typedef typename _ap_int_factory<_AP_W, _AP_S>::type RetTypeAp;
  typedef typename _ap_int_factory<1, false>::type BitType;
  // The C type an ap value converts to (implicitly: it indexes arrays and drives conditions).
  typedef ap_slong RetType;

  // Result widths of the binary operators (UG1399): a product is W + W2 bits, a sum one bit wider than its
  // wider operand (one more when only one side is signed), and so on.
  template <int _AP_W2, bool _AP_S2> struct RType {
    enum {
      wide = (_AP_W + (_AP_S2 && !_AP_S)) > (_AP_W2 + (_AP_S && !_AP_S2)) ? (_AP_W + (_AP_S2 && !_AP_S))
                                                                          : (_AP_W2 + (_AP_S && !_AP_S2)),
      mult_w = _AP_W + _AP_W2,
      mult_s = _AP_S || _AP_S2,
      plus_w = wide + 1,
      plus_s = _AP_S || _AP_S2,
      minus_w = wide + 1,
      minus_s = true,
      div_w = _AP_W + _AP_S2,
      div_s = _AP_S || _AP_S2,
      mod_w = _AP_W < (_AP_W2 + (!_AP_S2 && _AP_S)) ? _AP_W : (_AP_W2 + (!_AP_S2 && _AP_S)),
      mod_s = _AP_S,
      logic_w = wide,
      logic_s = _AP_S || _AP_S2
    };
    typedef typename _ap_int_factory<mult_w, mult_s>::type mult;
    typedef typename _ap_int_factory<plus_w, plus_s>::type plus;
    typedef typename _ap_int_factory<minus_w, minus_s>::type minus;
    typedef typename _ap_int_factory<logic_w, logic_s>::type logic;
    typedef typename _ap_int_factory<div_w, div_s>::type div;
    typedef typename _ap_int_factory<mod_w, mod_s>::type mod;
    typedef ap_int_base<_AP_W, _AP_S> arg1;
  };

  ap_int_base();
  ap_int_base(const ap_int_base& op);
  _SD_CONVERTING_CTORS(ap_int_base)

  ap_int_base& operator=(const ap_int_base& op);
  template <int _AP_W2, bool _AP_S2> ap_int_base& operator=(const ap_int_base<_AP_W2, _AP_S2>& op);

  operator RetType() const;

  // Conversions and queries.
  _SD_TO_INTEGERS
  float to_float() const;
  double to_double() const;
  bool to_bool() const;
  bool iszero() const;
  bool is_zero() const;
  bool sign() const;

  // Bits and ranges.
  bool test(int index) const;
  bool get_bit(int index) const;
  void set(int index);
  void set(int index, bool val);
  void set_bit(int index, bool val);
  void clear(int index);
  void invert(int index);
  void reverse();
  void lrotate(int n);
  void rrotate(int n);
  ap_bit_ref<_AP_W, _AP_S> operator[](int index);
  bool operator[](int index) const;
  ap_bit_ref<_AP_W, _AP_S> bit(int index);
  bool bit(int index) const;
  ap_range_ref<_AP_W, _AP_S> range(int Hi, int Lo);
  ap_range_ref<_AP_W, _AP_S> range(int Hi, int Lo) const;
  ap_range_ref<_AP_W, _AP_S> range();
  ap_range_ref<_AP_W, _AP_S> range() const;
  ap_range_ref<_AP_W, _AP_S> operator()(int Hi, int Lo);
  ap_range_ref<_AP_W, _AP_S> operator()(int Hi, int Lo) const;
  ap_range_ref<_AP_W, _AP_S> get_range(int Hi, int Lo) const;
  bool and_reduce() const;
  bool nand_reduce() const;
  bool or_reduce() const;
  bool nor_reduce() const;
  bool xor_reduce() const;
  bool xnor_reduce() const;

  // Unary and compound operators.
  typename RType<1, false>::minus operator-() const;
  ap_int_base operator+() const;
  typename RType<1, false>::logic operator~() const;
  bool operator!() const;
  ap_int_base& operator++();
  ap_int_base& operator--();
  const ap_int_base operator++(int);
  const ap_int_base operator--(int);
#define SD_AP_COMPOUND(OP)                                                                              \
  template <int _AP_W2, bool _AP_S2> ap_int_base& operator OP(const ap_int_base<_AP_W2, _AP_S2>& op2); \
  template <typename C, int = _ap_c_int<C>::width> ap_int_base& operator OP(C op2);
  SD_AP_COMPOUND(+=)
  SD_AP_COMPOUND(-=)
  SD_AP_COMPOUND(*=)
  SD_AP_COMPOUND(/=)
  SD_AP_COMPOUND(%=)
  SD_AP_COMPOUND(&=)
  SD_AP_COMPOUND(|=)
  SD_AP_COMPOUND(^=)
#undef SD_AP_COMPOUND
  ap_int_base& operator<<=(int sh);
  ap_int_base& operator>>=(int sh);
  template <int _AP_W2, bool _AP_S2> ap_int_base& operator<<=(const ap_int_base<_AP_W2, _AP_S2>& sh);
  template <int _AP_W2, bool _AP_S2> ap_int_base& operator>>=(const ap_int_base<_AP_W2, _AP_S2>& sh);
};

// Operators between two ap values: their results are as wide as RType says.
#define SD_AP_BIN(OP, RT)                                                                                     \
  template <int _AP_W, bool _AP_S, int _AP_W2, bool _AP_S2>                                                   \
  typename ap_int_base<_AP_W, _AP_S>::template RType<_AP_W2, _AP_S2>::RT operator OP(                         \
      const ap_int_base<_AP_W, _AP_S>& op, const ap_int_base<_AP_W2, _AP_S2>& op2);                           \
  template <int _AP_W, bool _AP_S, typename C>                                                                \
  typename ap_int_base<_AP_W, _AP_S>::template RType<_ap_c_int<C>::width, _ap_c_int<C>::sign>::RT operator OP( \
      const ap_int_base<_AP_W, _AP_S>& op, C i_op);                                                           \
  template <int _AP_W, bool _AP_S, typename C>                                                                \
  typename ap_int_base<_ap_c_int<C>::width, _ap_c_int<C>::sign>::template RType<_AP_W, _AP_S>::RT operator OP( \
      C i_op, const ap_int_base<_AP_W, _AP_S>& op);
SD_AP_BIN(+, plus)
SD_AP_BIN(-, minus)
SD_AP_BIN(*, mult)
SD_AP_BIN(/, div)
SD_AP_BIN(%, mod)
SD_AP_BIN(&, logic)
SD_AP_BIN(|, logic)
SD_AP_BIN(^, logic)
#undef SD_AP_BIN

// Mixed with float or double, an ap value converts to the floating type.
#define SD_AP_FLT(OP)                                                                        \
  template <int _AP_W, bool _AP_S> float operator OP(const ap_int_base<_AP_W, _AP_S>& op, float f);  \
  template <int _AP_W, bool _AP_S> float operator OP(float f, const ap_int_base<_AP_W, _AP_S>& op);  \
  template <int _AP_W, bool _AP_S> double operator OP(const ap_int_base<_AP_W, _AP_S>& op, double f); \
  template <int _AP_W, bool _AP_S> double operator OP(double f, const ap_int_base<_AP_W, _AP_S>& op);
SD_AP_FLT(+)
SD_AP_FLT(-)
SD_AP_FLT(*)
SD_AP_FLT(/)
#undef SD_AP_FLT

// Shifts keep the left operand's type.
template <int _AP_W, bool _AP_S> ap_int_base<_AP_W, _AP_S> operator<<(const ap_int_base<_AP_W, _AP_S>& op, int sh);
template <int _AP_W, bool _AP_S> ap_int_base<_AP_W, _AP_S> operator>>(const ap_int_base<_AP_W, _AP_S>& op, int sh);
template <int _AP_W, bool _AP_S, int _AP_W2, bool _AP_S2>
ap_int_base<_AP_W, _AP_S> operator<<(const ap_int_base<_AP_W, _AP_S>& op, const ap_int_base<_AP_W2, _AP_S2>& sh);
template <int _AP_W, bool _AP_S, int _AP_W2, bool _AP_S2>
ap_int_base<_AP_W, _AP_S> operator>>(const ap_int_base<_AP_W, _AP_S>& op, const ap_int_base<_AP_W2, _AP_S2>& sh);

// Comparisons, exact across widths and signedness.
#define SD_AP_REL(OP)                                                                                           \
  template <int _AP_W, bool _AP_S, int _AP_W2, bool _AP_S2>                                                     \
  bool operator OP(const ap_int_base<_AP_W, _AP_S>& op, const ap_int_base<_AP_W2, _AP_S2>& op2);                \
  template <int _AP_W, bool _AP_S, typename C, int = _ap_c_int<C>::width>                                       \
  bool operator OP(const ap_int_base<_AP_W, _AP_S>& op, C i_op);                                                \
  template <int _AP_W, bool _AP_S, typename C, int = _ap_c_int<C>::width>                                       \
  bool operator OP(C i_op, const ap_int_base<_AP_W, _AP_S>& op);                                                \
  template <int _AP_W, bool _AP_S> bool operator OP(const ap_int_base<_AP_W, _AP_S>& op, double f);             \
  template <int _AP_W, bool _AP_S> bool operator OP(double f, const ap_int_base<_AP_W, _AP_S>& op);
SD_AP_REL(==)
SD_AP_REL(!=)
SD_AP_REL(<)
SD_AP_REL(<=)
SD_AP_REL(>)
SD_AP_REL(>=)
#undef SD_AP_REL

// A range x.range(Hi, Lo) (or x(Hi, Lo)): read as an unsigned value, assigned to write those bits.
template <int _AP_W, bool _AP_S> struct ap_range_ref {
  ap_range_ref(const ap_range_ref& ref);
  ap_range_ref(ap_int_base<_AP_W, _AP_S>* bv, int h, int l);
  ap_range_ref& operator=(const ap_range_ref& val);
  ap_range_ref& operator=(ap_ulong val);
  ap_range_ref& operator=(ap_slong val);
  ap_range_ref& operator=(int val);
  ap_range_ref& operator=(unsigned int val);
  template <int _AP_W2, bool _AP_S2> ap_range_ref& operator=(const ap_int_base<_AP_W2, _AP_S2>& val);
  template <int _AP_W2, bool _AP_S2> ap_range_ref& operator=(const ap_range_ref<_AP_W2, _AP_S2>& val);
  template <int _AP_W2, int _AP_I2, bool _AP_S2, ap_q_mode _AP_Q2, ap_o_mode _AP_O2, int _AP_N2>
  ap_range_ref& operator=(const ap_fixed_base<_AP_W2, _AP_I2, _AP_S2, _AP_Q2, _AP_O2, _AP_N2>& val);
  operator ap_int_base<_AP_W, false>() const;
  operator ap_ulong() const;
  _SD_TO_INTEGERS
  bool and_reduce() const;
  bool or_reduce() const;
  bool xor_reduce() const;
};

// One bit x[i]: reads as bool, assigned to write it.
template <int _AP_W, bool _AP_S> struct ap_bit_ref {
  ap_bit_ref(const ap_bit_ref& ref);
  ap_bit_ref(ap_int_base<_AP_W, _AP_S>* bv, int index);
  ap_bit_ref& operator=(const ap_bit_ref& val);
  ap_bit_ref& operator=(bool val);
  ap_bit_ref& operator=(int val);
  ap_bit_ref& operator=(unsigned int val);
  ap_bit_ref& operator=(ap_ulong val);
  operator bool() const;
  bool to_bool() const;
  int to_int() const;
  bool operator~() const;
  bool get() const;
  int length() const;
};

// The public types: signed and unsigned integers of _AP_W bits.
#define SD_AP_CTORS(NAME)                                                                           \
  NAME();                                                                                           \
  _SD_CONVERTING_CTORS(NAME)                                                                        \
  NAME& operator=(const NAME& op2);                                                                 \
  template <int _AP_W2, bool _AP_S2> NAME& operator=(const ap_int_base<_AP_W2, _AP_S2>& op2);

template <int _AP_W> struct ap_int : ap_int_base<_AP_W, true> {
  SD_AP_CTORS(ap_int)
};

template <int _AP_W> struct ap_uint : ap_int_base<_AP_W, false> {
  SD_AP_CTORS(ap_uint)
};
#undef SD_AP_CTORS
