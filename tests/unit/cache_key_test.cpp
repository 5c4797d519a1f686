#include <tuner/core/build/cache_key.hpp>

#include <algorithm>
#include <fstream>

#include <gtest/gtest.h>
#include <unistd.h>

#include <tuner/core/base/hash.hpp>
#include <tuner/core/build/toolchain.hpp>

namespace tune {
namespace {

namespace fs = std::filesystem;

const char* fingerprint = "nvcc 13.0.88, ptxas 13.0.88";

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

// A kernel project in a fresh temporary directory, and a fake CUDA toolkit beside it.
class CacheKeyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static int n = 0;
    top = fs::temp_directory_path() /
          ("tune_cache_key_test." + std::to_string(::getpid()) + "." + std::to_string(n++));
    fs::remove_all(top);
    root = top / "src";
    toolkit = top / "cuda";
    make_project(root);
    write(toolkit / "include" / "cuda_fp16.h", "// toolkit header\n");
    write(toolkit / "bin" / "nvcc", "");
  }
  void TearDown() override { fs::remove_all(top); }

  static void make_project(const fs::path& r) {
    write(r / "kernels" / "gemm.cu",
          "#include \"local.cuh\"\n"
          "  #  include <tile.cuh>\n"
          "#include <cuda_fp16.h>\n"
          "#include <cuda_runtime.h>\n"
          "#include <stddef.h>\n"
          "extern \"C\" __global__ void gemm() {}\n");
    write(r / "kernels" / "local.cuh", "#pragma once\n");
    write(r / "kernels" / "include" / "tile.cuh", "#pragma once\n#include \"detail/a.cuh\"\n");
    write(r / "kernels" / "include" / "detail" / "a.cuh",
          "#pragma once\n#include \"../tile.cuh\"\n");
    write(r / "kernels" / "include" / "unused.cuh", "#pragma once\n");
  }

  Manifest manifest_for(const fs::path& r, const fs::path& build) const {
    Manifest m;
    m.kernel = "gemm";
    m.entry = "gemm";
    m.project_root = r;
    m.build_dir = build;
    m.sources = {r / "kernels" / "gemm.cu"};
    m.space = r / "spaces" / "gemm.toml";
    m.archs = {"sm_90"};
    m.records = {{"sm_90", r / "records" / "gemm.json"}};
    m.include_directories = {r / "kernels" / "include", toolkit / "include"};
    m.definitions = {"USE_FAST=1"};
    m.compile_options = {"-lineinfo"};
    m.nvcc = toolkit / "bin" / "nvcc";
    m.host_compiler = "GNU 12.2.0";
    m.cache_dir = build / "tune" / "cache";
    m.log_dir = build / "tune" / "gemm";
    m.compile_log = build / "tune" / "compile.log";
    return m;
  }
  Manifest manifest() const { return manifest_for(root, root / "build"); }

  std::string key(const Manifest& m, const Config& c = config, std::string_view arch = "sm_90",
                  ParamsAs as = ParamsAs::defines) const {
    return CacheKeyer(m, as, fingerprint).key(c, arch).digest;
  }

  static inline const Config config{{"BM", 64}, {"LAYOUT", "row"}};
  fs::path top, root, toolkit;
};

TEST_F(CacheKeyTest, ArgvIsTheDocumentedVector) {
  Manifest m = manifest();
  CacheKeyer keyer(m, ParamsAs::defines, fingerprint);
  CompileCommand c = keyer.compile_command(config, "sm_90", root / "build/tune/cache/x.cubin");
  std::vector<std::string> expected{(toolkit / "bin/nvcc").string(),
                                    "-cubin",
                                    "-arch=sm_90",
                                    "-std=c++17",
                                    "-O3",
                                    "-Xptxas=-v",
                                    "-lineinfo",
                                    "-DUSE_FAST=1",
                                    "-I" + (root / "kernels/include").string(),
                                    "-I" + (toolkit / "include").string(),
                                    "-DBM=64",
                                    "-DLAYOUT=row",
                                    "-o",
                                    (root / "build/tune/cache/x.cubin").string(),
                                    (root / "kernels/gemm.cu").string()};
  EXPECT_EQ(c.argv, expected);
  EXPECT_FALSE(c.params_header.has_value());
  EXPECT_EQ(
      keyer.keyed_argv(config, "sm_90"),
      (std::vector<std::string>{"nvcc", "-cubin", "-arch=sm_90", "-std=c++17", "-O3", "-Xptxas=-v",
                                "-lineinfo", "-DUSE_FAST=1", "-Ikernels/include", "-DBM=64",
                                "-DLAYOUT=row", "-o", "<out>", "kernels/gemm.cu"}));
}

