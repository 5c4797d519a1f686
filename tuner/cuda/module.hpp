// Modules: a candidate's cubin loaded from the kernel cache, its entries and globals by name,
// and the in-memory module cache (one module per cache key and context, loaded once even
// when several threads ask at the same time).
//
// Launches are tracked per module: every launch through `Function::launch` records an event
// on its stream into the module, so that evicting a module waits for the launches still
// queued (quiesces) before cuModuleUnload. `clear_kernel_cache`, `evict_kernel` and
// `retain_kernels` are therefore safe to call at any time; a module still referenced (by a
// `Function` in a launch closure, say) stays loaded until its last holder goes, and is
// quiesced then too.
#pragma once

#include <cuda.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include <tuner/cuda/driver.hpp>

namespace tune {

class Module;

/// Grid or block dimensions; `Dim3(256)` is `{256, 1, 1}`.
struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
  Dim3() = default;
  Dim3(unsigned x_, unsigned y_ = 1, unsigned z_ = 1) : x(x_), y(y_), z(z_) {}
};

/// What the driver reports about a compiled function (cuFuncGetAttribute).
struct FunctionAttributes {
  int registers = 0;                 ///< registers per thread
  int static_shared_bytes = 0;       ///< static `__shared__` memory per block
  int local_bytes = 0;               ///< local memory per thread (spills, stack)
  int const_bytes = 0;               ///< user `__constant__` memory
  int max_threads_per_block = 0;     ///< the most threads a block of it can have
  int max_dynamic_shared_bytes = 0;  ///< the dynamic shared memory limit currently set
  int binary_version = 0;            ///< the SASS architecture, 90 for sm_90
};

/// A launch that the function's own limits or the device's refuse, found before launching
/// (`Function::launch`): a block with more threads than the function allows (its registers or
/// `__launch_bounds__` decide that), more dynamic shared memory than a block may have, a grid
/// or block dimension over the device's. Nothing was queued and the context is untouched, so
/// unlike a tune::cuda_error the worker goes on: the candidate is invalid with this message.
class launch_error : public error {
 public:
  using error::error;
};

namespace detail {

/// What a launch is checked against: the function's attributes and the device's limits, read
/// once when the function is first looked up.
struct LaunchLimits {
  int max_threads_per_block = 1024;  ///< CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK
  int registers = 0;                 ///< per thread
  int static_shared_bytes = 0;
  int max_shared_bytes = 48 * 1024;  ///< static + dynamic a block may have (the opt-in limit)
  unsigned max_block[3] = {1024, 1024, 64};
  unsigned max_grid[3] = {2147483647u, 65535, 65535};
};

/// Why a launch of `name` with this geometry would fail against `limits`, or an empty string
/// when it fits: `launch of 'saxpy' refused: a block of 256 threads (256x1x1) is more than the
/// 128 that 'saxpy' allows (it uses 40 registers per thread; they and its __launch_bounds__
/// set that limit)`.
std::string launch_refusal(const LaunchLimits& limits, const std::string& name, Dim3 grid,
                           Dim3 block, std::size_t shared_bytes);

/// Per-function state shared by every `Function` handle of one entry.
struct FunctionState {
  CUfunction fn = nullptr;
  std::string name;
  LaunchLimits limits;
  /// The dynamic shared memory limit last set with cuFuncSetAttribute (48 KiB by default).
  std::atomic<int> dynamic_shared_limit{48 * 1024};
};

/// A kernel parameter as passed to cuLaunchKernel: device buffers (anything with a
/// `device_ptr()`) become their CUdeviceptr, everything else is passed by value.
template <class T>
auto kernel_arg(const T& value) {
  if constexpr (requires { value.device_ptr(); }) {
    return value.device_ptr();
  } else {
    static_assert(std::is_trivially_copyable_v<T>, "kernel arguments must be trivially copyable");
    return value;
  }
}

}  // namespace detail

/// A `__global__` function of a loaded module. A cheap handle: copies share the module, which
/// stays loaded while any handle exists.
class Function {
 public:
  Function() = default;

