#include <tuner/core/build/kernel_cache.hpp>

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <tuner/core/base/hash.hpp>
#include <tuner/core/base/result.hpp>

namespace tune {
namespace {

namespace fs = std::filesystem;

// What nvcc 13.0 printed for `nvcc -cubin -arch=sm_90 -Xptxas=-v` of a module with two entries.
constexpr const char* ptxas_13 = R"(ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'k2' for 'sm_90'
ptxas info    : Function properties for k2
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 8 registers, used 0 barriers
ptxas info    : Compile time = 14.500 ms
ptxas info    : Compiling entry function 'k' for 'sm_90'
ptxas info    : Function properties for k
    256 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 32 registers, used 1 barriers, 256 bytes cumulative stack size, 4096 bytes smem
ptxas info    : Compile time = 39.764 ms
)";

// The same kernel with a 64 KiB static __shared__ array: ptxas refuses it, and still reports.
constexpr const char* ptxas_13_too_much_shared =
    R"(ptxas error   : Entry function 'k' uses too much shared data (0x10000 bytes, 0xc000 max)
ptxas info    : 0 bytes gmem
ptxas info    : Compiling entry function 'k' for 'sm_90'
ptxas info    : Function properties for k
    256 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 32 registers, used 1 barriers, 256 bytes cumulative stack size, 65536 bytes smem
)";

// The older format (CUDA 11), with constant banks and lmem, and a device function that was not
// inlined between the entry's lines.
constexpr const char* ptxas_11 = R"(ptxas info    : 16 bytes gmem, 72 bytes cmem[3]
ptxas info    : Function properties for _Z6helperv
    16 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Compiling entry function '_Z4gemmPf' for 'sm_80'
ptxas info    : Function properties for _Z4gemmPf
    24 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads
ptxas info    : Used 40 registers, 16384 bytes smem, 352 bytes cmem[0], 8 bytes cmem[2], 24 bytes lmem
)";

class TempDir {
 public:
  TempDir() {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    path_ = fs::temp_directory_path() /
            ("tune-kernel-cache-" + std::string(info->name()) + "-" + std::to_string(::getpid()));
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

// A stand-in for nvcc: a shell script that prints `output`, writes `cubin` (when not empty) to
// the path given as its first argument, and exits with `status`.
fs::path fake_compiler(const fs::path& dir, const std::string& output, const std::string& cubin,
                       int status) {
  const fs::path script = dir / "fake-nvcc.sh";
  write(dir / "output.txt", output);
  std::string text = "#!/bin/sh\ncat '" + (dir / "output.txt").string() + "'\n";
  if (!cubin.empty()) text += "printf '%s' '" + cubin + "' > \"$1\"\n";
  text += "exit " + std::to_string(status) + "\n";
  write(script, text);
  fs::permissions(script, fs::perms::owner_all);
  return script;
}

// A compiler that is the shell script `body`, written to `dir/name`.
fs::path script_compiler(const fs::path& dir, const std::string& name, const std::string& body) {
  const fs::path script = dir / name;
  write(script, "#!/bin/sh\n" + body);
  fs::permissions(script, fs::perms::owner_all);
  return script;
}

CompileRequest request_for(const fs::path& script, const std::string& key,
                           const std::string& arch = "sm_90") {
  CompileRequest r;
  r.key = key;
  r.arch = arch;
  r.config_id = "BLOCK=128";
  r.entry = "k";
  r.argv_keyed = {"nvcc", "-cubin", "-o", "<out>", "kernels/k.cu"};
  r.dependencies = {"kernels/k.cu", "tile.cuh"};
  r.command = [script](const fs::path& out) {
    return std::vector<std::string>{"/bin/sh", script.string(), out.string()};
  };
  return r;
}

std::string read_text(const fs::path& p) {
  return read_file(p);
}

TEST(KernelCacheTest, StatusNamesRoundTrip) {
  for (CacheStatus s : {CacheStatus::ok, CacheStatus::failed, CacheStatus::over_limit})
    EXPECT_EQ(parse_cache_status(to_string(s)), s);
  EXPECT_EQ(to_string(CacheStatus::over_limit), "over_limit");
  EXPECT_EQ(parse_cache_status("invalid"), std::nullopt);
}

TEST(KernelCacheTest, ParsesCuda13PtxasReport) {
  const auto found = parse_ptxas_resources(ptxas_13);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found.at("k"), (KernelResources{32, 4096, 256, 0}));
  EXPECT_EQ(found.at("k2"), (KernelResources{8, 0, 0, 0}));
}

TEST(KernelCacheTest, ParsesOlderPtxasReportWithConstantBanksAndLmem) {
  const auto found = parse_ptxas_resources(ptxas_11);
  ASSERT_EQ(found.size(), 1u);
  // lmem wins over the stack frame; every cmem bank is summed; the helper has no Used line.
  EXPECT_EQ(found.at("_Z4gemmPf"), (KernelResources{40, 16384, 24, 360}));
}

TEST(KernelCacheTest, ParsesTheReportOfAFailedCompile) {
  const auto found = parse_ptxas_resources(ptxas_13_too_much_shared);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found.at("k").shared_bytes, 65536);
}

