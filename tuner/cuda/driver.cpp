#include <tuner/cuda/driver.hpp>

#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <utility>

#include <fmt/format.h>

namespace tune {

namespace {

#define TUNE_STR(x) #x
#define TUNE_XSTR(x) TUNE_STR(x)

std::string default_library() {
  const char* env = std::getenv("TUNE_LIBCUDA");
  return env && *env ? std::string(env) : std::string("libcuda.so.1");
}

std::string visible_devices() {
  const char* env = std::getenv("CUDA_VISIBLE_DEVICES");
  return env ? fmt::format("CUDA_VISIBLE_DEVICES='{}'", env) : "CUDA_VISIBLE_DEVICES unset";
}

// The loaded driver, or why it could not be loaded: computed once, so that every later call
// reports the same error without retrying dlopen.
struct DriverState {
  std::unique_ptr<DriverApi> api;
  std::string error;
};

DriverState load_once() {
  DriverState state;
  try {
    state.api = detail::load_driver(default_library());
    detail::init_driver(*state.api);
  } catch (const error& e) {
    state.api.reset();
    state.error = e.what();
  }
  return state;
}

// The driver table of the loaded library, for cu_error_name; nullptr before a load.
const DriverApi* loaded_api = nullptr;

}  // namespace

namespace detail {

std::unique_ptr<DriverApi> load_driver(const std::string& library) {
  // RTLD_LOCAL: the driver's symbols stay out of the global namespace, so a runtime library
  // loaded later by a harness finds its own way to the driver. Never closed: modules and
  // contexts live until the process ends.
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    throw error(
        fmt::format("no CUDA driver: {} not found (is the NVIDIA driver installed?)", library));
  }
  auto api = std::make_unique<DriverApi>();
  api->library = library;
  auto bind = [&](auto& slot, const char* symbol) {
    void* p = dlsym(handle, symbol);
    if (!p) {
      throw error(fmt::format(
          "no CUDA driver: {} lacks '{}' (a driver older than the CUDA {}.{} headers tune was "
          "built with?)",
          library, symbol, CUDA_VERSION / 1000, CUDA_VERSION % 1000 / 10));
    }
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(p);
  };
#define TUNE_DRIVER_BIND(name) bind(api->name, TUNE_XSTR(name));
  try {
    TUNE_DRIVER_ENTRIES(TUNE_DRIVER_BIND)
  } catch (...) {
    dlclose(handle);
    throw;
  }
#undef TUNE_DRIVER_BIND
  return api;
}

void init_driver(DriverApi& api) {
  CUresult rc = api.cuInit(0);
  if (rc == CUDA_ERROR_STUB_LIBRARY) {
    throw error(fmt::format(
        "no CUDA driver: {} is the CUDA toolkit's stub library, not a driver (is the NVIDIA "
        "driver installed?)",
        api.library));
  }
  if (rc == CUDA_ERROR_NO_DEVICE) {
    throw error(fmt::format("no CUDA device: the driver sees none ({})", visible_devices()));
  }
  if (rc != CUDA_SUCCESS) {
    const char* name = nullptr;
    api.cuGetErrorName(rc, &name);
    throw error(fmt::format("no CUDA device: cuInit failed with {} ({})",
                            name ? name : fmt::format("CUresult {}", static_cast<int>(rc)),
                            visible_devices()));
  }
  TUNE_CU(api.cuDriverGetVersion(&api.version));
}

void check_cu(CUresult code, const char* call, const char* file, int line) {
  if (code == CUDA_SUCCESS) return;
  std::string description;
  if (loaded_api) {
    const char* text = nullptr;
    if (loaded_api->cuGetErrorString(code, &text) == CUDA_SUCCESS && text) description = text;
  }
  throw cuda_error(code,
                   fmt::format("{} failed: {}{} at {}:{}", call, cu_error_name(code),
                               description.empty() ? "" : " (" + description + ")", file, line));
}

}  // namespace detail

const DriverApi& driver() {
  static const DriverState state = [] {
    DriverState s = load_once();
    loaded_api = s.api.get();
    return s;
  }();
  if (!state.api) throw error(state.error);
  return *state.api;
}

std::string cu_error_name(CUresult code) {
  if (loaded_api) {
    const char* name = nullptr;
    if (loaded_api->cuGetErrorName(code, &name) == CUDA_SUCCESS && name) return name;
  }
  return fmt::format("CUresult {}", static_cast<int>(code));
}

// ---------------------------------------------------------------------------------------------
// Context

