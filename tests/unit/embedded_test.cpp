// The runtime a product links (tuner/runtime/embedded.hpp): the image lookup, the params of
// every image, and the driver's absence, without a GPU. Built as C++17 and linked with
// tune::runtime alone (tests/CMakeLists.txt): nothing of tune_core may be needed.
#include <tuner/runtime/embedded.hpp>

#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

namespace tune::runtime {
namespace {

const unsigned char bytes[] = {1, 2, 3};
const EmbeddedParam small_params[] = {{"BM", 16, nullptr}, {"LAYOUT", 0, "row"}};
const EmbeddedParam large_params[] = {{"BM", 32, nullptr}, {"LAYOUT", 0, "col"}};
const EmbeddedParam fallback_params[] = {{"BM", 64, nullptr}, {"LAYOUT", 0, "row"}};
const EmbeddedImage images[] = {
    {90, 0, "sm_90", "small", "BM=16,LAYOUT=\"row\"", "_Z1kILi16EEvv", "k0", "", bytes, 3, false,
     small_params, 2},
    {90, 1, "sm_90", "large", "BM=32,LAYOUT=\"col\"", "_Z1kILi32EEvv", "k1", "", bytes, 3, false,
     large_params, 2},
    {-1, 0, "sm_90", "(fallback)", "BM=64,LAYOUT=\"row\"", "_Z1kILi64EEvv", "k2", "", bytes, 3,
     true, fallback_params, 2},
};

std::string message(int sm, int bucket, MissingArch missing) {
  const EmbeddedKernel k{"tile", images, 3, missing};
  try {
    find_image(k, sm, bucket);
  } catch (const error& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(EmbeddedImages, FindsTheDeviceImageOrSaysWhatIsRecorded) {
  const EmbeddedKernel k{"tile", images, 3, MissingArch::error};
  EXPECT_EQ(std::string(find_image(k, 90, 1).config_id), "BM=32,LAYOUT=\"col\"");
  EXPECT_EQ(message(86, 0, MissingArch::error),
            "kernel 'tile' has no winners for sm_86 (recorded: sm_90): tune it for sm_86, or "
            "embed with FALLBACK first_incumbent");
  EXPECT_EQ(message(90, 7, MissingArch::error),
            "kernel 'tile' has no embedded image of bucket 7 for sm_90");
}

TEST(EmbeddedImages, TheFallbackImageCarriesItsOwnParams) {
  const EmbeddedKernel k{"tile", images, 3, MissingArch::first_incumbent};
  const EmbeddedImage& fallback = find_image(k, 86, 1);
  EXPECT_EQ(std::string(fallback.config_id), "BM=64,LAYOUT=\"row\"");
  // Its launch geometry is its own, not the sm_90 winner's of the bucket asked for (BM=32).
  EXPECT_EQ(int_param(fallback, "BM"), 64);
  EXPECT_EQ(std::string(find_param(fallback, "LAYOUT")->text), "row");
  EXPECT_EQ(find_param(fallback, "BN"), nullptr);
}

TEST(EmbeddedImages, AMissingOrStringParamIsAnError) {
  try {
    int_param(images[0], "BN");
    FAIL() << "expected tune::runtime::error";
  } catch (const error& e) {
    EXPECT_STREQ(e.what(),
                 "config 'BM=16,LAYOUT=\"row\"' (sm_90, bucket 'small') has no param 'BN'");
  }
  try {
    int_param(images[0], "LAYOUT");
    FAIL() << "expected tune::runtime::error";
  } catch (const error& e) {
    EXPECT_STREQ(e.what(),
                 "param 'LAYOUT' of config 'BM=16,LAYOUT=\"row\"' (sm_90, bucket 'small') is the "
                 "string 'row', not an int");
  }
}

TEST(EmbeddedImages, WithoutADriverEveryCallSaysSo) {
  // The driver is looked for once per process: this test is the only one that asks for it.
  ::setenv("TUNE_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
  for (int i = 0; i < 2; ++i) {
    try {
      load_function(images[0]);
      FAIL() << "expected tune::runtime::error";
    } catch (const error& e) {
      EXPECT_STREQ(e.what(),
                   "no CUDA driver: /nonexistent/libcuda.so.1 not found (is the NVIDIA driver "
                   "installed?)");
      EXPECT_EQ(e.code(), CUDA_SUCCESS);
    }
  }
  EXPECT_THROW(current_sm(), error);
}

}  // namespace
}  // namespace tune::runtime
