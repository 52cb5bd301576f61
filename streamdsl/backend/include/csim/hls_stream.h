// hls_stream.h -- vendor-free C-simulation model of hls::stream, written for
// streamdsl (no vendor code).
//
// hls::stream<T> is a thread-safe FIFO.  It is unbounded by default (like
// vendor csim); set_depth(n) -- a streamdsl extension -- or the second template
// argument (hls::stream<T, n>) bounds it, so a write to a full stream blocks
// the way the hardware FIFO would.
//
// Dataflow processes run on their own threads via hls::sim::run_dataflow().
// All stream state sits under one global mutex, together with two counters:
// process threads that are running, and process threads that are blocked on a
// stream.  A thread that blocks, or finishes, re-checks "every running process
// is blocked" under that mutex, so deadlock is detected exactly (no timeouts):
// it prints
//     streamdsl csim: deadlock: 'a' blocked on read (empty), 'b' ...
// to stderr and exits with status 3.  A waker un-counts the threads it wakes
// before releasing the mutex, so a thread that is about to run never counts
// as blocked.  Outside any dataflow (plain single-threaded code) a blocking
// read of an empty stream can never be satisfied: it reports
//     streamdsl csim: read from empty stream '<name>'
// and exits with status 3 instead of hanging (likewise a write to a full
// bounded stream).
//
// Threads that touch streams must be processes started by run_dataflow (or the
// thread that called it, while no process runs); a stream shared with an
// unregistered thread could be reported as deadlocked too early.
#ifndef STREAMDSL_HLS_STREAM_H
#define STREAMDSL_HLS_STREAM_H
#ifdef __SYNTHESIS__
#error "include/csim holds streamdsl's C-simulation headers (C++17, threads); keep it off the synthesis include path, where Vitis's own headers belong"
#endif
// Generated dataflow regions run their processes on threads (hls::sim::run_dataflow) when this header
// is the one included; with Vitis's hls_stream.h they call them in order, as vendor C-simulation does.
#define STREAMDSL_THREADED_DATAFLOW 1

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <exception>
#include <functional>
#include <initializer_list>
#include <iostream>
#include <memory>
#include <mutex>
#include <string>
#include <pthread.h>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

namespace hls {
namespace sim {
namespace detail {

class StreamBase;

// Global state.  Leaked on purpose: std::exit() from the deadlock reporter
// must not run destructors of a mutex that other (forever blocked) threads
// are still waiting with.
struct Registry {
  std::mutex mu;
  int running = 0;             // process threads alive and not parked in run_dataflow
  int blocked = 0;             // of those, blocked on a stream
  int external_blocked = 0;    // non-process threads blocked while processes ran
  std::vector<StreamBase*> blocked_streams;
  std::string process_error;   // what() of the first exception a process threw
};
inline Registry& registry() {
  static Registry* r = new Registry;
  return *r;
}
inline thread_local bool in_process = false;  // is this thread a dataflow process?

[[noreturn]] inline void fail(std::unique_lock<std::mutex>& lk, const std::string& msg) {
  lk.unlock();  // streams destroyed during exit must not find the mutex held
  std::cout.flush();
  std::cerr << "streamdsl csim: " << msg << std::endl;
  std::exit(3);
}

// Waiters of one direction (readers of an empty stream or writers of a full
// one), with a generation number bumped whenever a waker releases them.
struct Waiters {
  int proc = 0, ext = 0;
  unsigned long gen = 0;
  int count() const { return proc + ext; }
};

class StreamBase {
 public:
  StreamBase(const char* name, std::size_t depth) : depth_(depth) {
    static std::atomic<int> counter{0};
    name_ = name ? std::string(name) : "hls::stream#" + std::to_string(counter++);
  }
  // A condition variable with waiters must not be destroyed (glibc would
  // wait for them forever); that only happens when std::exit() runs static
  // destructors after a reported error, and then we simply leak it.
  virtual ~StreamBase() {
    std::unique_lock<std::mutex> lk(registry().mu);
    bool waited_on = readers_.count() + writers_.count() != 0;
    auto& v = registry().blocked_streams;
    v.erase(std::remove(v.begin(), v.end(), this), v.end());
    if (!waited_on) delete cv_;
  }
  StreamBase(const StreamBase&) = delete;
  StreamBase& operator=(const StreamBase&) = delete;
  const std::string& name_str() const { return name_; }
  std::string describe_blocked() const {
    std::string s;
    if (readers_.count()) s += "'" + name_ + "' blocked on " + blocked_on(true);
    if (writers_.count()) s += std::string(s.empty() ? "" : ", ") + "'" + name_ + "' blocked on " + blocked_on(false);
    return s;
  }
  // A channel other than a FIFO (hls::stream_of_blocks, hls_streamofblocks.h) words its waits its own way.
  virtual std::string blocked_on(bool reading) const { return reading ? "read (empty)" : "write (full)"; }
  virtual std::string never_satisfied(bool reading) const {
    return reading ? "read from empty stream '" + name_ + "'"
                   : "write to full stream '" + name_ + "' (depth " + std::to_string(depth_) + ")";
  }