  const std::string& name() const { return state_->name; }
  CUfunction get() const noexcept { return state_ ? state_->fn : nullptr; }
  Module& module() const { return *module_; }

  /// Registers, static shared memory, local memory and limits of this function.
  FunctionAttributes attributes() const;

  /// Raises the function's dynamic shared memory limit to `bytes` (needed above 48 KiB);
  /// `launch` does this itself when asked for more than the limit set so far. Throws
  /// tune::cuda_error when the device cannot give that much.
  void set_dynamic_shared_limit(int bytes) const;

  /// Launches with `args` (in the kernel's parameter order; a DeviceBuffer passes its device
  /// pointer) on `stream`, with `shared_bytes` of dynamic shared memory. Records the launch
  /// into the module so that eviction waits for it. A geometry the function's or the device's
  /// limits refuse throws tune::launch_error before anything is queued (a candidate whose
  /// BLOCK its registers do not allow is invalid with that reason); any other failure throws
  /// tune::cuda_error.
  /// Example: `saxpy.launch(blocks, 256, 0, stream, n, a, x, y);`
  template <class... Args>
  void launch(Dim3 grid, Dim3 block, std::size_t shared_bytes, CUstream stream,
              const Args&... args) const {
    auto values = std::make_tuple(detail::kernel_arg(args)...);
    std::apply(
        [&](auto&... v) {
          void* params[] = {static_cast<void*>(&v)..., nullptr};
          launch_raw(grid, block, shared_bytes, stream, params);
        },
        values);
  }

  /// `launch` with the parameters already packed as cuLaunchKernel wants them.
  void launch_raw(Dim3 grid, Dim3 block, std::size_t shared_bytes, CUstream stream,
                  void** params) const;

 private:
  friend class Module;
  Function(std::shared_ptr<Module> module, detail::FunctionState* state)
      : module_(std::move(module)), state_(state) {}

  std::shared_ptr<Module> module_;
  detail::FunctionState* state_ = nullptr;  // owned by the module
};

/// A `__constant__` or `__device__` variable of a loaded module: its device address and size.
/// Each module has its own copy, so per-candidate filters and lookup tables never leak from one
/// candidate to another.
struct Global {
  CUdeviceptr dptr = 0;
  std::size_t bytes = 0;

  /// Copies `size` bytes from `host` into the variable and waits for it (the whole context is
  /// synchronized). Throws tune::error when `size` differs from the variable's size.
  void upload(const void* host, std::size_t size) const;
  /// Waits for the context's queued work, then copies the variable into `host`; the same size
  /// check.
  void download(void* host, std::size_t size) const;
  /// Uploads one value (a scalar, a struct or a std::array) of exactly the variable's size.
  template <class T>
  void upload(const T& value) const {
    static_assert(std::is_trivially_copyable_v<T>);
    upload(&value, sizeof(T));
  }
  /// Uploads a whole table of exactly the variable's size.
  template <class T>
  void upload(const std::vector<T>& values) const {
    upload(values.data(), values.size() * sizeof(T));
  }
  /// Reads the variable back as a T of exactly its size.
  template <class T>
  T download() const {
    static_assert(std::is_trivially_copyable_v<T>);
    T value{};
    download(&value, sizeof(T));
    return value;
  }
};

/// A loaded module (one candidate's cubin) in one context. Obtained from `load_kernel` or
/// `load_module`; shared by everyone who asks for the same key.
class Module : public std::enable_shared_from_this<Module> {
 public:
  /// Loads `image` (a cubin, or NUL-terminated PTX) into the current context. Prefer
  /// `load_kernel`, which caches.
  Module(std::string key, const Context& ctx, const std::string& image);
  /// Waits for every launch recorded into this module, then unloads it.
  ~Module();
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  /// The cache key this module was loaded under.
  const std::string& key() const noexcept { return key_; }
  CUmodule get() const noexcept { return module_; }
  CUcontext context() const noexcept { return ctx_; }