TEST_F(CacheKeyTest, ACompileOptionNamingTheStandardReplacesCxx17) {
  for (const std::vector<std::string>& options :
       {std::vector<std::string>{"-std=c++20", "-lineinfo"},
        std::vector<std::string>{"--std", "c++20"}, std::vector<std::string>{"--std=c++20"}}) {
    Manifest m = manifest();
    m.compile_options = options;
    const std::vector<std::string> argv =
        CacheKeyer(m, ParamsAs::defines, fingerprint).keyed_argv(config, "sm_90");
    EXPECT_EQ(std::count(argv.begin(), argv.end(), "-std=c++17"), 0) << options[0];
    EXPECT_EQ(std::count(argv.begin(), argv.end(), options[0]), 1) << options[0];
    EXPECT_NE(key(m), key(manifest())) << options[0];
  }
  // Options that only look alike keep the default.
  Manifest m = manifest();
  m.compile_options = {"-stdlib-like", "-DSTD=1"};
  const std::vector<std::string> argv =
      CacheKeyer(m, ParamsAs::defines, fingerprint).keyed_argv(config, "sm_90");
  EXPECT_EQ(std::count(argv.begin(), argv.end(), "-std=c++17"), 1);
}

TEST_F(CacheKeyTest, ConstexprParamsComeThroughAGeneratedHeader) {
  Manifest m = manifest();
  CacheKeyer keyer(m, ParamsAs::constexpr_header, fingerprint);
  Config c{{"BM", 64}, {"BIG", std::int64_t{5000000000}}, {"LAYOUT", "row"}};
  CompileCommand cmd = keyer.compile_command(c, "sm_90", "/tmp/out.cubin");
  fs::path header = m.log_dir / "params" / (hex16(fnv1a64(c.id())) + ".hpp");
  ASSERT_EQ(cmd.params_header, header);
  EXPECT_EQ(cmd.params_header_text,
            "// Generated by tune for config BIG=5000000000,BM=64,LAYOUT=\"row\", included first "
            "(-include). Do not edit.\n"
            "#pragma once\n"
            "constexpr long long BIG = 5000000000LL;\n"
            "constexpr int BM = 64;\n"
            "constexpr const char LAYOUT[] = \"row\";\n");
  std::vector<std::string> tail(cmd.argv.end() - 5, cmd.argv.end());
  EXPECT_EQ(tail, (std::vector<std::string>{"-include", header.string(), "-o", "/tmp/out.cubin",
                                            (root / "kernels/gemm.cu").string()}));
  std::vector<std::string> keyed = keyer.keyed_argv(c, "sm_90");
  EXPECT_EQ(keyed[keyed.size() - 4], "<params.hpp>");
  // The header text is keyed, and differs from the -D form.
  EXPECT_NE(key(m, c, "sm_90", ParamsAs::constexpr_header), key(m, c, "sm_90"));
  EXPECT_NE(key(m, c, "sm_90", ParamsAs::constexpr_header),
            key(m, Config{{"BM", 128}, {"BIG", 1}, {"LAYOUT", "row"}}, "sm_90",
                ParamsAs::constexpr_header));
}

TEST_F(CacheKeyTest, ScansProjectHeadersOnly) {
  CacheKeyer keyer(manifest(), ParamsAs::defines, fingerprint);
  std::vector<std::string> names;
  for (const auto& f : keyer.files())
    names.push_back(f.name);
  // local.cuh through the source's own directory (named from the project root), tile.cuh through
  // the include directory, detail/a.cuh through tile.cuh's directory (named from the include
  // directory); the toolkit header, the unresolvable and system headers and unused.cuh are out.
  EXPECT_EQ(names, (std::vector<std::string>{"kernels/gemm.cu", "detail/a.cuh", "kernels/local.cuh",
                                             "tile.cuh"}));
  EXPECT_EQ(keyer.files()[3].path, root / "kernels/include/tile.cuh");
  EXPECT_EQ(keyer.files()[3].sha256, sha256_hex("#pragma once\n#include \"detail/a.cuh\"\n"));
  CacheKey k = keyer.key(config, "sm_90");
  EXPECT_EQ(k.schema, "k1");
  EXPECT_EQ(k.digest.size(), 64u);
  EXPECT_EQ(k.dependencies,
            (std::vector<fs::path>{root / "kernels/gemm.cu", root / "kernels/include/detail/a.cuh",
                                   root / "kernels/local.cuh", root / "kernels/include/tile.cuh"}));
  ASSERT_EQ(k.inputs.size(), 7u);
  EXPECT_EQ(k.inputs[0], (std::pair<std::string, std::string>{"schema", "tune-cache-key/1"}));
  EXPECT_EQ(k.inputs[1].second,
            "nvcc -cubin -arch=sm_90 -std=c++17 -O3 -Xptxas=-v -lineinfo -DUSE_FAST=1 "
            "-Ikernels/include -DBM=64 -DLAYOUT=row -o <out> kernels/gemm.cu");
  EXPECT_EQ(k.inputs[2].first, "file");
  EXPECT_EQ(k.inputs[2].second, "kernels/gemm.cu " + sha256_file(root / "kernels/gemm.cu"));
  EXPECT_EQ(k.inputs[6], (std::pair<std::string, std::string>{"toolchain", fingerprint}));
}