TEST(KernelCacheTest, IgnoresTextThatIsNotAReport) {
  EXPECT_TRUE(parse_ptxas_resources("").empty());
  EXPECT_TRUE(
      parse_ptxas_resources("k.cu(3): error: boom\nptxas info    : Used 9 registers\n").empty());
}

TEST(KernelCacheTest, ArchLimitsTable) {
  constexpr std::int64_t kib = 1024;
  EXPECT_EQ(arch_limits("sm_70")->max_shared_per_block, 96 * kib);
  EXPECT_EQ(arch_limits("sm_75")->max_shared_per_block, 64 * kib);
  EXPECT_EQ(arch_limits("sm_80")->max_shared_per_block, 163 * kib);
  EXPECT_EQ(arch_limits("sm_86")->max_shared_per_block, 99 * kib);
  EXPECT_EQ(arch_limits("sm_89")->max_shared_per_block, 99 * kib);
  EXPECT_EQ(arch_limits("sm_90")->max_shared_per_block, 227 * kib);
  EXPECT_EQ(arch_limits("sm_90a")->max_shared_per_block, 227 * kib);
  EXPECT_EQ(arch_limits("sm_120")->max_shared_per_block, 99 * kib);
  EXPECT_EQ(arch_limits("sm_90")->max_registers_per_thread, 255);
  EXPECT_EQ(arch_limits("sm_90")->max_static_shared, 48 * kib);
  EXPECT_EQ(arch_limits("sm_91"), std::nullopt);
  EXPECT_EQ(arch_limits("90"), std::nullopt);
  EXPECT_EQ(arch_limits("sm_90x"), std::nullopt);
}

TEST(KernelCacheTest, KnownArchsAreTheRowsOfTheLimitsTable) {
  const std::vector<std::string> expected{"sm_50",  "sm_52",  "sm_53",  "sm_60",  "sm_61",
                                          "sm_62",  "sm_70",  "sm_72",  "sm_75",  "sm_80",
                                          "sm_86",  "sm_87",  "sm_89",  "sm_90",  "sm_100",
                                          "sm_101", "sm_103", "sm_110", "sm_120", "sm_121"};
  EXPECT_EQ(known_archs(), expected);
  for (const std::string& arch : known_archs()) {
    EXPECT_TRUE(arch_limits(arch).has_value()) << arch;
    EXPECT_TRUE(arch_limits(arch + "a").has_value()) << arch;
  }
}