  /// The `__global__` function named `name` (the extern "C" name, or the mangled one). Throws
  /// tune::error `module '<key>' has no function '<name>'`.
  Function function(const std::string& name);

  /// The `__constant__`/`__device__` variable named `name`. Throws tune::error
  /// `module '<key>' has no global '<name>'`.
  Global global(const std::string& name) const;

  /// Records on `stream` that this module is in use until the work queued so far completes.
  /// `Function::launch` calls this; call it yourself after launching one of its functions by
  /// other means.
  void track(CUstream stream);

  /// Blocks until every launch recorded into this module has completed.
  void quiesce();

 private:
  std::string key_;
  CUcontext ctx_ = nullptr;
  CUdevice device_ = 0;
  CUmodule module_ = nullptr;
  std::mutex mutex_;  // guards the maps below
  std::map<std::string, std::unique_ptr<detail::FunctionState>, std::less<>> functions_;
  std::map<CUstream, CUevent> last_use_;  // per stream: an event after its latest launch
};

/// Loads the candidate `key` from the kernel cache directory `cache_dir` (`<key>.json` beside
/// `<key>.cubin`, docs/formats.md "Kernel cache entry"), once per key and context: later
/// and concurrent calls return the same module. The entry's header is re-checked (schema, key,
/// status, the cubin's SHA-256); a mismatch is a miss, and a miss throws tune::error
/// `kernel cache miss for '<key>' in '<dir>': <why> (run the warm target to compile it)`.
std::shared_ptr<Module> load_kernel(Context& ctx, const std::filesystem::path& cache_dir,
                                    const std::string& key);

/// Loads the cubin (or PTX) file `image` under `key`, once per key and context, without a cache
/// entry: for tests and tools that compiled it themselves.
std::shared_ptr<Module> load_module(Context& ctx, const std::string& key,
                                    const std::filesystem::path& image);

/// Removes every module from the in-memory cache, waiting for their queued launches first;
/// returns how many entries went.
std::size_t clear_kernel_cache();

/// Removes the module(s) of `key`, waiting for their queued launches first; false when the key
/// was not cached.
bool evict_kernel(std::string_view key);

/// Keeps only the modules whose key satisfies `keep`, evicting (and quiescing) the rest;
/// returns how many entries went.
std::size_t retain_kernels(const std::function<bool(std::string_view key)>& keep);

/// How many modules the in-memory cache holds.
std::size_t kernel_cache_size();

/// How many modules have been loaded into the in-memory cache since the process started (a
/// cache hit does not count): tests use it to see that a key was loaded once.
std::size_t kernel_cache_loads();

namespace detail {

/// The reason the kernel cache entry of `key` in `dir` cannot be used, or an empty string
/// when it can; on success `cubin` receives the cubin's bytes (checked against the entry's
/// `cubin_sha256`). Host code only: no driver needed.
std::string read_cache_entry(const std::filesystem::path& dir, const std::string& key,
                             std::string& cubin);

/// While a LaunchScope is alive on a thread, launches on that thread are collected instead of
/// recording an event each; the scope records one event per module and stream when it ends.
/// The bench uses it around timed regions (no tracking event inside them) and around graph
/// capture (where an event record would not be captured as a real dependency).
class LaunchScope {
 public:
  LaunchScope();
  /// Records the collected launches into their modules (errors ignored).
  ~LaunchScope();
  LaunchScope(const LaunchScope&) = delete;
  LaunchScope& operator=(const LaunchScope&) = delete;

  /// The innermost scope of this thread, or nullptr.
  static LaunchScope* current() noexcept;
  /// Notes a launch of `module` on `stream`.
  void note(std::shared_ptr<Module> module, CUstream stream);
  /// Records the collected launches now (each module's `track`) and forgets them.
  void flush();

 private:
  LaunchScope* outer_ = nullptr;
  std::vector<std::pair<std::shared_ptr<Module>, CUstream>> uses_;
};

}  // namespace detail

}  // namespace tune
