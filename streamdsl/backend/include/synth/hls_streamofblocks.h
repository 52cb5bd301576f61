// synth/hls_streamofblocks.h: the declarations of Vitis HLS's hls_streamofblocks.h that streamdsl's emitted code
// may use, in C++14, from UG1399 ("Specifying Arrays as Stream-of-Blocks"; no vendor code; declarations only, for
// the -D__SYNTHESIS__ syntax check described in synth/ap_int.h and include/README.md).  A stream of blocks carries
// blocks of an array type between one producer and one consumer process of a dataflow region (a PIPO of DEPTH
// memories, the default 2); a process takes a block with hls::write_lock / hls::read_lock, uses the lock as the
// array, and gives the block back when the lock goes out of scope.  stream_of_blocks<B, DEPTH> derives from
// stream_of_blocks<B>, so a channel declared with its depth binds to a process's stream_of_blocks<B>& parameter.
#pragma once
#ifndef __SYNTHESIS__
#error "include/synth declares the vendor's API for a -D__SYNTHESIS__ syntax check only; C-simulate with include/csim"
#endif

namespace hls {

template <typename __STREAM_T__, int DEPTH = 2> class stream_of_blocks;

template <typename __STREAM_T__> class read_lock {
 public:
  read_lock(stream_of_blocks<__STREAM_T__>& s);
  ~read_lock();
  operator __STREAM_T__&();
  __STREAM_T__& operator=(const __STREAM_T__& val);
};

template <typename __STREAM_T__> class write_lock {
 public:
  write_lock(stream_of_blocks<__STREAM_T__>& s);
  ~write_lock();
  operator __STREAM_T__&();
  __STREAM_T__& operator=(const __STREAM_T__& val);
};

template <typename __STREAM_T__> class stream_of_blocks<__STREAM_T__, 2> {
 public:
  stream_of_blocks(int depth = 2, char* name = 0);
  stream_of_blocks(const stream_of_blocks&) = delete;  // a channel: passed by reference, never copied
  stream_of_blocks& operator=(const stream_of_blocks&) = delete;
  bool full();
  bool empty();
};

template <typename __STREAM_T__, int DEPTH> class stream_of_blocks : public stream_of_blocks<__STREAM_T__, 2> {
 public:
  stream_of_blocks();
};

}  // namespace hls