TEST(KernelCacheTest, ExceededLimitNamesFunctionUseAndLimit) {
  const ArchLimits limits = *arch_limits("sm_90");
  EXPECT_EQ(exceeded_limit("k", {32, 4096, 0, 0}, limits, "sm_90"), std::nullopt);
  EXPECT_EQ(exceeded_limit("k", {32, 49152, 0, 0}, limits, "sm_90"), std::nullopt);
  EXPECT_EQ(exceeded_limit("k", {32, 65536, 0, 0}, limits, "sm_90"),
            "function 'k' uses 65536 bytes of static shared memory, over the limit of 49152 bytes "
            "on sm_90");
  EXPECT_EQ(exceeded_limit("k", {256, 0, 0, 0}, limits, "sm_90"),
            "function 'k' uses 256 registers per thread, over the limit of 255 on sm_90");
  ArchLimits small;
  small.max_static_shared = 96 * 1024;
  small.max_shared_per_block = 64 * 1024;
  EXPECT_EQ(exceeded_limit("k", {32, 65537, 0, 0}, small, "sm_75"),
            "function 'k' uses 65537 bytes of shared memory, over the limit of 65536 bytes per "
            "block on sm_75");
}

TEST(KernelCacheTest, EntryJsonRoundTrip) {
  CacheEntry e;
  e.key = "abc";
  e.status = CacheStatus::over_limit;
  e.reason = "too big";
  e.compiler_output = "ptxas error";
  e.resources = KernelResources{32, 65536, 256, 0};
  e.arch = "sm_90";
  e.config_id = "SMEM=64";
  e.argv = {"nvcc", "-cubin"};
  e.dependencies = {"k.cu"};
  const nlohmann::json j = e;
  EXPECT_EQ(j.dump(),
            R"({"arch":"sm_90","argv":["nvcc","-cubin"],"compiler_output":"ptxas error",)"
            R"("config_id":"SMEM=64","cubin_sha256":"","dependencies":["k.cu"],"key":"abc",)"
            R"("key_schema":"k1","reason":"too big","resources":{"const_bytes":0,)"
            R"("local_bytes":256,"registers":32,"shared_bytes":65536},"schema_version":1,)"
            R"("status":"over_limit"})");
  const CacheEntry back = j.get<CacheEntry>();
  EXPECT_EQ(back.status, CacheStatus::over_limit);
  EXPECT_EQ(back.resources, e.resources);
  EXPECT_EQ(back.argv, e.argv);

  nlohmann::json bad = j;
  bad["status"] = "maybe";
  EXPECT_THROW(bad.get<CacheEntry>(), nlohmann::json::exception);
  bad = j;
  bad.erase("key");
  EXPECT_THROW(bad.get<CacheEntry>(), nlohmann::json::exception);
}

TEST(KernelCacheTest, StoreThenLookupOkEntry) {
  TempDir tmp;
  const KernelCache cache(tmp.path() / "cache");
  EXPECT_EQ(cache.lookup("k1"), std::nullopt);
  const fs::path cubin = cache.temp_path("k1", ".cubin");
  EXPECT_EQ(cubin.parent_path(), cache.dir());
  write(cubin, "CUBIN");
  CacheEntry e;
  e.key = "k1";
  e.status = CacheStatus::ok;
  const CacheEntry stored = cache.store(e, cubin);
  EXPECT_EQ(stored.cubin_sha256, sha256_hex("CUBIN"));
  EXPECT_FALSE(fs::exists(cubin));
  EXPECT_EQ(read_text(cache.cubin_path("k1")), "CUBIN");
  const auto hit = cache.lookup("k1");
  ASSERT_TRUE(hit.has_value());
  EXPECT_EQ(hit->cubin_sha256, sha256_hex("CUBIN"));
  // No temporary file is left behind.
  int files = 0;
  for (const auto& f : fs::directory_iterator(cache.dir())) {
    (void)f;
    ++files;
  }
  EXPECT_EQ(files, 2);
}

