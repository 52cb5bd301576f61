// hls_streamofblocks.h -- vendor-free C-simulation model of hls::stream_of_blocks, written for streamdsl (no
// vendor code), from UG1399 ("Specifying Arrays as Stream-of-Blocks").
//
// hls::stream_of_blocks<B, DEPTH> is a channel of DEPTH blocks of type B (an array type, e.g.
// `typedef float blk_t[8][32];`) between one producer and one consumer process of a dataflow region: the
// ping-pong buffer (PIPO) of DEPTH memories.  DEPTH (default 2) counts every block, the one the producer holds
// and the one the consumer holds included.  A process takes a block with a lock object and gives it back when
// the lock goes out of scope:
//
//     { hls::write_lock<blk_t> b(s); b[i][j] = ...; }   // the producer fills the next free block
//     { hls::read_lock<blk_t> b(s); ... = b[i][j]; }    // the consumer reads the oldest filled block
//
// A write_lock waits while all DEPTH blocks are taken (filled and not yet released by the consumer, or held);
// a read_lock waits while no filled block is waiting.  The waits take part in hls_stream.h's exact deadlock
// detection (hls::sim::run_dataflow): a process blocked on a lock counts as blocked like one on a stream read
// or write, and the report names the channel, e.g.
//     streamdsl csim: deadlock: 'cvt.buffer' blocked on write_lock (all 2 blocks taken), 'b' blocked on ...
// Outside a dataflow a lock that can never be granted stops the program (exit status 3) instead of hanging.
// A process that takes a second lock of the same kind before releasing the first is an error (UG1399 forbids
// nested locks).
//
// The vendor's constructor takes no name; set_name() (a streamdsl extension, like hls::stream's set_depth)
// names the channel in reports.
#ifndef STREAMDSL_HLS_STREAMOFBLOCKS_H
#define STREAMDSL_HLS_STREAMOFBLOCKS_H
#ifdef __SYNTHESIS__
#error "include/csim holds streamdsl's C-simulation headers (C++17, threads); keep it off the synthesis include path, where Vitis's own headers belong"
#endif

#include <cstddef>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "hls_stream.h"

namespace hls {

template <typename B, int DEPTH = 2>
class stream_of_blocks;
namespace sim {
namespace detail {
template <typename B, bool READING>
class block_lock;
}  // namespace detail
}  // namespace sim

// As in Vitis, stream_of_blocks<B, DEPTH> derives from stream_of_blocks<B> (DEPTH 2, the depth a runtime
// value), so a process taking stream_of_blocks<B>& accepts a channel declared with another depth.
template <typename B>
class stream_of_blocks<B, 2> : public sim::detail::StreamBase {
  static_assert(std::is_array<B>::value, "a stream of blocks carries an array type (UG1399)");

 public:
  explicit stream_of_blocks(int depth = 2) : StreamBase(nullptr, depth > 0 ? depth : 2), slots_(depth_) {}
  stream_of_blocks(const stream_of_blocks&) = delete;
  stream_of_blocks& operator=(const stream_of_blocks&) = delete;

  // streamdsl extension: the name reports give the channel.
  void set_name(const char* name) {
    std::unique_lock<std::mutex> lk(sim::detail::registry().mu);
    name_ = name;
  }
  // Would a read_lock wait (no filled block)?  Would a write_lock wait (every block taken)?
  bool empty() { std::unique_lock<std::mutex> lk(sim::detail::registry().mu); return filled_ == 0; }
  bool full() { std::unique_lock<std::mutex> lk(sim::detail::registry().mu); return taken() >= depth_; }

  std::string blocked_on(bool reading) const override {
    return reading ? "read_lock (no block filled)"
                   : "write_lock (all " + std::to_string(depth_) + " blocks taken)";
  }
  std::string never_satisfied(bool reading) const override {
    return "stream of blocks '" + name_ + "': " +
           (reading ? std::string("read_lock with no block filled")
                    : "write_lock with all " + std::to_string(depth_) + " blocks taken") +
           ", outside a dataflow region";
  }

 private:
  template <typename, bool>
  friend class sim::detail::block_lock;
  struct Slot {
    B v;
  };

  // Blocks not free: filled and waiting, and the ones the producer and the consumer hold.
  std::size_t taken() const { return filled_ + writing_ + reading_; }

  B& take(bool reading) {
    std::unique_lock<std::mutex> lk(sim::detail::registry().mu);
    if (reading ? reading_ : writing_)
      sim::detail::fail(lk, std::string(reading ? "read_lock" : "write_lock") + " of stream of blocks '" + name_ +
                                "' taken again before the first was released (UG1399: no nested locks)");
    if (reading) {
      wait_until(lk, true, [this] { return filled_ > 0; });
      --filled_;
      reading_ = true;
      return slots_[read_at_].v;
    }
    wait_until(lk, false, [this] { return taken() < depth_; });
    writing_ = true;
    return slots_[write_at_].v;
  }
  void give_back(bool reading) {
    std::unique_lock<std::mutex> lk(sim::detail::registry().mu);
    if (reading) {
      reading_ = false;
      read_at_ = (read_at_ + 1) % depth_;
      StreamBase::release(false);  // a block is free: wake a waiting producer
    } else {
      writing_ = false;
      write_at_ = (write_at_ + 1) % depth_;
      ++filled_;
      StreamBase::release(true);  // a block is filled: wake a waiting consumer
    }
  }

  // The blocks are used in turn (a ring): the producer fills write_at_, the consumer reads read_at_.
  std::vector<Slot> slots_;
  std::size_t write_at_ = 0, read_at_ = 0, filled_ = 0;
  bool writing_ = false, reading_ = false;
};

template <typename B, int DEPTH>
class stream_of_blocks : public stream_of_blocks<B, 2> {
  static_assert(DEPTH > 0, "a stream of blocks holds at least one block");

 public:
  stream_of_blocks() : stream_of_blocks<B, 2>(DEPTH) {}
};

namespace sim {
namespace detail {
// A lock: a block of the channel for as long as the lock lives, used as the array it is (b[i][j]).
template <typename B, bool READING>
class block_lock {
 public:
  explicit block_lock(stream_of_blocks<B>& s) : s_(s), b_(s.take(READING)) {}
  ~block_lock() { s_.give_back(READING); }
  block_lock(const block_lock&) = delete;
  block_lock& operator=(const block_lock&) = delete;
  operator B&() { return b_; }

 private:
  stream_of_blocks<B>& s_;
  B& b_;
};
}  // namespace detail
}  // namespace sim

// The consumer's lock (the oldest filled block) and the producer's (the next free one).
template <typename B>
class read_lock : public sim::detail::block_lock<B, true> {
 public:
  using sim::detail::block_lock<B, true>::block_lock;
};
template <typename B>
class write_lock : public sim::detail::block_lock<B, false> {
 public:
  using sim::detail::block_lock<B, false>::block_lock;
};

}  // namespace hls

#endif  // STREAMDSL_HLS_STREAMOFBLOCKS_H
