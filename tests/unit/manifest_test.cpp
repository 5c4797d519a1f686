#include <tuner/core/build/manifest.hpp>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace tune {
namespace {

const char* full_manifest = R"({
  "schema_version": 1,
  "kernel": "gemm",
  "entry": "gemm_entry",
  "project_root": "/src",
  "build_dir": "/src/build",
  "sources": ["/src/kernels/gemm.cu"],
  "space": "/src/spaces/gemm.toml",
  "archs": ["sm_80", "sm_90"],
  "records": {"sm_80": "/src/records/gemm.sm_80.json", "sm_90": "/src/records/gemm.sm_90.json"},
  "include_directories": ["/src/kernels/include"],
  "definitions": ["USE_FAST=1"],
  "compile_options": ["-lineinfo"],
  "nvcc": "/usr/local/cuda/bin/nvcc",
  "compiler_launcher": ["srun", "--partition=cpu"],
  "host_compiler": "GNU 12.2.0",
  "cache_dir": "/src/build/tune/cache",
  "log_dir": "/src/build/tune/gemm",
  "compile_log": "/src/build/tune/compile.log",
  "runner": null,
  "tuner": "/src/build/tuner/tuner",
  "a_future_field": {"ignored": true}
})";

TEST(ManifestTest, ReadsEveryField) {
  Manifest m = Manifest::parse(full_manifest, "/b/tune/gemm/manifest.json").value();
  EXPECT_EQ(m.kernel, "gemm");
  EXPECT_EQ(m.entry, "gemm_entry");
  EXPECT_EQ(m.project_root, "/src");
  EXPECT_EQ(m.build_dir, "/src/build");
  ASSERT_EQ(m.sources.size(), 1u);
  EXPECT_EQ(m.sources[0], "/src/kernels/gemm.cu");
  EXPECT_EQ(m.space, "/src/spaces/gemm.toml");
  EXPECT_EQ(m.archs, (std::vector<std::string>{"sm_80", "sm_90"}));
  EXPECT_EQ(m.record_path("sm_90").value(), "/src/records/gemm.sm_90.json");
  EXPECT_EQ(m.include_directories, (std::vector<std::filesystem::path>{"/src/kernels/include"}));
  EXPECT_EQ(m.definitions, (std::vector<std::string>{"USE_FAST=1"}));
  EXPECT_EQ(m.compile_options, (std::vector<std::string>{"-lineinfo"}));
  EXPECT_EQ(m.nvcc, "/usr/local/cuda/bin/nvcc");
  EXPECT_EQ(m.compiler_launcher, (std::vector<std::string>{"srun", "--partition=cpu"}));
  EXPECT_EQ(m.host_compiler, "GNU 12.2.0");
  EXPECT_EQ(m.cache_dir, "/src/build/tune/cache");
  EXPECT_EQ(m.log_dir, "/src/build/tune/gemm");
  EXPECT_EQ(m.compile_log, "/src/build/tune/compile.log");
  EXPECT_FALSE(m.runner.has_value());
  EXPECT_EQ(m.tuner, std::filesystem::path("/src/build/tuner/tuner"));
  EXPECT_EQ(m.retune_command(), "cmake --build /src/build --target tune.gemm");
}

TEST(ManifestTest, ToJsonRoundTrips) {
  Manifest m = Manifest::parse(full_manifest, "/b/manifest.json").value();
  Manifest again = Manifest::parse(m.to_json().dump(), "/b/manifest.json").value();
  EXPECT_EQ(again.to_json(), m.to_json());
}

