// Embedded winners at run time (docs/embed.md): the cubins `tune_embed_winners` linked into a
// program, one per recorded architecture and bucket, loaded with cuModuleLoadData once per
// context. No compiler runs: the images are the very bytes the tuner timed.
//
// This is all a product links of tune (the target tune::runtime): the image table, the lookup
// by architecture and bucket, and the module load. It is C++17 and depends on nothing but
// <cuda.h> for its types and the C library's dlopen: the driver is opened at run time, so a
// program that embeds winners starts on a machine without a GPU and says so only when it asks
// for a function. Nothing of the tuner (tune::core: C++20, fmt, OpenSSL, curl, TOML++) comes
// with it.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <stdexcept>
#include <string>

namespace tune::runtime {

/// What every function here throws: no driver, no current context, a device without winners,
/// a driver that refuses an image (`code()` is then the CUresult, else CUDA_SUCCESS).
class error : public std::runtime_error {
 public:
  explicit error(const std::string& message, CUresult code = CUDA_SUCCESS)
      : std::runtime_error(message), code_(code) {}
  CUresult code() const noexcept { return code_; }

 private:
  CUresult code_;
};

/// One param of an image's config: an int (`text` null) or a string (`text`, `value` 0).
struct EmbeddedParam {
  const char* name = "";
  long long value = 0;
  const char* text = nullptr;
};

/// One embedded cubin: the winner of one bucket on one architecture, or the fallback image.
struct EmbeddedImage {
  int sm = 0;                           ///< compute capability, 90 for sm_90; -1: fallback only
  int bucket = 0;                       ///< the bucket's index in the space (the Bucket enum)
  const char* arch = "";                ///< `sm_90`
  const char* bucket_name = "";         ///< as the space spells it
  const char* config_id = "";           ///< the image's config
  const char* symbol = "";              ///< the function's name in the cubin
  const char* cache_key = "";           ///< the kernel cache key the bytes were found by
  const char* sha256 = "";              ///< of the bytes, as the cache entry recorded it
  const unsigned char* data = nullptr;  ///< the cubin
  std::size_t size = 0;
  bool incumbent = false;  ///< the space's first `require` config (the fallback image)
  const EmbeddedParam* params = nullptr;  ///< the config's params, by name
  std::size_t param_count = 0;
};

/// What to do on a device whose architecture has no record.
enum class MissingArch {
  error,            ///< throw tune::runtime::error naming the device's and the recorded archs
  first_incumbent,  ///< load the first recorded architecture's incumbent image instead
};

/// Every embedded image of one kernel.
struct EmbeddedKernel {
  const char* kernel = "";
  const EmbeddedImage* images = nullptr;
  std::size_t count = 0;
  MissingArch missing_arch = MissingArch::error;
};

/// The compute capability of the current context's device (90 for 9.0). Throws
/// tune::runtime::error without a driver, a device or a current context.
int current_sm();

/// The image of `bucket` for `sm`, or (by `kernel.missing_arch`) the fallback image; throws
/// tune::runtime::error `kernel 'k' has no winners for sm_86 (recorded: sm_90): tune it for
/// sm_86, or embed with FALLBACK first_incumbent`.
const EmbeddedImage& find_image(const EmbeddedKernel& kernel, int sm, int bucket);

/// The function of `image`, its module loaded once per context (later calls and other threads
/// get the same module). Throws tune::runtime::error when the driver refuses the image.
CUfunction load_function(const EmbeddedImage& image);

/// The param `name` of `image`'s config, or nullptr when the config has none of that name.
/// The launch geometry of whichever image `find_image` chose (a fallback image's config is not
/// the winner's) comes from here.
const EmbeddedParam* find_param(const EmbeddedImage& image, const char* name);

/// The int param `name` of `image`'s config; throws tune::runtime::error `image 'BLOCK=256' of
/// kernel ... has no int param 'TILE'` when it has none or a string of that name.
long long int_param(const EmbeddedImage& image, const char* name);

}  // namespace tune::runtime
