// synth/ap_fixed.h: the declarations of Vitis HLS's ap_fixed.h that streamdsl's emitted code may use, in
// C++14, from UG1399 (no vendor code; declarations only, for the -D__SYNTHESIS__ syntax check described in
// synth/ap_int.h and include/README.md).  As in the vendor's library, fixed-point arithmetic is defined
// with fixed-point, ap_[u]int and C integer operands, and not with float or double (those only compare).
#pragma once
#include "ap_int.h"

template <int _AP_W, int _AP_I, bool _AP_S> struct _ap_fixed_factory { typedef ap_fixed<_AP_W, _AP_I> type; };
template <int _AP_W, int _AP_I> struct _ap_fixed_factory<_AP_W, _AP_I, false> { typedef ap_ufixed<_AP_W, _AP_I> type; };

template <int _AP_W, int _AP_I, bool _AP_S, ap_q_mode _AP_Q, ap_o_mode _AP_O, int _AP_N> struct ap_fixed_base {
  static_assert(_AP_W >= 1 && _AP_W <= AP_INT_MAX_W, "ap_[u]fixed width must be in [1, AP_INT_MAX_W]");
  static const int width = _AP_W;
  static const int iwidth = _AP_I;
  static const ap_q_mode qmode = _AP_Q;
  static const ap_o_mode omode = _AP_O;

  // Result formats of the binary operators (UG1399).
  template <int _AP_W2, int _AP_I2, bool _AP_S2> struct RType {
    enum {
      _AP_F = _AP_W - _AP_I,
      F2 = _AP_W2 - _AP_I2,
      F = _AP_F > F2 ? _AP_F : F2,
      I = (_AP_I + (_AP_S2 && !_AP_S)) > (_AP_I2 + (_AP_S && !_AP_S2)) ? (_AP_I + (_AP_S2 && !_AP_S))
                                                                      : (_AP_I2 + (_AP_S && !_AP_S2)),
      mult_w = _AP_W + _AP_W2,
      mult_i = _AP_I + _AP_I2,
      mult_s = _AP_S || _AP_S2,
      plus_w = I + 1 + F,
      plus_i = I + 1,
      plus_s = _AP_S || _AP_S2,
      minus_w = I + 1 + F,
      minus_i = I + 1,
      minus_s = true,
      div_w = _AP_S2 + _AP_W + (F2 > 0 ? F2 : 0),
      div_i = _AP_S2 + _AP_I + F2,
      div_s = _AP_S || _AP_S2,
      logic_w = I + F,
      logic_i = I,
      logic_s = _AP_S || _AP_S2
    };
    typedef typename _ap_fixed_factory<mult_w, mult_i, mult_s>::type mult;
    typedef typename _ap_fixed_factory<plus_w, plus_i, plus_s>::type plus;
    typedef typename _ap_fixed_factory<minus_w, minus_i, minus_s>::type minus;
    typedef typename _ap_fixed_factory<logic_w, logic_i, logic_s>::type logic;
    typedef typename _ap_fixed_factory<div_w, div_i, div_s>::type div;
    typedef ap_fixed_base<_AP_W, _AP_I, _AP_S> lhs;
  };

  ap_fixed_base();
  _SD_CONVERTING_CTORS(ap_fixed_base)

  ap_fixed_base& operator=(const ap_fixed_base& op);
  template <int _AP_W2, int _AP_I2, bool _AP_S2, ap_q_mode _AP_Q2, ap_o_mode _AP_O2, int _AP_N2>
  ap_fixed_base& operator=(const ap_fixed_base<_AP_W2, _AP_I2, _AP_S2, _AP_Q2, _AP_O2, _AP_N2>& op);

  // Conversions: explicit by name, and implicit to every C arithmetic type (so a fixed value mixed with a
  // double in arithmetic is ambiguous, as with the vendor's type).
  ap_int_base<(_AP_I > 1 ? _AP_I : 1), _AP_S> to_ap_int_base(bool Cnative = true) const;
  double to_double() const;
  float to_float() const;
  _SD_TO_INTEGERS
  operator long double() const;
  operator double() const;
  operator float() const;
  operator bool() const;
  operator char() const;
  operator signed char() const;
  operator unsigned char() const;
  operator short() const;
  operator unsigned short() const;
  operator int() const;
  operator unsigned int() const;
  operator long() const;
  operator unsigned long() const;
  operator ap_ulong() const;
  operator ap_slong() const;

  // Arithmetic with fixed-point operands.
#define SD_AF_BIN(OP, RT)                                                                     \
  template <int _AP_W2, int _AP_I2, bool _AP_S2, ap_q_mode _AP_Q2, ap_o_mode _AP_O2, int _AP_N2> \
  typename RType<_AP_W2, _AP_I2, _AP_S2>::RT operator OP(                                     \
      const ap_fixed_base<_AP_W2, _AP_I2, _AP_S2, _AP_Q2, _AP_O2, _AP_N2>& op2) const;
  SD_AF_BIN(*, mult)
  SD_AF_BIN(/, div)
  SD_AF_BIN(+, plus)
  SD_AF_BIN(-, minus)
  SD_AF_BIN(&, logic)
  SD_AF_BIN(|, logic)
  SD_AF_BIN(^, logic)
#undef SD_AF_BIN
#define SD_AF_ASSIGN(OP)                                                                      \
  template <int _AP_W2, int _AP_I2, bool _AP_S2, ap_q_mode _AP_Q2, ap_o_mode _AP_O2, int _AP_N2> \
  ap_fixed_base& operator OP(const ap_fixed_base<_AP_W2, _AP_I2, _AP_S2, _AP_Q2, _AP_O2, _AP_N2>& op2);
  SD_AF_ASSIGN(*=)
  SD_AF_ASSIGN(/=)
  SD_AF_ASSIGN(+=)
  SD_AF_ASSIGN(-=)
  SD_AF_ASSIGN(&=)
  SD_AF_ASSIGN(|=)
  SD_AF_ASSIGN(^=)
#undef SD_AF_ASSIGN
  ap_fixed_base& operator++();
  ap_fixed_base& operator--();
  const ap_fixed_base operator++(int);
  const ap_fixed_base operator--(int);
  ap_fixed_base operator+();
  ap_fixed_base<_AP_W + 1, _AP_I + 1, true> operator-() const;
  bool operator!() const;
  ap_fixed_base<_AP_W, _AP_I, _AP_S> operator~() const;
  ap_fixed_base operator<<(unsigned int sh) const;
  ap_fixed_base operator>>(unsigned int sh) const;
  ap_fixed_base operator<<(int sh) const;
  ap_fixed_base operator>>(int sh) const;
  ap_fixed_base& operator<<=(int sh);
  ap_fixed_base& operator>>=(int sh);

  // Comparisons with fixed-point values and with double.
#define SD_AF_REL(OP)                                                                         \
  template <int _AP_W2, int _AP_I2, bool _AP_S2, ap_q_mode _AP_Q2, ap_o_mode _AP_O2, int _AP_N2> \
  bool operator OP(const ap_fixed_base<_AP_W2, _AP_I2, _AP_S2, _AP_Q2, _AP_O2, _AP_N2>& op2) const; \
  bool operator OP(double d) const;
  SD_AF_REL(==)
  SD_AF_REL(!=)
  SD_AF_REL(>)
  SD_AF_REL(>=)
  SD_AF_REL(<)
  SD_AF_REL(<=)
#undef SD_AF_REL

  // Bits.
  ap_bit_ref<_AP_W, _AP_S> operator[](int index);
  bool operator[](int index) const;
  bool get_bit(int index) const;
  ap_range_ref<_AP_W, _AP_S> range(int Hi, int Lo);
  ap_range_ref<_AP_W, _AP_S> range(int Hi, int Lo) const;
  ap_range_ref<_AP_W, _AP_S> range();
  ap_range_ref<_AP_W, _AP_S> range() const;
  ap_range_ref<_AP_W, _AP_S> operator()(int Hi, int Lo);
  ap_range_ref<_AP_W, _AP_S> operator()(int Hi, int Lo) const;
};

