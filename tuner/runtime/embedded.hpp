// Embedded winners at run time (docs/embed.md): the cubins `tune_embed_winners` linked into a
// program, one per recorded architecture and bucket, loaded with cuModuleLoadData once per
// context. No compiler runs: the images are the very bytes the tuner timed. The driver is
// reached through tune::driver() (dlopen), so a program that embeds winners starts on a
// machine without a GPU and says so only when it asks for a function.
#pragma once

#include <cuda.h>

#include <cstddef>
#include <optional>
#include <string>

#include <tuner/core/base/result.hpp>

namespace tune::runtime {

/// One embedded cubin: the winner of one bucket on one architecture.
struct EmbeddedImage {
  int sm = 0;                           ///< compute capability, 90 for sm_90
  int bucket = 0;                       ///< the bucket's index in the space (the Bucket enum)
  const char* arch = "";                ///< `sm_90`
  const char* bucket_name = "";         ///< as the space spells it
  const char* config_id = "";           ///< the winning config
  const char* symbol = "";              ///< the function's name in the cubin
  const char* cache_key = "";           ///< the kernel cache key the bytes were found by
  const char* sha256 = "";              ///< of the bytes, as the cache entry recorded it
  const unsigned char* data = nullptr;  ///< the cubin
  std::size_t size = 0;
  bool incumbent = false;  ///< the space's first `require` config (the fallback image)
};

/// What to do on a device whose architecture has no record.
enum class MissingArch {
  error,            ///< throw tune::error naming the device's and the recorded archs
  first_incumbent,  ///< load the first recorded architecture's incumbent image instead
};

/// Every embedded image of one kernel.
struct EmbeddedKernel {
  const char* kernel = "";
  const EmbeddedImage* images = nullptr;
  std::size_t count = 0;
  MissingArch missing_arch = MissingArch::error;
};

/// The compute capability of the current context's device (90 for 9.0). Throws tune::error
/// without a driver, a device or a current context.
int current_sm();

/// The image of `bucket` for `sm`, or (by `kernel.missing_arch`) the fallback image; throws
/// tune::error `kernel 'k' has no winners for sm_86 (recorded: sm_90): tune it for sm_86, or
/// embed with FALLBACK first_incumbent`.
const EmbeddedImage& find_image(const EmbeddedKernel& kernel, int sm, int bucket);

/// The function of `image`, its module loaded once per context (later calls and other threads
/// get the same module). Throws tune::cuda_error when the driver refuses the image.
CUfunction load_function(const EmbeddedImage& image);

/// The SHA-256 (lowercase hex) of an image's bytes, to compare with `sha256`.
std::string image_sha256(const EmbeddedImage& image);

}  // namespace tune::runtime