TEST_F(CacheKeyTest, EditingAnIncludedHeaderChangesTheKey) {
  std::string before = key(manifest());
  write(root / "kernels/include/detail/a.cuh", "#pragma once\n// edited\n");
  EXPECT_NE(key(manifest()), before);
}

TEST_F(CacheKeyTest, TheEntrySymbolIsKeyedWhenItIsNotTheKernelsName) {
  // The symbol the cubin is checked for decides the verdict: a wrong ENTRY's `failed` entry is
  // never served to the fixed build. The kernel's own name (the default) keys as before.
  const Manifest m = manifest();
  const std::string as_named = key(m);
  Manifest other = m;
  other.entry = "gemm_v2";
  EXPECT_NE(key(other), as_named);
  const CacheKey k = CacheKeyer(other, ParamsAs::defines, fingerprint).key(config, "sm_90");
  EXPECT_EQ(k.inputs.back(), (std::pair<std::string, std::string>{"entry", "gemm_v2"}));
  EXPECT_NE(CacheKeyer(m, ParamsAs::defines, fingerprint).key(config, "sm_90").inputs.back().first,
            "entry");
}

TEST_F(CacheKeyTest, TheIdentityHasEveryInputOfTheKeyButTheConfigsValues) {
  const CacheKeyer keyer(manifest(), ParamsAs::defines, fingerprint);
  const BuildIdentity id = keyer.identity("sm_90");
  EXPECT_EQ(id.arch, "sm_90");
  EXPECT_EQ(id.entry, "gemm");
  EXPECT_EQ(id.toolchain, fingerprint);
  EXPECT_EQ(std::find(id.argv.begin(), id.argv.end(), "-DBM=64"), id.argv.end());
  EXPECT_NE(std::find(id.argv.begin(), id.argv.end(), "-lineinfo"), id.argv.end());
  std::vector<std::string> names;
  for (const auto& [name, sha] : id.files)
    names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"detail/a.cuh", "kernels/gemm.cu", "kernels/local.cuh",
                                             "tile.cuh"}));
  // An edit of an included header: the identity names it.
  write(root / "kernels/include/detail/a.cuh", "#pragma once\n// edited\n");
  const BuildIdentity edited =
      CacheKeyer(manifest(), ParamsAs::defines, fingerprint).identity("sm_90");
  EXPECT_NE(edited.digest(), id.digest());
  EXPECT_EQ(identity_changes(id, edited), std::vector<std::string>{"'detail/a.cuh' changed"});
  // A flag: named as new.
  Manifest flagged = manifest();
  flagged.compile_options.push_back("--use_fast_math");
  EXPECT_EQ(identity_changes(edited,
                             CacheKeyer(flagged, ParamsAs::defines, fingerprint).identity("sm_90")),
            std::vector<std::string>{"'--use_fast_math' is new"});
}

TEST_F(CacheKeyTest, EditingAFileTheKernelDoesNotIncludeChangesNothing) {
  std::string before = key(manifest());
  write(root / "kernels/include/unused.cuh", "#pragma once\n// edited\n");
  write(toolkit / "include/cuda_fp16.h", "// a toolkit edit is the fingerprint's business\n");
  EXPECT_EQ(key(manifest()), before);
}

TEST_F(CacheKeyTest, IndependentOfCheckoutAndBuildDirectory) {
  std::string here = key(manifest());
  fs::path elsewhere = top / "another" / "checkout";
  make_project(elsewhere);
  EXPECT_EQ(key(manifest_for(elsewhere, elsewhere / "build")), here);
  EXPECT_EQ(key(manifest_for(root, root / "build-release")), here);
  EXPECT_EQ(key(manifest_for(root, top / "out-of-tree")), here);
}

