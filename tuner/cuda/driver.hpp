// The CUDA driver, reached at run time. Nothing in tune links libcuda: the driver library is
// opened with dlopen the first time a GPU is needed, so the tuner, the runner and every CPU
// test start on a machine without an NVIDIA driver, and a missing driver or GPU is one clear
// `tune::error`:
//
//   no CUDA driver: libcuda.so.1 not found (is the NVIDIA driver installed?)
//   no CUDA device: the driver sees none (CUDA_VISIBLE_DEVICES='')
//
// <cuda.h> is included for its types only. Its macros map several entry points to versioned
// symbols (cuMemAlloc -> cuMemAlloc_v2, cuGraphInstantiate -> cuGraphInstantiateWithFlags);
// the table below is declared through those macros, so it binds exactly the symbols this
// header's callers would have linked against.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>

#include <tuner/core/base/result.hpp>

namespace tune {

/// The entry points tune uses, bound from the driver library. Members are named (through
/// <cuda.h>'s macros) after the versioned symbols, so `driver().cuMemAlloc(...)` calls
/// `cuMemAlloc_v2` as a direct call to the header's `cuMemAlloc` would.
struct DriverApi {
#define TUNE_DRIVER_ENTRY(name) decltype(&::name) name = nullptr;
#define TUNE_DRIVER_ENTRIES(X) \
  X(cuInit)                    \
  X(cuDriverGetVersion)        \
  X(cuGetErrorName)            \
  X(cuGetErrorString)          \
  X(cuDeviceGetCount)          \
  X(cuDeviceGet)               \
  X(cuDeviceGetName)           \
  X(cuDeviceGetAttribute)      \
  X(cuDeviceGetPCIBusId)       \
  X(cuDevicePrimaryCtxRetain)  \
  X(cuDevicePrimaryCtxRelease) \
  X(cuCtxSetCurrent)           \
  X(cuCtxGetCurrent)           \
  X(cuCtxGetDevice)            \
  X(cuCtxPushCurrent)          \
  X(cuCtxPopCurrent)           \
  X(cuCtxSynchronize)          \
  X(cuModuleLoadData)          \
  X(cuModuleUnload)            \
  X(cuModuleGetFunction)       \
  X(cuModuleGetGlobal)         \
  X(cuFuncGetAttribute)        \
  X(cuFuncSetAttribute)        \
  X(cuLaunchKernel)            \
  X(cuMemAlloc)                \
  X(cuMemFree)                 \
  X(cuMemcpyHtoD)              \
  X(cuMemcpyDtoH)              \
  X(cuMemcpyDtoD)              \
  X(cuMemsetD8)                \
  X(cuMemsetD32Async)          \
  X(cuStreamCreate)            \
  X(cuStreamDestroy)           \
  X(cuStreamSynchronize)       \
  X(cuStreamQuery)             \
  X(cuStreamIsCapturing)       \
  X(cuStreamBeginCapture)      \
  X(cuStreamEndCapture)        \
  X(cuEventCreate)             \
  X(cuEventDestroy)            \
  X(cuEventRecord)             \
  X(cuEventSynchronize)        \
  X(cuEventQuery)              \
  X(cuEventElapsedTime)        \
  X(cuGraphInstantiate)        \
  X(cuGraphLaunch)             \
  X(cuGraphDestroy)            \
  X(cuGraphExecDestroy)
  TUNE_DRIVER_ENTRIES(TUNE_DRIVER_ENTRY)
#undef TUNE_DRIVER_ENTRY

  std::string library;  ///< the file it was loaded from, as named to dlopen
  int version = 0;      ///< cuDriverGetVersion: 13000 for CUDA 13.0
};

/// The driver, loaded and initialized (cuInit) on first use, once per process; later calls
/// return the same table. The library is `libcuda.so.1`, or the file named by the TUNE_LIBCUDA
/// environment variable when it is set and not empty (tests point it at a missing file).
/// Throws tune::error, every time it is called, when the driver cannot be used:
/// `no CUDA driver: libcuda.so.1 not found (is the NVIDIA driver installed?)` when the library
/// does not load, `no CUDA driver: <lib> lacks 'cuX' (...)` when a symbol is missing,
/// `no CUDA driver: <lib> is the CUDA toolkit's stub library (...)`, and `no CUDA device: ...`
/// when cuInit finds no GPU.
const DriverApi& driver();

/// A CUDA driver call failed. `code` is the CUresult.
class cuda_error : public error {
 public:
  cuda_error(CUresult code, const std::string& message) : error(message), code_(code) {}
  CUresult code() const noexcept { return code_; }