 protected:
  // Block (lk held) until ready() holds.  Counts this thread as blocked and
  // runs the deadlock check; a waker un-counts it (see release()).
  template <class Ready>
  void wait_until(std::unique_lock<std::mutex>& lk, bool reading, Ready ready) {
    Registry& r = registry();
    Waiters& w = reading ? readers_ : writers_;
    bool counted = false;
    unsigned long gen = 0;
    while (!ready()) {
      if (!counted) {
        if (!in_process && r.running == 0) fail(lk, never_satisfied(reading));
        if (readers_.count() + writers_.count() == 0) r.blocked_streams.push_back(this);
        if (in_process) { ++w.proc; ++r.blocked; }
        else { ++w.ext; ++r.external_blocked; }
        counted = true;
        gen = w.gen;
        check_deadlock(lk);
      }
      cv_->wait(lk);
      if (w.gen != gen) counted = false;  // a waker already un-counted us
    }
    if (counted) {  // not expected (wakers always release), but keep counts exact
      if (in_process) { --w.proc; --r.blocked; }
      else { --w.ext; --r.external_blocked; }
      drop_if_unblocked();
    }
  }
  // Data arrived (reading) or space freed (!reading): release all waiters of
  // that direction.  They re-check and re-block if they lose a race.
  void release(bool reading) {
    Registry& r = registry();
    Waiters& w = reading ? readers_ : writers_;
    if (w.count() == 0) return;
    r.blocked -= w.proc;
    r.external_blocked -= w.ext;
    w.proc = w.ext = 0;
    ++w.gen;
    drop_if_unblocked();
    cv_->notify_all();
  }
  void drop_if_unblocked() {
    if (readers_.count() + writers_.count() != 0) return;
    auto& v = registry().blocked_streams;
    v.erase(std::remove(v.begin(), v.end(), this), v.end());
  }

 public:
  // Deadlock: every running process is blocked; or no process runs any more
  // and a non-process thread still waits.  Called with the mutex held.
  static void check_deadlock(std::unique_lock<std::mutex>& lk) {
    Registry& r = registry();
    bool all_blocked = r.running > 0 && r.blocked >= r.running;
    bool orphaned = r.running == 0 && r.external_blocked > 0;
    if (!all_blocked && !orphaned) return;
    std::string msg = "deadlock: ";
    for (std::size_t i = 0; i < r.blocked_streams.size(); ++i)
      msg += (i ? ", " : "") + r.blocked_streams[i]->describe_blocked();
    if (!r.process_error.empty()) msg += " (after a process threw: " + r.process_error + ")";
    fail(lk, msg);
  }

 protected:
  std::string name_;
  std::size_t depth_;  // 0 = unbounded
  Waiters readers_, writers_;
  // One per stream, so a transfer wakes only this stream's waiters.  (A
  // stream is never both empty and full, so readers and writers never wait
  // at the same time.)
  std::condition_variable* cv_ = new std::condition_variable;
};

// One run_dataflow call: its processes, and whether the caller is itself a
// process (nested dataflow) parked while they run.
struct Group {
  int remaining = 0;
  bool parent_is_process = false;
  std::exception_ptr error;
};

inline void process_body(const std::shared_ptr<Group>& g, const std::function<void()>& fn) {
  in_process = true;
  std::exception_ptr err;
  std::string what = "unknown exception";
  try {
    fn();
  } catch (const std::exception& e) {
    err = std::current_exception();
    what = e.what();
  } catch (...) {
    err = std::current_exception();
  }
  Registry& r = registry();
  std::unique_lock<std::mutex> lk(r.mu);
  if (err && !g->error) g->error = err;
  if (err && r.process_error.empty()) r.process_error = what;
  --r.running;
  // The last process of a nested group hands its slot back to the parked
  // parent in the same critical section, so the parent is never "missing".
  if (--g->remaining == 0 && g->parent_is_process) ++r.running;
  StreamBase::check_deadlock(lk);
}

}  // namespace detail

// Run each function as a dataflow process on its own thread and wait for all
// of them.  An exception thrown by a process is rethrown here (the first one).
inline void run_dataflow(std::vector<std::function<void()>> procs) {
  if (procs.empty()) return;
  detail::Registry& r = detail::registry();
  auto g = std::make_shared<detail::Group>();
  {
    // Count every process as running before any starts, so an early blocker
    // never sees a partial count.  A calling process parks (stops counting).
    std::lock_guard<std::mutex> lk(r.mu);
    g->remaining = static_cast<int>(procs.size());
    g->parent_is_process = detail::in_process;
    r.running += g->remaining - (detail::in_process ? 1 : 0);
  }
  // A process's thread: a task keeps its local arrays on its stack, as the hardware keeps them on chip, and a
  // layer that holds whole weight matrices needs megabytes, more than a thread's default 8 MiB.  The stack is
  // address space reserved, touched only as the task uses it.
  struct Start {
    std::shared_ptr<detail::Group> g;
    const std::function<void()>* fn;
  };
  std::vector<Start> starts;
  starts.reserve(procs.size());
  for (auto& p : procs) starts.push_back(Start{g, &p});
  std::vector<pthread_t> threads(procs.size());
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, std::size_t(1) << 30);
  for (std::size_t i = 0; i < starts.size(); i++) {
    auto body = [](void* arg) -> void* {
      Start* s = static_cast<Start*>(arg);
      detail::process_body(s->g, *s->fn);
      return nullptr;
    };
    if (pthread_create(&threads[i], &attr, body, &starts[i]) != 0) throw std::runtime_error("cannot start a process");
  }
  pthread_attr_destroy(&attr);
  for (auto& t : threads) pthread_join(t, nullptr);
  if (g->error) std::rethrow_exception(g->error);
}
inline void run_dataflow(std::initializer_list<std::function<void()>> procs) {
  run_dataflow(std::vector<std::function<void()>>(procs));
}
template <class... F, std::enable_if_t<(sizeof...(F) > 0) && (std::is_invocable_v<F&> && ...), int> = 0>
inline void run_dataflow(F&&... procs) {
  run_dataflow(std::vector<std::function<void()>>{std::function<void()>(std::forward<F>(procs))...});
}

}  // namespace sim

