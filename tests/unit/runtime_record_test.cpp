// The run-time half of record verification (tuner/runtime/record_check.hpp), which needs no GPU.
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

}  // namespace
}  // namespace tune::runtime
