// synth/hls_stream.h: the declarations of Vitis HLS's hls_stream.h that streamdsl's emitted code may use, in
// C++14, from UG1399 ("HLS Stream Library"; no vendor code; declarations only, for the -D__SYNTHESIS__ syntax
// check described in synth/ap_int.h and include/README.md).  hls::stream<T, DEPTH> derives from
// hls::stream<T>, so a stream declared with its depth binds to a process's hls::stream<T>& parameter.
#pragma once
#ifndef __SYNTHESIS__
#error "include/synth declares the vendor's API for a -D__SYNTHESIS__ syntax check only; C-simulate with include/csim"
#endif

namespace hls {

template <typename __STREAM_T__, int DEPTH = 0> class stream;

template <typename __STREAM_T__> class stream<__STREAM_T__, 0> {
 public:
  stream();
  stream(const char* name);
  stream(const stream&) = delete;  // a stream is a FIFO: passed by reference, never copied
  stream& operator=(const stream&) = delete;

  void operator>>(__STREAM_T__& rdata);
  void operator<<(const __STREAM_T__& wdata);
  bool empty() const;
  bool full() const;
  void read(__STREAM_T__& dout);
  __STREAM_T__ read();
  bool read_nb(__STREAM_T__& dout);
  void write(const __STREAM_T__& din);
  bool write_nb(const __STREAM_T__& din);
  unsigned size() const;
  unsigned capacity() const;
};

template <typename __STREAM_T__, int DEPTH> class stream : public stream<__STREAM_T__, 0> {
 public:
  stream();
  stream(const char* name);
};

}  // namespace hls