TEST(ManifestTest, DefaultsAndRelativePaths) {
  const char* text = R"({"schema_version": 1, "kernel": "k", "project_root": "..",
    "build_dir": "out", "sources": ["kernels/k.cu"], "space": "k.toml", "archs": ["sm_90"],
    "records": {"sm_90": "records/k.json"}, "nvcc": "/usr/local/cuda/bin/nvcc"})";
  Manifest m = Manifest::parse(text, "/p/sub/manifest.json").value();
  EXPECT_EQ(m.entry, "k");
  EXPECT_EQ(m.project_root, "/p");
  EXPECT_EQ(m.build_dir, "/p/out");
  EXPECT_EQ(m.sources[0], "/p/kernels/k.cu");
  EXPECT_EQ(m.space, "/p/k.toml");
  EXPECT_EQ(m.record_path("sm_90").value(), "/p/records/k.json");
  EXPECT_EQ(m.cache_dir, "/p/out/tune/cache");
  EXPECT_EQ(m.log_dir, "/p/out/tune/k");
  EXPECT_EQ(m.compile_log, "/p/out/tune/compile.log");
  EXPECT_TRUE(m.include_directories.empty());
  EXPECT_TRUE(m.compiler_launcher.empty());
  EXPECT_EQ(m.host_compiler, "");
}

std::string error_of(const std::string& text) {
  result<Manifest> r = Manifest::parse(text, "m.json");
  EXPECT_FALSE(r.has_value());
  return r ? std::string() : r.error().str();
}

nlohmann::json base() {
  return nlohmann::json::parse(full_manifest);
}

TEST(ManifestTest, MissingRequiredField) {
  auto j = base();
  j.erase("kernel");
  EXPECT_EQ(error_of(j.dump()), "m.json: error: missing required field 'kernel'");
  j = base();
  j.erase("nvcc");
  EXPECT_EQ(error_of(j.dump()), "m.json: error: missing required field 'nvcc'");
}

TEST(ManifestTest, WrongTypes) {
  auto j = base();
  j["archs"] = "sm_90";
  EXPECT_EQ(error_of(j.dump()),
            "m.json: error: field 'archs' must be an array of strings, got \"sm_90\"");
  j = base();
  j["archs"] = nlohmann::json::array();
  EXPECT_EQ(error_of(j.dump()), "m.json: error: field 'archs' must not be empty");
  j = base();
  j["sources"] = {1};
  EXPECT_EQ(error_of(j.dump()),
            "m.json: error: field 'sources' must be an array of strings, got element 1");
  j = base();
  j["compiler_launcher"] = "srun -p cpu";
  EXPECT_EQ(error_of(j.dump()),
            "m.json: error: field 'compiler_launcher' must be an array of strings, got \"srun -p "
            "cpu\"");
  j = base();
  j["compiler_launcher"] = {"srun", ""};
  EXPECT_EQ(error_of(j.dump()),
            "m.json: error: field 'compiler_launcher' must not hold an empty argument");
}

TEST(ManifestTest, SchemaVersion) {
  auto j = base();
  j["schema_version"] = 2;
  EXPECT_EQ(error_of(j.dump()),
            "m.json: error: schema_version 2 is not supported (this tuner reads 1): re-run the "
            "CMake configure step");
}

TEST(ManifestTest, RecordsMustMatchArchs) {
  auto j = base();
  j["records"].erase("sm_80");
  EXPECT_EQ(error_of(j.dump()),
            "m.json: error: field 'records' has no path for arch 'sm_80' listed in 'archs'");
  j = base();
  j["records"]["sm_70"] = "/src/x.json";
  EXPECT_EQ(error_of(j.dump()),
            "m.json: error: field 'records' has a path for arch 'sm_70', which 'archs' does not "
            "list");
}

TEST(ManifestTest, NotJson) {
  EXPECT_EQ(error_of("[1]"), "m.json: error: a manifest must be a JSON object");
  EXPECT_EQ(error_of("{").rfind("m.json: error: not valid JSON: ", 0), 0u);
}

TEST(ManifestTest, RecordPathOfAnUndeclaredArch) {
  Manifest m = Manifest::parse(full_manifest, "m.json").value();
  result<std::filesystem::path> p = m.record_path("sm_70");
  ASSERT_FALSE(p.has_value());
  EXPECT_EQ(p.error().str(),
            "m.json: error: arch 'sm_70' is not declared for kernel 'gemm' (declared: 'sm_80', "
            "'sm_90')");
}

TEST(ManifestTest, LoadNamesAMissingFile) {
  result<Manifest> r = Manifest::load("/nonexistent/manifest.json");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().str(), "/nonexistent/manifest.json: error: cannot read the manifest");
}

}  // namespace
}  // namespace tune