TEST(KernelCacheTest, LookupRechecksKeyAndCubin) {
  TempDir tmp;
  const KernelCache cache(tmp.path());
  const fs::path cubin = cache.temp_path("k1", ".cubin");
  write(cubin, "CUBIN");
  CacheEntry e;
  e.key = "k1";
  cache.store(e, cubin);
  ASSERT_TRUE(cache.lookup("k1").has_value());

  write(cache.cubin_path("k1"), "TAMPERED");  // the cubin no longer matches its entry
  EXPECT_EQ(cache.lookup("k1"), std::nullopt);
  fs::remove(cache.cubin_path("k1"));  // gone
  EXPECT_EQ(cache.lookup("k1"), std::nullopt);

  // An entry filed under another key's name is a miss.
  fs::copy_file(cache.entry_path("k1"), cache.entry_path("k2"));
  EXPECT_EQ(cache.lookup("k2"), std::nullopt);

  write(cache.entry_path("k3"), "{not json");
  EXPECT_EQ(cache.lookup("k3"), std::nullopt);

  nlohmann::json other = nlohmann::json::parse(read_text(cache.entry_path("k1")));
  other["key"] = "k4";
  other["status"] = "failed";
  other["schema_version"] = 2;
  write(cache.entry_path("k4"), other.dump());
  EXPECT_EQ(cache.lookup("k4"), std::nullopt);
  other["schema_version"] = 1;
  write(cache.entry_path("k4"), other.dump());
  EXPECT_TRUE(cache.lookup("k4").has_value());  // invalid entries need no cubin
}

TEST(KernelCacheTest, CompileLogAppendsWholeLines) {
  TempDir tmp;
  const fs::path log = tmp.path() / "sub" / "compile.log";
  append_compile_log(log, "aaa", "BLOCK=64");
  append_compile_log(log, "bbb", "LAYOUT=\"row\"");
  EXPECT_EQ(read_text(log), "aaa BLOCK=64\nbbb LAYOUT=\"row\"\n");
}

TEST(KernelCacheTest, CompileIntoCacheOkThenHit) {
  TempDir tmp;
  const KernelCache cache(tmp.path() / "cache");
  const fs::path log = tmp.path() / "compile.log";
  const fs::path script = fake_compiler(tmp.path(), ptxas_13, "CUBIN-BYTES", 0);
  const CompileOutcome first = compile_into_cache(cache, request_for(script, "key1"), log);
  EXPECT_TRUE(first.compiled);
  EXPECT_EQ(first.entry.status, CacheStatus::ok);
  EXPECT_EQ(first.entry.reason, "");
  EXPECT_EQ(first.entry.resources, (KernelResources{32, 4096, 256, 0}));
  EXPECT_EQ(first.entry.compiler_output, ptxas_13);
  EXPECT_EQ(first.entry.cubin_sha256, sha256_hex("CUBIN-BYTES"));
  EXPECT_EQ(first.entry.config_id, "BLOCK=128");
  EXPECT_EQ(first.entry.dependencies, (std::vector<std::string>{"kernels/k.cu", "tile.cuh"}));
  EXPECT_EQ(read_text(cache.cubin_path("key1")), "CUBIN-BYTES");

  const CompileOutcome second = compile_into_cache(cache, request_for(script, "key1"), log);
  EXPECT_FALSE(second.compiled);
  EXPECT_EQ(second.entry.status, CacheStatus::ok);
  EXPECT_EQ(read_text(log), "key1 BLOCK=128\n");  // one compiler run, one line
}

TEST(KernelCacheTest, AnEntryKeepsItsCompileSeconds) {
  TempDir tmp;
  const KernelCache cache(tmp.path() / "cache");
  const fs::path script = fake_compiler(tmp.path(), ptxas_13, "CUBIN-BYTES", 0);
  const CompileOutcome out =
      compile_into_cache(cache, request_for(script, "keyS"), tmp.path() / "log");
  ASSERT_TRUE(out.entry.compile_s.has_value());
  EXPECT_GE(*out.entry.compile_s, 0.0);
  EXPECT_LT(*out.entry.compile_s, 30.0);
  EXPECT_EQ(cache.lookup("keyS")->compile_s, out.entry.compile_s);  // written and read back
}