// With C integers and ap_[u]int values: as a fixed-point value of their width with no fraction.
#define SD_AF_INT_BIN(OP, RT)                                                                                  \
  template <int _AP_W, int _AP_I, bool _AP_S, ap_q_mode _AP_Q, ap_o_mode _AP_O, int _AP_N, typename C>        \
  typename ap_fixed_base<_AP_W, _AP_I, _AP_S>::template RType<_ap_c_int<C>::width, _ap_c_int<C>::width,        \
                                                             _ap_c_int<C>::sign>::RT                           \
  operator OP(const ap_fixed_base<_AP_W, _AP_I, _AP_S, _AP_Q, _AP_O, _AP_N>& op, C i_op);                      \
  template <int _AP_W, int _AP_I, bool _AP_S, ap_q_mode _AP_Q, ap_o_mode _AP_O, int _AP_N, typename C>        \
  typename ap_fixed_base<_ap_c_int<C>::width, _ap_c_int<C>::width, _ap_c_int<C>::sign>::template RType<       \
      _AP_W, _AP_I, _AP_S>::RT                                                                                 \
  operator OP(C i_op, const ap_fixed_base<_AP_W, _AP_I, _AP_S, _AP_Q, _AP_O, _AP_N>& op);                      \
  template <int _AP_W, int _AP_I, bool _AP_S, ap_q_mode _AP_Q, ap_o_mode _AP_O, int _AP_N, int _AP_W2,        \
            bool _AP_S2>                                                                                       \
  typename ap_fixed_base<_AP_W, _AP_I, _AP_S>::template RType<_AP_W2, _AP_W2, _AP_S2>::RT operator OP(        \
      const ap_fixed_base<_AP_W, _AP_I, _AP_S, _AP_Q, _AP_O, _AP_N>& op, const ap_int_base<_AP_W2, _AP_S2>& i_op); \
  template <int _AP_W, int _AP_I, bool _AP_S, ap_q_mode _AP_Q, ap_o_mode _AP_O, int _AP_N, int _AP_W2,        \
            bool _AP_S2>                                                                                       \
  typename ap_fixed_base<_AP_W2, _AP_W2, _AP_S2>::template RType<_AP_W, _AP_I, _AP_S>::RT operator OP(        \
      const ap_int_base<_AP_W2, _AP_S2>& i_op, const ap_fixed_base<_AP_W, _AP_I, _AP_S, _AP_Q, _AP_O, _AP_N>& op);
