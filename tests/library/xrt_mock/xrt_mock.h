// xrt_mock.h: a CPU stand-in for the part of the XRT native C++ API the generated host uses.
// For tests only (tests/library/test_models_hls.py); not part of streamdsl, and not XRT: it checks that the
// host compiles against the API and that its buffer logic (groups, syncs, arguments, one run) is right, with
// the generate kernel's C-simulation behind it.  No figure and no token of a result comes from it: the
// C-simulation of a whole launch (generate/tb_*.cpp) is checked against transformers on its own.
//
// * xrt::device::load_xclbin(path) reads a *link config* (link.cfg) in place of an xclbin: its
//   nk= lines name the kernels, its sp=<cu>.<arg>:HBM[a:b] lines give each argument's memory
//   group (the bank a, as the group id).
// * A kernel is a C++ function registered with XRT_MOCK_KERNEL (the layer top function of the
//   generated C-sim sources) with its argument names; xrt::run::start() calls it.
// * xrt::bo keeps a host image (map()) and a separate "device" image: sync(TO_DEVICE) copies host
//   -> device, sync(FROM_DEVICE) device -> host, and kernels see only the device image, so a
//   missing sync shows up as wrong results.  set_arg checks that a buffer was allocated in the
//   memory group of the argument it is passed to.
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

enum xclBOSyncDirection { XCL_BO_SYNC_BO_TO_DEVICE = 0, XCL_BO_SYNC_BO_FROM_DEVICE = 1 };
enum ert_cmd_state { ERT_CMD_STATE_COMPLETED = 4 };

namespace xrt_mock {

struct Arg {
  bool set = false;
  bool is_bo = false;
  void *ptr = nullptr;  // the buffer's device image
  int64_t scalar = 0;
  uint32_t group = 0;
};

template <class T> T as(const Arg &a) {
  if constexpr (std::is_pointer_v<T>) {
    if (!a.is_bo) throw std::runtime_error("xrt mock: a buffer argument got a scalar");
    return reinterpret_cast<T>(a.ptr);
  } else {
    if (a.is_bo) throw std::runtime_error("xrt mock: a scalar argument got a buffer");
    return static_cast<T>(a.scalar);
  }
}

template <class... A, size_t... I> void call(void (*f)(A...), const std::vector<Arg> &v, std::index_sequence<I...>) {
  f(as<A>(v[I])...);
}

struct KernelEntry {
  std::vector<std::string> args;
  std::function<void(const std::vector<Arg> &)> fn;
};

inline std::map<std::string, KernelEntry> &registry() {
  static std::map<std::string, KernelEntry> r;
  return r;
}

template <class... A> struct Registration {
  Registration(const char *name, void (*f)(A...), std::vector<std::string> args) {
    if (args.size() != sizeof...(A)) {
      std::fprintf(stderr, "xrt mock: %s has %zu arguments, %zu names given\n", name, sizeof...(A), args.size());
      std::abort();
    }
    registry()[name] = KernelEntry{std::move(args), [f](const std::vector<Arg> &v) {
                                     call(f, v, std::index_sequence_for<A...>{});
                                   }};
  }
};

struct Xclbin {  // parsed link config: cu name -> kernel, (kernel, arg) -> group
  std::map<std::string, std::string> kernels;  // kernel name -> cu name
  std::map<std::pair<std::string, std::string>, uint32_t> groups;
};

inline std::shared_ptr<Xclbin> parse(const std::string &path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("xrt mock: cannot open xclbin " + path);
  auto x = std::make_shared<Xclbin>();
  std::map<std::string, std::string> cu_kernel;
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("nk=", 0) == 0) {  // nk=<kernel>:<count>:<cu>
      const std::string rest = line.substr(3);
      const size_t a = rest.find(':'), b = rest.rfind(':');
      const std::string k = rest.substr(0, a), cu = rest.substr(b + 1);
      x->kernels[k] = cu;
      cu_kernel[cu] = k;
    } else if (line.rfind("sp=", 0) == 0) {  // sp=<cu>.<arg>:HBM[a] or HBM[a:b]
      const std::string rest = line.substr(3);
      const size_t dot = rest.find('.'), colon = rest.find(':'), br = rest.find('[');
      const std::string cu = rest.substr(0, dot), arg = rest.substr(dot + 1, colon - dot - 1);
      if (!cu_kernel.count(cu)) throw std::runtime_error("xrt mock: sp= names an unknown compute unit " + cu);
      x->groups[{cu_kernel[cu], arg}] = uint32_t(std::stoul(rest.substr(br + 1)));
    }
  }
  return x;
}

}  // namespace xrt_mock

#define XRT_MOCK_CAT2(a, b) a##b
#define XRT_MOCK_CAT(a, b) XRT_MOCK_CAT2(a, b)
// XRT_MOCK_KERNEL("name", function, {"arg0", "arg1", ...})
#define XRT_MOCK_KERNEL(name, fn, ...) \
  static xrt_mock::Registration XRT_MOCK_CAT(xrt_mock_reg_, __LINE__)(name, fn, __VA_ARGS__)

