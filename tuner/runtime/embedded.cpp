#include <tuner/runtime/embedded.hpp>

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string_view>
#include <type_traits>
#include <utility>

namespace tune::runtime {

namespace {

// The few driver entry points the loader needs, bound once from the driver library (named by
// TUNE_LIBCUDA when set, as tune's own tools do). <cuda.h>'s macros name the members after the
// versioned symbols a direct call would link against.
struct Driver {
  decltype(&::cuInit) cuInit = nullptr;
  decltype(&::cuGetErrorName) cuGetErrorName = nullptr;
  decltype(&::cuCtxGetCurrent) cuCtxGetCurrent = nullptr;
  decltype(&::cuCtxGetDevice) cuCtxGetDevice = nullptr;
  decltype(&::cuDeviceGetAttribute) cuDeviceGetAttribute = nullptr;
  decltype(&::cuModuleLoadData) cuModuleLoadData = nullptr;
  decltype(&::cuModuleGetFunction) cuModuleGetFunction = nullptr;
  std::string failure;  // why the driver cannot be used; empty when it can
};

#define TUNE_RUNTIME_STR(x) #x
#define TUNE_RUNTIME_XSTR(x) TUNE_RUNTIME_STR(x)

Driver load_driver() {
  Driver d;
  const char* env = std::getenv("TUNE_LIBCUDA");
  const std::string library = env && *env ? env : "libcuda.so.1";
  // RTLD_LOCAL: the driver's symbols stay out of the global namespace. Never closed: modules
  // live until the process ends.
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    d.failure = "no CUDA driver: " + library + " not found (is the NVIDIA driver installed?)";
    return d;
  }
  auto bind = [&](auto& slot, const char* symbol) {
    void* p = dlsym(handle, symbol);
    if (p == nullptr && d.failure.empty())
      d.failure = "no CUDA driver: " + library + " lacks '" + symbol + "'";
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(p);
  };
#define TUNE_RUNTIME_BIND(name) bind(d.name, TUNE_RUNTIME_XSTR(name));
  TUNE_RUNTIME_BIND(cuInit)
  TUNE_RUNTIME_BIND(cuGetErrorName)
  TUNE_RUNTIME_BIND(cuCtxGetCurrent)
  TUNE_RUNTIME_BIND(cuCtxGetDevice)
  TUNE_RUNTIME_BIND(cuDeviceGetAttribute)
  TUNE_RUNTIME_BIND(cuModuleLoadData)
  TUNE_RUNTIME_BIND(cuModuleGetFunction)
#undef TUNE_RUNTIME_BIND
  if (d.failure.empty() && d.cuInit(0) != CUDA_SUCCESS)
    d.failure = "no CUDA device: cuInit failed (CUDA_VISIBLE_DEVICES, or no GPU?)";
  return d;
}

// The driver, loaded once per process; throws why it cannot be used, every time.
const Driver& driver() {
  static const Driver d = load_driver();
  if (!d.failure.empty()) throw error(d.failure);
  return d;
}

void check(const Driver& d, CUresult rc, const char* call) {
  if (rc == CUDA_SUCCESS) return;
  const char* name = nullptr;
  d.cuGetErrorName(rc, &name);
  throw error(std::string(call) +
                  " failed: " + (name ? name : "CUresult " + std::to_string(static_cast<int>(rc))),
              rc);
}

CUcontext current_context(const Driver& d) {
  CUcontext ctx = nullptr;
  check(d, d.cuCtxGetCurrent(&ctx), "cuCtxGetCurrent");
  if (ctx == nullptr)
    throw error(
        "no current CUDA context: make one current (cudaSetDevice, or a "
        "tune::Context) before asking for an embedded winner");
  return ctx;
}

std::string describe(const EmbeddedImage& image) {
  return "config '" + std::string(image.config_id) + "' (" + image.arch + ", bucket '" +
         image.bucket_name + "')";
}

}  // namespace

int current_sm() {
  const Driver& d = driver();
  current_context(d);
  CUdevice dev = 0;
  check(d, d.cuCtxGetDevice(&dev), "cuCtxGetDevice");
  int major = 0;
  int minor = 0;
  check(d, d.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev),
        "cuDeviceGetAttribute");
  check(d, d.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev),
        "cuDeviceGetAttribute");
  return major * 10 + minor;
}

const EmbeddedImage& find_image(const EmbeddedKernel& kernel, int sm, int bucket) {
  const EmbeddedImage* incumbent = nullptr;
  std::string recorded;
  bool have_sm = false;
  for (std::size_t i = 0; i < kernel.count; ++i) {
    const EmbeddedImage& im = kernel.images[i];
    if (im.sm == sm && im.bucket == bucket) return im;
    have_sm = have_sm || im.sm == sm;
    // The fallback: the first architecture's incumbent (a winner, or the extra image).
    if (im.incumbent && incumbent == nullptr && std::string_view(im.arch) == kernel.images[0].arch)
      incumbent = &im;
    if (im.sm >= 0 && recorded.find(im.arch) == std::string::npos)
      recorded += (recorded.empty() ? "" : ", ") + std::string(im.arch);
  }
  const std::string name = kernel.kernel;
  const std::string arch = "sm_" + std::to_string(sm);
  if (have_sm)
    throw error("kernel '" + name + "' has no embedded image of bucket " + std::to_string(bucket) +
                " for " + arch);
  if (kernel.missing_arch == MissingArch::first_incumbent && incumbent != nullptr)
    return *incumbent;
  throw error("kernel '" + name + "' has no winners for " + arch +
              " (recorded: " + (recorded.empty() ? "none" : recorded) + "): tune it for " + arch +
              ", or embed with FALLBACK first_incumbent");
}

CUfunction load_function(const EmbeddedImage& image) {
  const Driver& d = driver();
  const CUcontext ctx = current_context(d);
  // Modules live as long as the process: a context's modules go with it, and images are few.
  static std::mutex mutex;
  static std::map<std::pair<CUcontext, const EmbeddedImage*>, CUfunction> loaded;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = loaded.find({ctx, &image});
  if (it != loaded.end()) return it->second;
  CUmodule module = nullptr;
  check(d, d.cuModuleLoadData(&module, image.data), "cuModuleLoadData");
  CUfunction f = nullptr;
  check(d, d.cuModuleGetFunction(&f, module, image.symbol), "cuModuleGetFunction");
  loaded.emplace(std::make_pair(ctx, &image), f);
  return f;
}

const EmbeddedParam* find_param(const EmbeddedImage& image, const char* name) {
  for (std::size_t i = 0; i < image.param_count; ++i)
    if (std::strcmp(image.params[i].name, name) == 0) return &image.params[i];
  return nullptr;
}

long long int_param(const EmbeddedImage& image, const char* name) {
  const EmbeddedParam* p = find_param(image, name);
  if (p == nullptr) throw error(describe(image) + " has no param '" + name + "'");
  if (p->text != nullptr)
    throw error("param '" + std::string(name) + "' of " + describe(image) + " is the string '" +
                p->text + "', not an int");
  return p->value;
}

}  // namespace tune::runtime