SD_AF_INT_BIN(+, plus)
SD_AF_INT_BIN(-, minus)
SD_AF_INT_BIN(*, mult)
SD_AF_INT_BIN(/, div)
SD_AF_INT_BIN(&, logic)
SD_AF_INT_BIN(|, logic)
SD_AF_INT_BIN(^, logic)
#undef SD_AF_INT_BIN

#define SD_AF_INT_REL(OP)                                                                                      \
  template <int _AP_W, int _AP_I, bool _AP_S, ap_q_mode _AP_Q, ap_o_mode _AP_O, int _AP_N, typename C,        \
            int = _ap_c_int<C>::width>                                                                         \
  bool operator OP(const ap_fixed_base<_AP_W, _AP_I, _AP_S, _AP_Q, _AP_O, _AP_N>& op, C i_op);                 \
  template <int _AP_W, int _AP_I, bool _AP_S, ap_q_mode _AP_Q, ap_o_mode _AP_O, int _AP_N, typename C,        \
            int = _ap_c_int<C>::width>                                                                         \
  bool operator OP(C i_op, const ap_fixed_base<_AP_W, _AP_I, _AP_S, _AP_Q, _AP_O, _AP_N>& op);                 \
  template <int _AP_W, int _AP_I, bool _AP_S, ap_q_mode _AP_Q, ap_o_mode _AP_O, int _AP_N>                    \
  bool operator OP(double d, const ap_fixed_base<_AP_W, _AP_I, _AP_S, _AP_Q, _AP_O, _AP_N>& op);               \
  template <int _AP_W, int _AP_I, bool _AP_S, ap_q_mode _AP_Q, ap_o_mode _AP_O, int _AP_N, int _AP_W2,        \
            bool _AP_S2>                                                                                       \
  bool operator OP(const ap_fixed_base<_AP_W, _AP_I, _AP_S, _AP_Q, _AP_O, _AP_N>& op,                          \
                   const ap_int_base<_AP_W2, _AP_S2>& i_op);                                                   \
  template <int _AP_W, int _AP_I, bool _AP_S, ap_q_mode _AP_Q, ap_o_mode _AP_O, int _AP_N, int _AP_W2,        \
            bool _AP_S2>                                                                                       \
  bool operator OP(const ap_int_base<_AP_W2, _AP_S2>& i_op,                                                    \
                   const ap_fixed_base<_AP_W, _AP_I, _AP_S, _AP_Q, _AP_O, _AP_N>& op);
SD_AF_INT_REL(==)
SD_AF_INT_REL(!=)
SD_AF_INT_REL(>)
SD_AF_INT_REL(>=)
SD_AF_INT_REL(<)
SD_AF_INT_REL(<=)
#undef SD_AF_INT_REL

// The public types: signed and unsigned fixed point, _AP_W bits of which _AP_I are integer bits.
#define SD_AF_CTORS(NAME)                                                                                      \
  NAME();                                                                                                      \
  _SD_CONVERTING_CTORS(NAME)                                                                                   \
  NAME& operator=(const NAME& op);                                                                             \
  template <int _AP_W2, int _AP_I2, bool _AP_S2, ap_q_mode _AP_Q2, ap_o_mode _AP_O2, int _AP_N2>               \
  NAME& operator=(const ap_fixed_base<_AP_W2, _AP_I2, _AP_S2, _AP_Q2, _AP_O2, _AP_N2>& op);

template <int _AP_W, int _AP_I, ap_q_mode _AP_Q, ap_o_mode _AP_O, int _AP_N>
struct ap_fixed : ap_fixed_base<_AP_W, _AP_I, true, _AP_Q, _AP_O, _AP_N> {
  SD_AF_CTORS(ap_fixed)
};

template <int _AP_W, int _AP_I, ap_q_mode _AP_Q, ap_o_mode _AP_O, int _AP_N>
struct ap_ufixed : ap_fixed_base<_AP_W, _AP_I, false, _AP_Q, _AP_O, _AP_N> {
  SD_AF_CTORS(ap_ufixed)
};
#undef SD_AF_CTORS
