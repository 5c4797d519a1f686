// The run-time half of record verification (tuner/runtime/record_check.hpp) and the embedded
// image lookup (tuner/runtime/embedded.hpp), which need no GPU.
#include <tuner/runtime/embedded.hpp>
#include <tuner/runtime/record_check.hpp>

#include <gtest/gtest.h>

namespace tune::runtime {
namespace {

Record record() {
  Record r;
  r.kernel = "tile";
  r.arch = "sm_90";
  r.context.device = "NVIDIA H200";
  r.context.driver = "580.159.04";
  return r;
}

TEST(RunTimeRecord, AppliesToItsKernelAndArchWithDriftAsWarnings) {
  result<RunTimeRecord> ok =
      check_for_run_time(record(), {"tile", "sm_90", "NVIDIA H100", "580.159.04"}, "tile.json");
  ASSERT_TRUE(ok);
  ASSERT_EQ(ok->warnings.size(), 1u);
  EXPECT_EQ(ok->warnings[0],
            "tuned on device 'NVIDIA H200', running on 'NVIDIA H100': timings may differ");
}

TEST(RunTimeRecord, AnotherKernelArchOrSchemaIsAnError) {
  result<RunTimeRecord> arch =
      check_for_run_time(record(), {"tile", "sm_80", std::nullopt, std::nullopt}, "tile.json");
  ASSERT_FALSE(arch);
  EXPECT_EQ(arch.error().str(),
            "tile.json: error: the record was tuned for sm_90, the device is sm_80: ship a "
            "record of sm_80");
  EXPECT_FALSE(
      check_for_run_time(record(), {"gemm", "sm_90", std::nullopt, std::nullopt}, "tile.json"));
  Record old = record();
  old.schema_version = 0;
  EXPECT_FALSE(check_for_run_time(old, {"tile", "sm_90", std::nullopt, std::nullopt}, "tile.json"));
}

TEST(EmbeddedImages, FindsTheDeviceImageOrSaysWhatIsRecorded) {
  const unsigned char bytes[] = {1, 2, 3};
  const EmbeddedImage images[] = {
      {90, 0, "sm_90", "small", "BM=16", "_Z1kILi16EEvv", "k0", "", bytes, 3, true},
      {90, 1, "sm_90", "large", "BM=32", "_Z1kILi32EEvv", "k1", "", bytes, 3, false},
  };
  EmbeddedKernel k{"tile", images, 2, MissingArch::error};
  EXPECT_EQ(find_image(k, 90, 1).config_id, std::string("BM=32"));
  try {
    find_image(k, 86, 0);
    FAIL() << "expected tune::error";
  } catch (const error& e) {
    EXPECT_STREQ(e.what(),
                 "kernel 'tile' has no winners for sm_86 (recorded: sm_90): tune it for "
                 "sm_86, or embed with FALLBACK first_incumbent");
  }
  k.missing_arch = MissingArch::first_incumbent;
  EXPECT_EQ(find_image(k, 86, 1).config_id, std::string("BM=16"));
  EXPECT_EQ(image_sha256(images[0]),
            "039058c6f2c0cb492c533b0a4d14ef77cc0f78abccced5287d84a1a2011cfb81");
}

}  // namespace
}  // namespace tune::runtime
