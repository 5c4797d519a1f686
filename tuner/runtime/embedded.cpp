#include <tuner/runtime/embedded.hpp>

#include <map>
#include <mutex>
#include <string_view>
#include <utility>

#include <fmt/core.h>

#include <tuner/core/base/hash.hpp>
#include <tuner/core/base/result.hpp>
#include <tuner/cuda/driver.hpp>

namespace tune::runtime {

int current_sm() {
  const DriverApi& d = driver();
  CUcontext ctx = nullptr;
  TUNE_CU(d.cuCtxGetCurrent(&ctx));
  if (ctx == nullptr)
    throw error(
        "no current CUDA context: make one current (cudaSetDevice, or a "
        "tune::Context) before asking for an embedded winner");
  CUdevice dev = 0;
  TUNE_CU(d.cuCtxGetDevice(&dev));
  int major = 0;
  int minor = 0;
  TUNE_CU(d.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
  TUNE_CU(d.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
  return major * 10 + minor;
}

const EmbeddedImage& find_image(const EmbeddedKernel& kernel, int sm, int bucket) {
  const EmbeddedImage* incumbent = nullptr;
  std::string recorded;
  for (std::size_t i = 0; i < kernel.count; ++i) {
    const EmbeddedImage& im = kernel.images[i];
    if (im.sm == sm && im.bucket == bucket) return im;
    // The fallback: the first architecture's incumbent (a winner, or the extra image).
    if (im.incumbent && incumbent == nullptr && std::string_view(im.arch) == kernel.images[0].arch)
      incumbent = &im;
    if (im.sm >= 0 && recorded.find(im.arch) == std::string::npos)
      recorded += (recorded.empty() ? "" : ", ") + std::string(im.arch);
  }
  bool have_sm = false;
  for (std::size_t i = 0; i < kernel.count; ++i)
    have_sm = have_sm || kernel.images[i].sm == sm;
  if (have_sm)
    throw error(fmt::format("kernel '{}' has no embedded image of bucket {} for sm_{}",
                            kernel.kernel, bucket, sm));
  if (kernel.missing_arch == MissingArch::first_incumbent && incumbent != nullptr)
    return *incumbent;
  throw error(
      fmt::format("kernel '{}' has no winners for sm_{} (recorded: {}): tune it for sm_{}, "
                  "or embed with FALLBACK first_incumbent",
                  kernel.kernel, sm, recorded.empty() ? "none" : recorded, sm));
}

CUfunction load_function(const EmbeddedImage& image) {
  const DriverApi& d = driver();
  CUcontext ctx = nullptr;
  TUNE_CU(d.cuCtxGetCurrent(&ctx));
  if (ctx == nullptr) throw error("no current CUDA context: make one current first");
  // Modules live as long as the process: a context's modules go with it, and images are few.
  static std::mutex mutex;
  static std::map<std::pair<CUcontext, const EmbeddedImage*>, CUfunction> loaded;
  std::lock_guard lock(mutex);
  auto it = loaded.find({ctx, &image});
  if (it != loaded.end()) return it->second;
  CUmodule module = nullptr;
  TUNE_CU(d.cuModuleLoadData(&module, image.data));
  CUfunction f = nullptr;
  TUNE_CU(d.cuModuleGetFunction(&f, module, image.symbol));
  loaded.emplace(std::make_pair(ctx, &image), f);
  return f;
}

std::string image_sha256(const EmbeddedImage& image) {
  return sha256_hex(std::string_view(reinterpret_cast<const char*>(image.data), image.size));
}

}  // namespace tune::runtime
