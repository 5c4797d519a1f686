#include <tuner/core/record/verify.hpp>

#include <fstream>

#include <gtest/gtest.h>
#include <unistd.h>

namespace tune {
namespace {

namespace fs = std::filesystem;

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

const char* space_toml = R"(schema = 1
kernel = "gemm"
prune = ["BM <= M / 8"]

[params]
BM = [64, 128]
LAYOUT = ["row", "col"]

[[buckets]]
name = "small"
shape = { M = 512 }

[[buckets]]
name = "large"
shape = { M = 4096 }
)";

// A project with a fake CUDA toolkit whose nvcc and ptxas only answer --version.
class VerifyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root = fs::temp_directory_path() / ("tune_verify_test." + std::to_string(::getpid()));
    fs::remove_all(root);
    write(root / "kernels/gemm.cu", "#include \"tile.cuh\"\n");
    write(root / "kernels/tile.cuh", "#pragma once\n");
    write(root / "spaces/gemm.toml", space_toml);
    for (const char* tool : {"nvcc", "ptxas"}) {
      write(root / "cuda/bin" / tool,
            "#!/bin/sh\necho 'Cuda compilation tools, release 13.0, V13.0.88'\n");
      fs::permissions(root / "cuda/bin" / tool, fs::perms::owner_all);
    }
    write(root / "build/tune/gemm/manifest.json", R"({"schema_version": 1, "kernel": "gemm",
      "project_root": "../../..", "build_dir": "build", "sources": ["kernels/gemm.cu"],
      "space": "spaces/gemm.toml", "archs": ["sm_90"], "records": {"sm_90": "records/gemm.json"},
      "nvcc": "cuda/bin/nvcc", "host_compiler": "GNU 12.2.0"})");
  }
  void TearDown() override { fs::remove_all(root); }
  fs::path root;
};

TEST_F(VerifyTest, WorkspaceFromManifestAndSpace) {
  KernelBuild b = load_kernel_build(root / "build/tune/gemm/manifest.json").value();
  EXPECT_EQ(b.manifest.project_root, root);
  Workspace w =
      current_workspace(b.manifest, b.space, "sm_90", "nvcc 13.0.88, ptxas 13.0.88").value();
  EXPECT_EQ(w.kernel, "gemm");
  EXPECT_EQ(w.arch, "sm_90");
  EXPECT_EQ(w.source_hash, source_hash(b.manifest));
  EXPECT_EQ(w.space_hash, b.space.space_hash());
  EXPECT_EQ(w.context.host_compiler, "GNU 12.2.0");
  EXPECT_FALSE(w.context.device.has_value());
  EXPECT_EQ(w.retune_command, "cmake --build " + (root / "build").string() + " --target tune.gemm");
  ASSERT_EQ(w.buckets.size(), 2u);
  EXPECT_EQ(w.buckets[0].name, "small");
  EXPECT_EQ(w.buckets[0].config_ids,
            (std::vector<std::string>{R"(BM=64,LAYOUT="row")", R"(BM=64,LAYOUT="col")"}));
  EXPECT_EQ(w.buckets[0].pruned_space_hash,
            Space::pruned_space_hash(b.space.configs(b.space.buckets()[0]).value()));
  EXPECT_EQ(w.buckets[1].config_ids.size(), 4u);
}

TEST_F(VerifyTest, PinnedRecordVerifiesUntilTheHeaderChanges) {
  KernelBuild b = load_kernel_build(root / "build/tune/gemm/manifest.json").value();
  fs::path path = b.manifest.record_path("sm_90").value();
  result<Verification> missing = verify_kernel_record(b, "sm_90", path);
  ASSERT_TRUE(missing.has_value());
  EXPECT_EQ(missing->state, RecordState::missing);

  CacheKeyer keyer(b.manifest, b.space.params_as());
  EXPECT_EQ(keyer.toolchain(), "nvcc 13.0.88, ptxas 13.0.88");
  Workspace w = current_workspace(b.manifest, b.space, "sm_90", keyer.toolchain()).value();
  Record r(w);
  for (const auto& bucket : w.buckets) {
    RecordEntry e;
    e.bucket = bucket.name;
    e.pruned_space_hash = bucket.pruned_space_hash;
    e.config = Config{{"BM", 64}, {"LAYOUT", "col"}};
    CacheKey k = keyer.key(e.config, "sm_90");
    e.cache_key = L2Key{k.schema, k.digest};
    e.source = "pinned";
    r.insert(e);
  }
  r.save(path);
  result<Verification> fresh = verify_kernel_record(b, "sm_90", path);
  ASSERT_TRUE(fresh.has_value());
  EXPECT_EQ(fresh->state, RecordState::fresh);
  EXPECT_TRUE(fresh->warnings.empty());

  write(root / "kernels/tile.cuh", "#pragma once\n// edited\n");
  result<Verification> stale = verify_kernel_record(b, "sm_90", path);
  ASSERT_TRUE(stale.has_value());
  EXPECT_EQ(stale->state, RecordState::stale);
  ASSERT_EQ(stale->errors.size(), 2u);
  EXPECT_EQ(stale->errors[0].rfind("entry 'large' cache_key: record has 'k1:", 0), 0u);
  EXPECT_EQ(stale->errors[1].rfind("entry 'small' cache_key: record has 'k1:", 0), 0u);
}

TEST(VerifyHelpersTest, FindConfigTakesQuotedOrPlainStrings) {
  std::vector<Config> configs{Config{{"BM", 64}, {"LAYOUT", "row"}},
                              Config{{"BM", 64}, {"LAYOUT", "col"}}};
  EXPECT_EQ(find_config(configs, R"(BM=64,LAYOUT="col")"), &configs[1]);
  EXPECT_EQ(find_config(configs, "BM=64,LAYOUT=row"), &configs[0]);
  EXPECT_EQ(find_config(configs, "LAYOUT=row,BM=64"), nullptr);
  EXPECT_EQ(find_config(configs, "BM=128,LAYOUT=row"), nullptr);
}

TEST(VerifyHelpersTest, DisplayPathIsProjectRelative) {
  Manifest m;
  m.project_root = "/src";
  EXPECT_EQ(display_path(m, "/src/records/gemm.json"), "records/gemm.json");
  EXPECT_EQ(display_path(m, "/elsewhere/gemm.json"), "/elsewhere/gemm.json");
  EXPECT_EQ(display_path(m, "/srcx/gemm.json"), "/srcx/gemm.json");
}

TEST(VerifyHelpersTest, SelectArchs) {
  Manifest m;
  m.kernel = "gemm";
  m.archs = {"sm_80", "sm_90"};
  m.records = {{"sm_80", "/a.json"}, {"sm_90", "/b.json"}};
  EXPECT_EQ(select_archs(m, "").value(), m.archs);
  EXPECT_EQ(select_archs(m, "sm_90").value(), std::vector<std::string>{"sm_90"});
  EXPECT_EQ(select_archs(m, "sm_70").error().message,
            "arch 'sm_70' is not declared for kernel 'gemm' (declared: 'sm_80', 'sm_90')");
}

}  // namespace
}  // namespace tune