// A compile past the request's timeout is stopped and cached as timed_out: the next request
// with the same (or a shorter) timeout does not compile it again; a longer one does.
// A forged or corrupt `compile_s` (hostile-input N7) reads as unknown where the entry is read:
// negative, not finite or over a day, it would be copied into the candidate's trials, which
// the trial log then refuses (a resume measured the config again, a merge lost it).
TEST(KernelCacheTest, CompileSecondsOutOfRangeReadAsUnknown) {
  TempDir tmp;
  const KernelCache cache(tmp.path());
  const fs::path cubin = cache.temp_path("k1", ".cubin");
  write(cubin, "CUBIN");
  CacheEntry e;
  e.key = "k1";
  e.compile_s = 2.5;
  cache.store(e, cubin);
  const nlohmann::json good = nlohmann::json::parse(read_text(cache.entry_path("k1")));
  ASSERT_EQ(cache.lookup("k1")->compile_s, 2.5);
  for (const char* text : {"-0.5", "-1e-300", "1e308", "86400.5"}) {
    const std::string field = "\"compile_s\":2.5";
    std::string entry = good.dump();
    const std::size_t at = entry.find(field);
    ASSERT_NE(at, std::string::npos) << entry;
    entry.replace(at, field.size(), std::string("\"compile_s\":") + text);
    write(cache.entry_path("k1"), entry);
    const std::optional<CacheEntry> hit = cache.lookup("k1");
    ASSERT_TRUE(hit.has_value()) << text;  // the entry still serves ...
    EXPECT_FALSE(hit->compile_s.has_value()) << text << ": " << *hit->compile_s;  // ... untimed
  }
  const double inf = std::numeric_limits<double>::infinity();
  for (double v : {std::nan(""), -inf, inf, -2.0}) {
    nlohmann::json j = good;
    j["compile_s"] = v;
    EXPECT_FALSE(j.get<CacheEntry>().compile_s.has_value()) << v;
  }
  for (double v : {0.0, 5e-324, 86400.0}) {
    nlohmann::json j = good;
    j["compile_s"] = v;
    EXPECT_EQ(j.get<CacheEntry>().compile_s, v);
  }
  // A timed_out entry whose timeout does not read is compiled again, whatever the timeout.
  nlohmann::json timed_out = good;
  timed_out["status"] = "timed_out";
  timed_out["compile_s"] = -1;
  EXPECT_FALSE(entry_serves(timed_out.get<CacheEntry>(), 10.0));
}

TEST(KernelCacheTest, ACompilePastItsTimeoutIsInvalidAndRemembered) {
  TempDir tmp;
  const KernelCache cache(tmp.path() / "cache");
  const fs::path log = tmp.path() / "compile.log";
  const fs::path slow =
      script_compiler(tmp.path(), "slow-nvcc.sh", "sleep 5\nprintf 'CUBIN' > \"$1\"\n");
  CompileRequest r = request_for(slow, "keyT");
  r.timeout_s = 0.3;
  const auto t0 = std::chrono::steady_clock::now();
  const CompileOutcome out = compile_into_cache(cache, r, log);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 4.0);
  EXPECT_TRUE(out.compiled);
  EXPECT_EQ(out.entry.status, CacheStatus::timed_out);
  EXPECT_FALSE(out.entry.valid());
  EXPECT_EQ(out.entry.reason,
            "the compile ran longer than the compile timeout of 0.3 s ([search] "
            "compile_timeout_s); raise it to try the candidate again");
  EXPECT_EQ(out.entry.compile_s, 0.3);
  EXPECT_FALSE(fs::exists(cache.cubin_path("keyT")));

  const CompileOutcome again = compile_into_cache(cache, r, log);
  EXPECT_FALSE(again.compiled);
  EXPECT_EQ(again.entry.status, CacheStatus::timed_out);
  EXPECT_EQ(read_text(log), "keyT BLOCK=128\n");

  EXPECT_TRUE(entry_serves(again.entry, 0.2));
  EXPECT_FALSE(entry_serves(again.entry, 0.5));
  EXPECT_FALSE(entry_serves(again.entry, std::nullopt));
  const fs::path quick = fake_compiler(tmp.path(), ptxas_13, "CUBIN", 0);
  CompileRequest longer = request_for(quick, "keyT");
  longer.timeout_s = 60;
  const CompileOutcome retried = compile_into_cache(cache, longer, log);
  EXPECT_TRUE(retried.compiled);
  EXPECT_EQ(retried.entry.status, CacheStatus::ok);
}