TEST_F(CacheKeyTest, AProjectInsideABuildTreeKeysAsAnyOtherCheckout) {
  // A checkout that sits under the build directory (a FetchContent dependency under
  // <build>/_deps, a scratch copy made by a test) names its files relative to its own root.
  const std::string here = key(manifest());
  const fs::path build = top / "consumer-build";
  const fs::path inside = build / "_deps" / "kernels-src";
  make_project(inside);
  EXPECT_EQ(key(manifest_for(inside, build)), here);
  EXPECT_EQ(source_hash(manifest_for(inside, build)), source_hash(manifest()));
  // A build tree inside the project still names what it generates as <build>/...
  Manifest m = manifest();
  m.include_directories.push_back(m.build_dir / "generated");
  const std::vector<std::string> argv =
      CacheKeyer(m, ParamsAs::defines, fingerprint).keyed_argv(config, "sm_90");
  EXPECT_NE(std::find(argv.begin(), argv.end(), "-I<build>/generated"), argv.end());
}

TEST_F(CacheKeyTest, DefinitionsIncludeDirectoriesArchAndParamsChangeIt) {
  Manifest m = manifest();
  std::string base = key(m);
  Manifest d = m;
  d.definitions.push_back("EXTRA=2");
  EXPECT_NE(key(d), base);
  Manifest i = m;
  fs::create_directories(root / "more");
  i.include_directories.insert(i.include_directories.begin(), root / "more");
  EXPECT_NE(key(i), base);
  Manifest o = m;
  o.compile_options.push_back("-maxrregcount=64");
  EXPECT_NE(key(o), base);
  EXPECT_NE(key(m, config, "sm_80"), base);
  EXPECT_NE(key(m, Config{{"BM", 128}, {"LAYOUT", "row"}}), base);
  EXPECT_NE(
      CacheKeyer(m, ParamsAs::defines, "nvcc 12.4.131, ptxas 12.4.131").key(config, "sm_90").digest,
      base);
}

TEST_F(CacheKeyTest, IndependentOfTheHostCompiler) {
  // The same kernel on a GCC machine and a Clang machine: another host compiler, and each one's
  // resource directory on the include path (where <stddef.h> resolves). Neither enters the key.
  Manifest gnu = manifest();
  gnu.host_compiler = "GNU 12.2.0";
  gnu.include_directories.push_back("/usr/lib/gcc/x86_64-linux-gnu/12/include");
  gnu.include_directories.push_back("/usr/include");
  Manifest clang = manifest();
  clang.host_compiler = "Clang 14.0.6";
  clang.include_directories.push_back("/usr/lib/llvm-14/lib/clang/14.0.6/include");
  clang.include_directories.push_back("/usr/local/include");
  EXPECT_EQ(key(gnu), key(clang));
  EXPECT_EQ(key(gnu), key(manifest()));
  EXPECT_EQ(CacheKeyer(gnu, ParamsAs::defines, fingerprint).keyed_argv(config, "sm_90"),
            CacheKeyer(clang, ParamsAs::defines, fingerprint).keyed_argv(config, "sm_90"));
}

TEST_F(CacheKeyTest, IndependentOfTheCompilerLauncher) {
  // ccache, or srun sending the compile to a CPU node: where and how a compile runs, not what
  // it produces. Neither the key, the keyed argv, nor the build identity sees it.
  Manifest launched = manifest();
  launched.compiler_launcher = {"srun", "--partition=cpu", "--quiet"};
  Manifest cached = manifest();
  cached.compiler_launcher = {"/usr/bin/ccache"};
  EXPECT_EQ(key(launched), key(manifest()));
  EXPECT_EQ(key(cached), key(manifest()));
  const CacheKeyer with(launched, ParamsAs::defines, fingerprint);
  const CacheKeyer without(manifest(), ParamsAs::defines, fingerprint);
  EXPECT_EQ(with.keyed_argv(config, "sm_90"), without.keyed_argv(config, "sm_90"));
  EXPECT_EQ(with.identity("sm_90").digest(), without.identity("sm_90").digest());
  EXPECT_EQ(with.key(config, "sm_90").inputs, without.key(config, "sm_90").inputs);
  // The command warm runs is the compiler's own: the launcher goes in front only when the
  // candidate store runs it (compile_into_cache).
  EXPECT_EQ(with.compile_command(config, "sm_90", "/tmp/o.cubin").argv,
            without.compile_command(config, "sm_90", "/tmp/o.cubin").argv);
}

