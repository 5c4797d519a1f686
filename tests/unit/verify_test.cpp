#include <tuner/core/record/verify.hpp>

#include <fstream>

#include <tuner/core/build/kernel_cache.hpp>

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

// A record of `b` (sm_90) with `config` pinned in every bucket, keyed by `keyer`.
Record pin_every_bucket(const KernelBuild& b, const CacheKeyer& keyer, const Config& config) {
  Workspace w = current_workspace(b.manifest, b.space, "sm_90", keyer.toolchain()).value();
  Record r(w);
  for (const auto& bucket : w.buckets) {
    RecordEntry e;
    e.bucket = bucket.name;
    e.pruned_space_hash = bucket.pruned_space_hash;
    e.config = config;
    CacheKey k = keyer.key(e.config, "sm_90");
    e.cache_key = L2Key{k.schema, k.digest};
    e.source = "pinned";
    r.insert(e);
  }
  return r;
}

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
  pin_every_bucket(b, keyer, Config{{"BM", 64}, {"LAYOUT", "col"}}).save(path);
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
  // What changed, in words: the record's identity names the header, with no cache entry of the
  // recorded keys here (a CI gate's fresh tree); and the two ways on.
  const std::string m = b.manifest.path.string();
  EXPECT_EQ(stale->changes,
            (std::vector<std::string>{
                "the cache key of entries 'large', 'small' changed: 'kernels/tile.cuh' changed"}));
  // A record written before records kept their identity: what the key reads, and the command
  // that lists it.
  {
    Record old = Record::load(path).value();
    old.identity.reset();
    old.save(path);
    EXPECT_EQ(verify_kernel_record(b, "sm_90", path)->changes,
              (std::vector<std::string>{
                  "the cache key of entries 'large', 'small' changed: a header it includes "
                  "('kernels/tile.cuh'), a compile flag or the params changed: `tuner key "
                  "--explain --manifest " +
                  m + " --config 'BM=64,LAYOUT=\"col\"'` lists what the key reads"}));
  }
  EXPECT_EQ(
      stale->pin_commands,
      (std::vector<std::string>{
          "tuner record set --manifest " + m + " --bucket small --config 'BM=64,LAYOUT=\"col\"'",
          "tuner record set --manifest " + m + " --bucket large --config 'BM=64,LAYOUT=\"col\"'"}));
  const std::string report = stale->report("records/gemm.json");
  EXPECT_NE(report.find("records/gemm.json: note: re-tune with: cmake --build "),
            std::string::npos);
  EXPECT_NE(report.find("records/gemm.json: note: or, without a GPU, pin a config instead: "
                        "tuner record set --manifest "),
            std::string::npos);
  // A missing record: how to pin each bucket (the space has no require: its first config).
  std::filesystem::remove(path);
  missing = verify_kernel_record(b, "sm_90", path);
  EXPECT_EQ(missing->pin_commands.size(), 2u);
  EXPECT_TRUE(missing->changes.empty());
}

TEST_F(VerifyTest, StaleRecordsNameWhatChanged) {
  KernelBuild b = load_kernel_build(root / "build/tune/gemm/manifest.json").value();
  const fs::path path = b.manifest.record_path("sm_90").value();
  CacheKeyer keyer(b.manifest, b.space);
  const Config config{{"BM", 64}, {"LAYOUT", "row"}};
  pin_every_bucket(b, keyer, config).save(path);
  // The entry warm left for the recorded key: its argument vector and files.
  CacheEntry c;
  c.key = keyer.key(config, "sm_90").digest;
  c.status = CacheStatus::failed;
  c.reason = "not compiled in this test";
  c.arch = "sm_90";
  c.config_id = config.id();
  c.argv = keyer.keyed_argv(config, "sm_90");
  for (const KeyedFile& f : keyer.files())
    c.dependencies.push_back(f.name);
  KernelCache(effective_cache_dir(b.manifest.cache_dir)).store(c, std::nullopt);
  ASSERT_EQ(verify_kernel_record(b, "sm_90", path)->state, RecordState::fresh);

  // What verify says changed, after an edit (both entries move for the same reason).
  auto changes_after = [&](const KernelBuild& build) {
    return verify_kernel_record(build, "sm_90", path).value().changes;
  };
  const std::string moved = "the cache key of entries 'large', 'small' changed: ";
  // A definition: the identity names it.
  KernelBuild defined = b;
  defined.manifest.definitions = {"FAST=1"};
  EXPECT_EQ(changes_after(defined), std::vector<std::string>{moved + "'-DFAST=1' is new"});
  // A header: exactly the one that changed.
  write(root / "kernels/tile.cuh", "#pragma once\n// edited\n");
  EXPECT_EQ(changes_after(b), std::vector<std::string>{moved + "'kernels/tile.cuh' changed"});
  // A new include: the includer changed, and the new file is named.
  write(root / "kernels/more.cuh", "#pragma once\n");
  write(root / "kernels/tile.cuh", "#pragma once\n#include \"more.cuh\"\n");
  EXPECT_EQ(changes_after(b), std::vector<std::string>{
                                  moved + "'kernels/tile.cuh' changed, 'kernels/more.cuh' is newly "
                                          "included"});
  // A record without its identity (written before it): the kernel cache's entry of the
  // recorded key names what changed.
  {
    Record old = Record::load(path).value();
    old.identity.reset();
    old.save(path);
    EXPECT_EQ(changes_after(defined),
              std::vector<std::string>{moved + "its compile command changed: '-DFAST=1' is new"});
    EXPECT_EQ(changes_after(b), std::vector<std::string>{moved + "the files it includes changed: "
                                                                 "'kernels/more.cuh' is new"});
    write(root / "kernels/tile.cuh", "#pragma once\n// edited\n");
    EXPECT_EQ(changes_after(b),
              std::vector<std::string>{moved + "a header it includes changed (it reads "
                                               "'kernels/tile.cuh')"});
  }
  write(root / "kernels/tile.cuh", "#pragma once\n");
  pin_every_bucket(b, CacheKeyer(b.manifest, b.space), config).save(path);  // its identity again
  // The source: named once, and the keys point at it.
  write(root / "kernels/gemm.cu", "#include \"tile.cuh\"\n// edited\n");
  EXPECT_EQ(changes_after(b),
            (std::vector<std::string>{
                "the kernel's source changed since the record was tuned: 'kernels/gemm.cu'",
                moved + "its source changed (above)"}));
  EXPECT_EQ(verify_kernel_record(b, "sm_90", path)->pin_commands.size(), 2u);
}

TEST(VerifyHelpersTest, FindConfigTakesQuotedOrPlainStringsInAnyOrder) {
  std::vector<Config> configs{Config{{"BM", 64}, {"LAYOUT", "row"}},
                              Config{{"BM", 64}, {"LAYOUT", "col"}}};
  EXPECT_EQ(find_config(configs, R"(BM=64,LAYOUT="col")"), &configs[1]);
  EXPECT_EQ(find_config(configs, "BM=64,LAYOUT=row"), &configs[0]);
  // The params of an id are a set: written in another order they name the same config.
  EXPECT_EQ(find_config(configs, "LAYOUT=row,BM=64"), &configs[0]);
  EXPECT_EQ(find_config(configs, "BM=128,LAYOUT=row"), nullptr);
  EXPECT_EQ(find_config(configs, "BM=64"), nullptr);
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