namespace xrt {

using memory_group = uint32_t;

class uuid {
 public:
  uuid() = default;
  explicit uuid(std::shared_ptr<xrt_mock::Xclbin> x) : xclbin(std::move(x)) {}
  std::shared_ptr<xrt_mock::Xclbin> xclbin;
};

class device {
 public:
  device() = default;
  explicit device(unsigned int index) : index_(index) {}
  uuid load_xclbin(const std::string &path) { return uuid(xrt_mock::parse(path)); }

 private:
  unsigned int index_ = 0;
};

class bo {
 public:
  enum class flags : uint32_t { normal = 0 };
  bo() = default;
  bo(const device &, size_t size, memory_group group) : mem_(std::make_shared<Mem>(size, group)) {}
  bo(const device &d, size_t size, flags, memory_group group) : bo(d, size, group) {}
  template <class T> T map() { return reinterpret_cast<T>(mem_->host.data()); }
  void sync(xclBOSyncDirection dir) {
    if (dir == XCL_BO_SYNC_BO_TO_DEVICE)
      mem_->device = mem_->host;
    else
      mem_->host = mem_->device;
  }
  void sync(xclBOSyncDirection dir, size_t sz, size_t offset) {  // only [offset, offset + sz)
    if (offset + sz > mem_->host.size()) throw std::runtime_error("xrt mock: sync past the end of a buffer");
    if (dir == XCL_BO_SYNC_BO_TO_DEVICE)
      std::memcpy(mem_->device.data() + offset, mem_->host.data() + offset, sz);
    else
      std::memcpy(mem_->host.data() + offset, mem_->device.data() + offset, sz);
  }
  size_t size() const { return mem_->host.size(); }
  memory_group group() const { return mem_->group; }  // mock only
  void *device_image() const { return mem_->device.data(); }  // mock only

 private:
  struct Mem {
    Mem(size_t n, memory_group g) : host(n), device(n), group(g) {}
    std::vector<unsigned char> host, device;
    memory_group group;
  };
  std::shared_ptr<Mem> mem_;
};

class kernel {
 public:
  kernel() = default;
  kernel(const device &, const uuid &id, const std::string &name) : name_(name), xclbin_(id.xclbin) {
    if (!xclbin_ || !xclbin_->kernels.count(name)) throw std::runtime_error("xrt mock: no kernel " + name + " in the xclbin");
    auto it = xrt_mock::registry().find(name);
    if (it == xrt_mock::registry().end()) throw std::runtime_error("xrt mock: kernel " + name + " is not registered");
    entry_ = &it->second;
  }
  memory_group group_id(int argno) const {
    if (argno < 0 || size_t(argno) >= entry_->args.size())
      throw std::runtime_error("xrt mock: " + name_ + " has no argument " + std::to_string(argno));
    auto it = xclbin_->groups.find({name_, entry_->args[argno]});
    if (it == xclbin_->groups.end())
      throw std::runtime_error("xrt mock: argument " + entry_->args[argno] + " of " + name_ + " is not connected to memory");
    return it->second;
  }
  const std::string &name() const { return name_; }
  const xrt_mock::KernelEntry &entry() const { return *entry_; }

 private:
  std::string name_;
  std::shared_ptr<xrt_mock::Xclbin> xclbin_;
  const xrt_mock::KernelEntry *entry_ = nullptr;
};

class run {
 public:
  run() = default;
  explicit run(const kernel &k) : k_(k), args_(k.entry().args.size()) {}
  void set_arg(int index, const bo &b) {
    Arg &a = at(index);
    const memory_group want = k_.group_id(index);
    if (b.group() != want) {
      std::fprintf(stderr, "xrt mock: %s argument %s: buffer in memory group %u, the argument is connected to %u\n",
                   k_.name().c_str(), k_.entry().args[index].c_str(), b.group(), want);
      std::exit(4);
    }
    a.set = a.is_bo = true;
    a.ptr = b.device_image();
  }
  void set_arg(int index, bo &b) { set_arg(index, static_cast<const bo &>(b)); }
  template <class T> void set_arg(int index, T value) {
    static_assert(std::is_arithmetic_v<T>, "xrt mock: scalar arguments only");
    Arg &a = at(index);
    a.set = true;
    a.is_bo = false;
    a.scalar = int64_t(value);
  }
  void start() {
    for (size_t i = 0; i < args_.size(); i++)
      if (!args_[i].set) {
        std::fprintf(stderr, "xrt mock: %s started without argument %s\n", k_.name().c_str(), k_.entry().args[i].c_str());
        std::exit(4);
      }
    k_.entry().fn(args_);
  }
  ert_cmd_state wait() { return ERT_CMD_STATE_COMPLETED; }

 private:
  using Arg = xrt_mock::Arg;
  Arg &at(int index) {
    if (index < 0 || size_t(index) >= args_.size())
      throw std::runtime_error("xrt mock: " + k_.name() + " has no argument " + std::to_string(index));
    return args_[index];
  }
  kernel k_;
  std::vector<Arg> args_;
};

}  // namespace xrt
