// A program that ships the tuned tile_gemm as the committed winners' cubins (docs/embed.md):
// tune_embed_winners generated tile_embedded.hpp (the winners header's Bucket, Shape and
// select, plus function()/image()) and linked the images in. At run time it picks the bucket
// of each shape, loads that bucket's winner for the device's architecture once, launches it
// and checks a sample of C against the host. No compiler runs.
//
//   tile_example            run the shapes below on GPU 0 (prints one line per shape)
//   tile_example --images   list the embedded images and their SHA-256 (no GPU needed)
#include <cmath>
#include <cstdio>
#include <cstring>
#include <exception>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <tuner/core/base/hash.hpp>
#include <tuner/cuda/driver.hpp>
#include <tuner/cuda/harness.hpp>
#include <tuner/runtime/embedded.hpp>

#include "tile_embedded.hpp"

namespace w = tune_winners::tile_example::tile;

namespace {

int list_images() {
  const tune::runtime::EmbeddedKernel& k = w::embedded();
  for (std::size_t i = 0; i < k.count; ++i) {
    const tune::runtime::EmbeddedImage& im = k.images[i];
    // The digest of the bytes linked in, next to the one the cache entry recorded.
    const std::string digest =
        tune::sha256_hex(std::string_view(reinterpret_cast<const char*>(im.data), im.size));
    std::printf("%s %s %s %s %s %s\n", im.arch, im.bucket_name, im.config_id, digest.c_str(),
                im.sha256, im.cache_key);
  }
  return 0;
}

// Runs C = A x B for one shape through the embedded winner; false when C is wrong.
bool run_shape(int m, int n, int k, std::mt19937_64& rng) {
  const w::Bucket bucket = w::bucket_for(w::Shape{m, n, k});
  const tune::runtime::EmbeddedImage& image = w::image(bucket);
  const CUfunction f = w::function(bucket);
  // The launch geometry is the image's own params (a fallback image has its own too); the
  // winners header's dispatch names the same config, from the same record.
  const auto bm = static_cast<unsigned>(tune::runtime::int_param(image, "BM"));
  const auto bn = static_cast<unsigned>(tune::runtime::int_param(image, "BN"));
  const char* id = "";
  w::dispatch(tune::runtime::current_sm(), bucket, [&](auto winner) { id = winner.tune_id; });

  tune::DeviceBuffer<float> a(static_cast<std::int64_t>(m) * k);
  tune::DeviceBuffer<float> b(static_cast<std::int64_t>(k) * n);
  tune::DeviceBuffer<float> c(static_cast<std::int64_t>(m) * n);
  const std::vector<float> ha = a.fill_random(rng);
  const std::vector<float> hb = b.fill_random(rng);
  c.poison();
  CUdeviceptr pa = a.device_ptr(), pb = b.device_ptr(), pc = c.device_ptr();
  void* args[] = {&pa, &pb, &pc, &m, &n, &k};
  TUNE_CU(tune::driver().cuLaunchKernel(f, (static_cast<unsigned>(n) + bn - 1) / bn,
                                        (static_cast<unsigned>(m) + bm - 1) / bm, 1, bn, bm, 1, 0,
                                        nullptr, args, nullptr));
  const std::vector<float> out = c.download();
  double worst = 0;
  for (int i = 0; i < m; i += 37)
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int p = 0; p < k; ++p)
        s += static_cast<double>(ha[static_cast<std::size_t>(i) * k + p]) *
             hb[static_cast<std::size_t>(p) * n + j];
      const double got = out[static_cast<std::size_t>(i) * n + j];
      worst = std::isfinite(got) ? std::max(worst, std::abs(got - s) / (1 + std::abs(s))) : 1e30;
    }
  const bool ok = worst < 1e-4 && std::strcmp(id, image.config_id) == 0;
  std::printf("M=%d N=%d K=%d: bucket '%s', winner %s (%s, %s), max error %.2g: %s\n", m, n, k,
              image.bucket_name, image.config_id, image.arch, image.symbol, worst,
              ok ? "ok" : "WRONG");
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (argc > 1 && std::strcmp(argv[1], "--images") == 0) return list_images();
    tune::Context context(0);
    std::mt19937_64 rng(42);
    bool ok = true;
    ok = run_shape(512, 512, 512, rng) && ok;    // small
    ok = run_shape(256, 384, 200, rng) && ok;    // small, not a multiple of the tile
    ok = run_shape(2048, 1024, 512, rng) && ok;  // large
    std::printf("%s\n", ok ? "tile_example: ok" : "tile_example: FAILED");
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tile_example: error: %s\n", e.what());
    return 1;
  }
}