// As in Vitis, hls::stream<T, DEPTH> derives from hls::stream<T> (DEPTH 0), so a
// process taking hls::stream<T>& accepts a stream declared with a depth.
template <typename T, int DEPTH = 0>
class stream;

template <typename T>
class stream<T, 0> : public sim::detail::StreamBase {
 public:
  stream() : StreamBase(nullptr, 0) {}
  explicit stream(const char* name) : StreamBase(name, 0) {}

  // streamdsl extension: bound the FIFO (0 = unbounded).
  void set_depth(std::size_t depth) {
    std::unique_lock<std::mutex> lk(sim::detail::registry().mu);
    depth_ = depth;
    if (!full_locked()) release(false);
  }
  std::size_t get_depth() const { std::unique_lock<std::mutex> lk(sim::detail::registry().mu); return depth_; }
  const char* name() const { return name_.c_str(); }

  bool empty() const { std::unique_lock<std::mutex> lk(sim::detail::registry().mu); return q_.empty(); }
  bool full() const { std::unique_lock<std::mutex> lk(sim::detail::registry().mu); return full_locked(); }
  std::size_t size() const { std::unique_lock<std::mutex> lk(sim::detail::registry().mu); return q_.size(); }

  void read(T& out) {
    std::unique_lock<std::mutex> lk(sim::detail::registry().mu);
    wait_until(lk, true, [this] { return !q_.empty(); });
    pop_locked(out);
  }
  T read() {
    T v;
    read(v);
    return v;
  }
  void write(const T& v) {
    std::unique_lock<std::mutex> lk(sim::detail::registry().mu);
    wait_until(lk, false, [this] { return !full_locked(); });
    push_locked(v);
  }
  bool read_nb(T& out) {
    std::unique_lock<std::mutex> lk(sim::detail::registry().mu);
    if (q_.empty()) return false;
    pop_locked(out);
    return true;
  }
  bool write_nb(const T& v) {
    std::unique_lock<std::mutex> lk(sim::detail::registry().mu);
    if (full_locked()) return false;
    push_locked(v);
    return true;
  }
  void operator>>(T& out) { read(out); }
  void operator<<(const T& v) { write(v); }

 private:
  bool full_locked() const { return depth_ != 0 && q_.size() >= depth_; }
  void pop_locked(T& out) {
    out = std::move(q_.front());
    q_.pop_front();
    release(false);  // space for blocked writers
  }
  void push_locked(const T& v) {
    q_.push_back(v);
    release(true);  // data for blocked readers
  }

  std::deque<T> q_;

 protected:
  stream(const char* name, std::size_t depth) : StreamBase(name, depth) {}
};

template <typename T, int DEPTH>
class stream : public stream<T, 0> {
  static_assert(DEPTH > 0, "stream depth must be > 0");

 public:
  stream() : stream<T, 0>(nullptr, DEPTH) {}
  explicit stream(const char* name) : stream<T, 0>(name, DEPTH) {}
};

}  // namespace hls

#endif  // STREAMDSL_HLS_STREAM_H