 private:
  CUresult code_;
};

/// The CUresult's name (`CUDA_ERROR_INVALID_VALUE`), through cuGetErrorName when the driver is
/// loaded; `CUresult <n>` otherwise.
std::string cu_error_name(CUresult code);

namespace detail {

/// Loads the driver table from `library` without initializing it (no cuInit). Throws the
/// `no CUDA driver: ...` errors of `driver()`. Separate from `driver()` so that tests can load
/// several libraries in one process.
std::unique_ptr<DriverApi> load_driver(const std::string& library);

/// Initializes a loaded table (cuInit, cuDriverGetVersion); throws the `no CUDA driver` /
/// `no CUDA device` errors of `driver()`.
void init_driver(DriverApi& api);

/// Throws cuda_error `<call> failed: <NAME> (<description>) at <file>:<line>` unless `code` is
/// CUDA_SUCCESS.
void check_cu(CUresult code, const char* call, const char* file, int line);

}  // namespace detail

}  // namespace tune

/// Calls a driver entry point and throws tune::cuda_error naming the call, the CUresult and the
/// location when it fails. Example: `TUNE_CU(tune::driver().cuCtxSynchronize());`
#define TUNE_CU(call) ::tune::detail::check_cu((call), #call, __FILE__, __LINE__)

namespace tune {

/// One GPU, chosen explicitly by index among the devices the driver sees (so
/// CUDA_VISIBLE_DEVICES applies), through its primary context: the context the runtime API and
/// other libraries on the same device share. Constructing it makes the context current on the
/// calling thread; other threads call `make_current()`. Not copyable; destroy it after
/// everything allocated through it.
class Context {
 public:
  /// Retains device `index`'s primary context. Throws tune::error `no CUDA device: ...` when
  /// there is no such device, and the driver errors of `driver()`.
  explicit Context(int index = 0);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  /// Makes this context current on the calling thread.
  void make_current() const;

  int index() const noexcept { return index_; }
  CUdevice device() const noexcept { return device_; }
  CUcontext get() const noexcept { return ctx_; }
  /// The device's name (`NVIDIA H200`).
  const std::string& name() const noexcept { return name_; }
  /// Compute capability as `sm_90`.
  std::string arch() const;
  int cc_major() const noexcept { return cc_major_; }
  int cc_minor() const noexcept { return cc_minor_; }
  /// L2 cache size in bytes (CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE).
  std::size_t l2_bytes() const noexcept { return l2_bytes_; }
  int multiprocessors() const noexcept { return sm_count_; }
  /// The device's PCI bus id (`0000:18:00.0`), as NVML names devices.
  const std::string& pci_bus_id() const noexcept { return pci_bus_id_; }
  /// Any device attribute.
  int attribute(CUdevice_attribute attribute) const;

  /// A non-blocking stream owned by this context, created on first use (capturable into a
  /// CUDA graph, unlike the legacy default stream).
  CUstream stream();

  /// A device buffer of twice the L2 size, allocated on first use and kept: writing it evicts
  /// whatever the L2 held (the bench's flush).
  CUdeviceptr l2_flush_buffer(std::size_t* bytes);

  /// The spin kernel (`tune_spin(unsigned long long ns)`, one thread busy for `ns`
  /// nanoseconds of %globaltimer), JIT-compiled from embedded PTX on first use so that no
  /// compiler is needed at run time.
  CUfunction spin_function();

 private:
  int index_ = 0;
  CUdevice device_ = 0;
  CUcontext ctx_ = nullptr;
  std::string name_;
  std::string pci_bus_id_;
  int cc_major_ = 0;
  int cc_minor_ = 0;
  std::size_t l2_bytes_ = 0;
  int sm_count_ = 0;

  std::mutex mutex_;  // guards the lazily created resources below
  CUstream stream_ = nullptr;
  CUdeviceptr flush_ = 0;
  std::size_t flush_bytes_ = 0;
  CUmodule spin_module_ = nullptr;
  CUfunction spin_ = nullptr;
};

/// The PTX of the spin kernel (`.entry tune_spin(.param .u64 ns)`), exposed so that a test can
/// assemble it with ptxas on a machine without a GPU.
std::string_view spin_kernel_ptx();

/// Queues the spin kernel on `stream`: the stream is busy for about `ms` milliseconds. Used in
/// front of timed regions (so that a start event is never recorded on an idle GPU) and by tests
/// that need a launch to stay queued.
void spin(Context& ctx, CUstream stream, double ms);

}  // namespace tune