TEST(KernelCacheTest, CompileFailureIsStoredInvalidWithTheCompilerOutput) {
  TempDir tmp;
  const KernelCache cache(tmp.path() / "cache");
  const fs::path log = tmp.path() / "compile.log";
  const std::string output =
      "kernels/k.cu(3): error: #error directive: \"BLOCK must be a multiple of 32\"\n"
      "1 error detected in the compilation of \"kernels/k.cu\".\n";
  const fs::path script = fake_compiler(tmp.path(), output, "", 2);
  const CompileOutcome out = compile_into_cache(cache, request_for(script, "key2"), log);
  EXPECT_TRUE(out.compiled);
  EXPECT_EQ(out.entry.status, CacheStatus::failed);
  EXPECT_EQ(out.entry.reason,
            "the compiler exited with status 2: kernels/k.cu(3): error: #error directive: "
            "\"BLOCK must be a multiple of 32\"");
  EXPECT_EQ(out.entry.compiler_output, output);
  EXPECT_EQ(out.entry.resources, std::nullopt);
  EXPECT_FALSE(fs::exists(cache.cubin_path("key2")));
  // Cached: a second warm does not run the compiler again.
  EXPECT_FALSE(compile_into_cache(cache, request_for(script, "key2"), log).compiled);
  EXPECT_EQ(read_text(log), "key2 BLOCK=128\n");
}

// A compiler killed by a signal (out of memory, a stop) has not judged the source: the failure
// is reported but not cached, and the next warm compiles the candidate again.
TEST(KernelCacheTest, ACompilerKilledByASignalIsNotCachedAsAFailure) {
  TempDir tmp;
  const KernelCache cache(tmp.path() / "cache");
  const fs::path log = tmp.path() / "compile.log";
  const fs::path killed =
      script_compiler(tmp.path(), "killed-nvcc.sh", "echo 'partial' > \"$1\"\nkill -9 $$\n");
  const CompileOutcome out = compile_into_cache(cache, request_for(killed, "key5"), log);
  EXPECT_TRUE(out.compiled);
  EXPECT_EQ(out.entry.status, CacheStatus::failed);
  EXPECT_EQ(
      out.entry.reason,
      "the compiler was killed by signal SIGKILL (not cached: the next warm compiles it again)");
  EXPECT_EQ(cache.lookup("key5"), std::nullopt);
  EXPECT_FALSE(fs::exists(cache.cubin_path("key5")));
  EXPECT_FALSE(fs::exists(cache.temp_path("key5", ".cubin")));

  const fs::path good = fake_compiler(tmp.path(), ptxas_13, "CUBIN-BYTES", 0);
  const CompileOutcome again = compile_into_cache(cache, request_for(good, "key5"), log);
  EXPECT_TRUE(again.compiled);
  EXPECT_EQ(again.entry.status, CacheStatus::ok);
}

TEST(KernelCacheTest, OverLimitFromPtxasIsNotACompileFailure) {
  TempDir tmp;
  const KernelCache cache(tmp.path() / "cache");
  const fs::path script = fake_compiler(tmp.path(), ptxas_13_too_much_shared, "", 255);
  const CompileOutcome out =
      compile_into_cache(cache, request_for(script, "key3"), tmp.path() / "compile.log");
  EXPECT_EQ(out.entry.status, CacheStatus::over_limit);
  EXPECT_EQ(out.entry.reason,
            "function 'k' uses 65536 bytes of static shared memory, over the limit of 49152 "
            "bytes on sm_90");
  EXPECT_EQ(out.entry.resources->shared_bytes, 65536);
  EXPECT_FALSE(fs::exists(cache.cubin_path("key3")));
}