TEST_F(CacheKeyTest, SystemAndToolkitPrefixes) {
  fs::path nvcc = toolkit / "bin/nvcc";
  EXPECT_TRUE(is_toolchain_or_system_path(toolkit / "include/cuda_fp16.h", nvcc));
  EXPECT_TRUE(is_toolchain_or_system_path(toolkit / "targets/x86_64-linux/include/a.h", nvcc));
  EXPECT_TRUE(is_toolchain_or_system_path("/usr/include/stdio.h", nvcc));
  EXPECT_TRUE(is_toolchain_or_system_path("/usr/local/include/x.h", nvcc));
  EXPECT_TRUE(is_toolchain_or_system_path("/usr/lib/gcc/x86_64-linux-gnu/12/include/a.h", nvcc));
  EXPECT_TRUE(is_toolchain_or_system_path("/usr/lib/llvm-14/lib/clang/14/include/a.h", nvcc));
  EXPECT_FALSE(is_toolchain_or_system_path("/usr/lib/llvmfoo/a.h", nvcc));
  EXPECT_FALSE(is_toolchain_or_system_path(toolkit / "bin2/a.h", nvcc));
  EXPECT_FALSE(is_toolchain_or_system_path(root / "kernels/include/tile.cuh", nvcc));
  EXPECT_FALSE(is_toolchain_or_system_path("/usr/includes/a.h", nvcc));
}

TEST_F(CacheKeyTest, SourceHashIgnoresTheCheckoutPath) {
  std::string here = source_hash(manifest());
  fs::path elsewhere = top / "copy";
  make_project(elsewhere);
  EXPECT_EQ(source_hash(manifest_for(elsewhere, elsewhere / "build")), here);
  write(root / "kernels/gemm.cu", "// edited\n");
  EXPECT_NE(source_hash(manifest()), here);
  // Headers are the cache keys' business, not the source hash's.
  std::string edited = source_hash(manifest());
  write(root / "kernels/include/tile.cuh", "// edited\n");
  EXPECT_EQ(source_hash(manifest()), edited);
}

TEST_F(CacheKeyTest, MissingSourceIsBadInput) {
  Manifest m = manifest();
  m.path = "/b/manifest.json";
  fs::remove(root / "kernels/gemm.cu");
  try {
    CacheKeyer keyer(m, ParamsAs::defines, fingerprint);
    FAIL() << "expected input_error";
  } catch (const input_error& e) {
    EXPECT_EQ(std::string(e.what()), "/b/manifest.json: error: source '" +
                                         (root / "kernels/gemm.cu").string() + "' cannot be read");
  }
}

TEST(ToolchainTest, ParsesCudaToolVersions) {
  EXPECT_EQ(parse_cuda_tool_version("nvcc: NVIDIA (R) Cuda compiler driver\n"
                                    "Cuda compilation tools, release 13.0, V13.0.88\n"
                                    "Build cuda_13.0.r13.0/compiler.36424714_0\n"),
            "13.0.88");
  EXPECT_EQ(parse_cuda_tool_version("Cuda compilation tools, release 12.4\n"), "12.4");
  EXPECT_EQ(parse_cuda_tool_version("gcc (Debian 12.2.0-14) 12.2.0\n"), "");
  EXPECT_EQ((Toolchain{"13.0.88", "13.0.88", "GNU"}).fingerprint(), "nvcc 13.0.88, ptxas 13.0.88");
}

TEST(ToolchainTest, RunsTheToolsOnceAndCaches) {
  fs::path dir = fs::temp_directory_path() / ("tune_toolchain_test." + std::to_string(::getpid()));
  fs::remove_all(dir);
  auto script = [&](const char* name, const char* version) {
    write(dir / "bin" / name,
          std::string("#!/bin/sh\necho 'Cuda compilation tools, release ") + version + "'\n");
    fs::permissions(dir / "bin" / name, fs::perms::owner_all);
  };
  script("nvcc", "12.4, V12.4.131");
  script("ptxas", "12.4, V12.4.99");
  Toolchain t = toolchain_fingerprint(dir / "bin/nvcc");
  EXPECT_EQ(t.fingerprint(), "nvcc 12.4.131, ptxas 12.4.99");
  script("nvcc", "13.0, V13.0.88");  // not asked again within this process
  EXPECT_EQ(toolchain_fingerprint(dir / "bin/nvcc").fingerprint(), "nvcc 12.4.131, ptxas 12.4.99");
  try {
    toolchain_fingerprint(dir / "missing/nvcc");
    ADD_FAILURE() << "expected tune::error";
  } catch (const error& e) {
    EXPECT_EQ(std::string(e.what()),
              "cannot run '" + (dir / "missing/nvcc").string() + "': No such file or directory");
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tune