Context::Context(int index) : index_(index) {
  const DriverApi& cu = driver();
  int count = 0;
  TUNE_CU(cu.cuDeviceGetCount(&count));
  if (count == 0) {
    throw error(fmt::format("no CUDA device: the driver sees none ({})", visible_devices()));
  }
  if (index < 0 || index >= count) {
    throw error(fmt::format("no CUDA device: --device {} requested, but {} device{} visible ({})",
                            index, count, count == 1 ? " is" : "s are", visible_devices()));
  }
  TUNE_CU(cu.cuDeviceGet(&device_, index));
  TUNE_CU(cu.cuDevicePrimaryCtxRetain(&ctx_, device_));
  try {
    TUNE_CU(cu.cuCtxSetCurrent(ctx_));
    char name[256] = {};
    TUNE_CU(cu.cuDeviceGetName(name, sizeof name, device_));
    name_ = name;
    char bus[64] = {};
    TUNE_CU(cu.cuDeviceGetPCIBusId(bus, sizeof bus, device_));
    pci_bus_id_ = bus;
    cc_major_ = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    cc_minor_ = attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    l2_bytes_ = static_cast<std::size_t>(attribute(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE));
    sm_count_ = attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  } catch (...) {
    cu.cuDevicePrimaryCtxRelease(device_);
    throw;
  }
}

Context::~Context() {
  // Errors are ignored here: a destructor cannot report them, and at process exit the driver
  // may already be shutting down.
  const DriverApi& cu = driver();
  cu.cuCtxPushCurrent(ctx_);
  if (stream_) cu.cuStreamDestroy(stream_);
  if (flush_) cu.cuMemFree(flush_);
  if (spin_module_) cu.cuModuleUnload(spin_module_);
  CUcontext popped = nullptr;
  cu.cuCtxPopCurrent(&popped);
  cu.cuDevicePrimaryCtxRelease(device_);
}

void Context::make_current() const {
  TUNE_CU(driver().cuCtxSetCurrent(ctx_));
}

std::string Context::arch() const {
  return fmt::format("sm_{}{}", cc_major_, cc_minor_);
}

int Context::attribute(CUdevice_attribute attribute) const {
  int value = 0;
  TUNE_CU(driver().cuDeviceGetAttribute(&value, attribute, device_));
  return value;
}

CUstream Context::stream() {
  std::lock_guard lock(mutex_);
  if (!stream_) {
    make_current();
    TUNE_CU(driver().cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING));
  }
  return stream_;
}

CUdeviceptr Context::l2_flush_buffer(std::size_t* bytes) {
  std::lock_guard lock(mutex_);
  if (!flush_) {
    make_current();
    // Twice the L2, so that writing it leaves none of the previous lines behind whatever the
    // replacement policy; at least 1 MiB for devices that report no L2.
    std::size_t size = std::max<std::size_t>(2 * l2_bytes_, std::size_t{1} << 20);
    TUNE_CU(driver().cuMemAlloc(&flush_, size));
    flush_bytes_ = size;
  }
  if (bytes) *bytes = flush_bytes_;
  return flush_;
}

std::string_view spin_kernel_ptx() {
  // One thread reads the global nanosecond timer until `ns` have passed. PTX ISA 7.0 for
  // sm_70 and up: the driver JIT-compiles it for whatever device it is loaded on.
  static constexpr std::string_view ptx = R"(.version 7.0
.target sm_70
.address_size 64

.visible .entry tune_spin(
    .param .u64 tune_spin_ns
)
{
    .reg .pred %p;
    .reg .b64 %start, %now, %elapsed, %limit;

    ld.param.u64 %limit, [tune_spin_ns];
    mov.u64 %start, %globaltimer;
$Lspin:
    mov.u64 %now, %globaltimer;
    sub.u64 %elapsed, %now, %start;
    setp.lt.u64 %p, %elapsed, %limit;
    @%p bra $Lspin;
    ret;
}
)";
  return ptx;
}

CUfunction Context::spin_function() {
  std::lock_guard lock(mutex_);
  if (!spin_) {
    make_current();
    std::string ptx(spin_kernel_ptx());  // cuModuleLoadData wants it NUL-terminated
    TUNE_CU(driver().cuModuleLoadData(&spin_module_, ptx.c_str()));
    TUNE_CU(driver().cuModuleGetFunction(&spin_, spin_module_, "tune_spin"));
  }
  return spin_;
}

void spin(Context& ctx, CUstream stream, double ms) {
  CUfunction fn = ctx.spin_function();
  auto ns = static_cast<unsigned long long>(std::llround(std::max(ms, 0.0) * 1e6));
  void* args[] = {&ns};
  TUNE_CU(driver().cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, stream, args, nullptr));
}

}  // namespace tune