TEST(KernelCacheTest, OverLimitEvenWhenTheCompilerSucceeds) {
  TempDir tmp;
  const KernelCache cache(tmp.path() / "cache");
  // sm_75 allows 64 KiB per block; this report says 48 KiB static, within the static limit.
  const std::string report =
      "ptxas info    : Compiling entry function 'k' for 'sm_75'\n"
      "ptxas info    : Used 255 registers, 49152 bytes smem\n"
      "ptxas info    : Compiling entry function 'other' for 'sm_75'\n"
      "ptxas info    : Used 300 registers\n";
  const fs::path script = fake_compiler(tmp.path(), report, "CUBIN", 0);
  const CompileOutcome out =
      compile_into_cache(cache, request_for(script, "key4", "sm_75"), tmp.path() / "log");
  EXPECT_EQ(out.entry.status, CacheStatus::over_limit);
  EXPECT_EQ(out.entry.reason,
            "function 'other' uses 300 registers per thread, over the limit of 255 on sm_75");
  EXPECT_EQ(out.entry.resources, (KernelResources{255, 49152, 0, 0}));
  EXPECT_EQ(out.entry.cubin_sha256, "");
  EXPECT_FALSE(fs::exists(cache.cubin_path("key4")));
}

TEST(KernelCacheTest, CompilerThatWritesNoCubinFailed) {
  TempDir tmp;
  const KernelCache cache(tmp.path() / "cache");
  const fs::path script = fake_compiler(tmp.path(), "", "", 0);
  const CompileOutcome out =
      compile_into_cache(cache, request_for(script, "key5"), tmp.path() / "log");
  EXPECT_EQ(out.entry.status, CacheStatus::failed);
  EXPECT_EQ(out.entry.reason.rfind("the compiler exited with status 0 but wrote no cubin to '", 0),
            0u);
}

TEST(KernelCacheTest, MissingCompilerIsAnEnvironmentError) {
  TempDir tmp;
  const KernelCache cache(tmp.path() / "cache");
  CompileRequest r = request_for(tmp.path() / "none", "key6");
  r.command = [](const fs::path&) {
    return std::vector<std::string>{"/nonexistent/nvcc", "-cubin"};
  };
  try {
    compile_into_cache(cache, r, tmp.path() / "log");
    FAIL() << "expected tune::error";
  } catch (const error& e) {
    EXPECT_STREQ(e.what(), "cannot run '/nonexistent/nvcc': No such file or directory");
  }
  EXPECT_EQ(cache.lookup("key6"), std::nullopt);
}

TEST(KernelCacheTest, ALauncherRunsTheCompilerAndStaysOutOfTheEntry) {
  TempDir tmp;
  const KernelCache cache(tmp.path() / "cache");
  const fs::path log = tmp.path() / "compile.log";
  const fs::path nvcc = fake_compiler(tmp.path(), ptxas_13, "CUBIN-BYTES", 0);
  // Notes what it got, drops its own option and runs the rest.
  const fs::path launcher = script_compiler(
      tmp.path(), "launch",
      "echo \"$@\" > '" + (tmp.path() / "launched").string() + "'\nshift\nexec \"$@\"\n");
  CompileRequest r = request_for(nvcc, "keyL");
  r.launcher = {{launcher.string(), "--partition=cpu"}, "TUNE_COMPILER_LAUNCHER"};
  const CompileOutcome out = compile_into_cache(cache, r, log);
  EXPECT_TRUE(out.compiled);
  EXPECT_EQ(out.entry.status, CacheStatus::ok);
  // The launcher got its own arguments, then the compiler's command as it is.
  EXPECT_EQ(read_text(tmp.path() / "launched").rfind("--partition=cpu /bin/sh " + nvcc.string(), 0),
            0u);
  // The entry is the one a compile without it writes: the keyed argv, the same cubin.
  EXPECT_EQ(out.entry.argv, request_for(nvcc, "keyL").argv_keyed);
  const CompileOutcome plain =
      compile_into_cache(KernelCache(tmp.path() / "plain"), request_for(nvcc, "keyL"), log);
  EXPECT_EQ(out.entry.cubin_sha256, plain.entry.cubin_sha256);
}

TEST(KernelCacheTest, ALauncherThatFailsItselfIsNotCachedAsAFailure) {
  TempDir tmp;
  const KernelCache cache(tmp.path() / "cache");
  const fs::path log = tmp.path() / "compile.log";
  // Slurm had no node for it: the compiler never ran, the verdict is not the candidate's.
  const fs::path srun = script_compiler(
      tmp.path(), "srun",
      "echo 'srun: error: Unable to allocate resources: Invalid partition name specified'\n"
      "exit 1\n");
  CompileRequest r = request_for(tmp.path() / "never-run-nvcc.sh", "keyF");
  r.launcher = {{srun.string(), "--partition=cpu"}, "TUNE_COMPILER_LAUNCHER"};
  const CompileOutcome out = compile_into_cache(cache, r, log);
  EXPECT_EQ(out.entry.status, CacheStatus::failed);
  EXPECT_EQ(out.entry.reason,
            "the compiler exited with status 1: srun: error: Unable to allocate resources: "
            "Invalid partition name specified (not cached: the next warm compiles it again)");
  EXPECT_EQ(cache.lookup("keyF"), std::nullopt);

  // The compiler's own error through the launcher (which then says the task failed) is the
  // candidate's verdict, cached as without a launcher.
  const fs::path bad =
      fake_compiler(tmp.path(), "k.cu(3): error: identifier \"x\" is undefined\n", "", 2);
  const fs::path relay = script_compiler(
      tmp.path(), "srun",
      "\"$@\"\ns=$?\necho \"srun: error: node1: task 0: Exited with exit code $s\"\n"
      "exit $s\n");
  CompileRequest failing = request_for(bad, "keyG");
  failing.launcher = {{relay.string()}, "CMAKE_CUDA_COMPILER_LAUNCHER"};
  const CompileOutcome verdict = compile_into_cache(cache, failing, log);
  EXPECT_EQ(verdict.entry.reason,
            "the compiler exited with status 2: k.cu(3): error: identifier \"x\" is undefined");
  ASSERT_TRUE(cache.lookup("keyG"));
  EXPECT_EQ(cache.lookup("keyG")->status, CacheStatus::failed);
}

TEST(KernelCacheTest, ALauncherThatCannotStartIsAnEnvironmentErrorNamingIt) {
  TempDir tmp;
  const KernelCache cache(tmp.path() / "cache");
  CompileRequest r = request_for(fake_compiler(tmp.path(), ptxas_13, "CUBIN", 0), "keyM");
  r.launcher = {{"/nonexistent/srun", "-p", "cpu"}, "TUNE_COMPILER_LAUNCHER"};
  try {
    compile_into_cache(cache, r, tmp.path() / "log");
    FAIL() << "expected tune::error";
  } catch (const error& e) {
    EXPECT_STREQ(e.what(),
                 "the compiler launcher '/nonexistent/srun -p cpu' (TUNE_COMPILER_LAUNCHER): "
                 "cannot run '/nonexistent/srun': No such file or directory");
  }
  EXPECT_EQ(cache.lookup("keyM"), std::nullopt);
}

TEST(KernelCacheTest, DepfileEscapesSpacesHashAndDollar) {
  EXPECT_EQ(make_depfile("/b/c-1.stamp", {"/src/k.cu", "/src/my dir/t#1.cuh", "/src/$x.h"}),
            "/b/c-1.stamp: \\\n  /src/k.cu \\\n  /src/my\\ dir/t\\#1.cuh \\\n  /src/$$x.h\n");
  EXPECT_EQ(make_depfile("/b/s", {}), "/b/s:\n");
}

TEST(KernelCacheTest, CacheDirFromEnvironment) {
  ::unsetenv("TUNE_CACHE_DIR");
  EXPECT_EQ(effective_cache_dir("/build/tune/cache"), fs::path("/build/tune/cache"));
  ::setenv("TUNE_CACHE_DIR", "", 1);
  EXPECT_EQ(effective_cache_dir("/build/tune/cache"), fs::path("/build/tune/cache"));
  ::setenv("TUNE_CACHE_DIR", "/shared/cache", 1);
  EXPECT_EQ(effective_cache_dir("/build/tune/cache"), fs::path("/shared/cache"));
  ::unsetenv("TUNE_CACHE_DIR");
}

}  // namespace
}  // namespace tune
