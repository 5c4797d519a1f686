// The remote store's policy (tuner/core/store/remote_store.hpp) and shared trials
// (tuner/core/store/shared_trials.hpp), against a directory store, and (built as
// remote_store_http_test with TUNE_TEST_HTTP) against the nginx WebDAV server of the store_server
// fixture (tests/store/store_server.py), whose servers.json TUNE_TEST_STORE_SERVERS names.
#include <tuner/core/store/remote_store.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <latch>
#include <map>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <tuner/core/base/hash.hpp>
#include <tuner/core/store/candidate_store.hpp>
#include <tuner/core/store/shared_trials.hpp>
#include <tuner/core/store/trust.hpp>
#include <tuner/core/tune/kernel_tune.hpp>

#include "test_dir.hpp"

namespace tune {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << text;
}

// A key per test: the stores are shared between tests (and, over HTTP, between binaries).
std::string key_of(const std::string& what) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return sha256_hex(fmt::format("{}.{}:{}", info->test_suite_name(), info->name(), what));
}

#ifdef TUNE_TEST_HTTP
json servers() {
  const char* path = std::getenv("TUNE_TEST_STORE_SERVERS");
  if (path == nullptr) throw error("TUNE_TEST_STORE_SERVERS is not set (the store_server fixture)");
  return json::parse(read_file(path));
}
#endif

// The request a test's entries (stored_entry: sm_90, BLOCK=128, no argv) answer under `key`.
CompileRequest request_of(const std::string& key) {
  CompileRequest r;
  r.key = key;
  r.arch = "sm_90";
  r.config_id = "BLOCK=128";
  return r;
}

class RemoteStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::fresh_test_dir("RemoteStoreTest");
    cache_dir_ = dir_ / "cache";
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
#ifdef TUNE_TEST_HTTP
    const json s = servers();
    location_ = s["store"].get<std::string>() + "/" + info->name();
    root_ = fs::path(s["root"].get<std::string>()) / info->name();
    fs::remove_all(root_);
    faults_ = s["faults"].get<std::string>();
    nginx_ = s["nginx"].get<std::string>();
#else
    root_ = dir_ / "store";
    location_ = root_.string();
    (void)info;
#endif
  }

  // A fresh policy layer over the store (a new process, as far as it knows).
  std::unique_ptr<RemoteStore> remote(const std::string& location = "") {
    result<std::unique_ptr<Store>> s = open_store(location.empty() ? location_ : location, "test");
    EXPECT_TRUE(s.has_value()) << (s ? "" : s.error().str());
    return std::make_unique<RemoteStore>(std::move(*s),
                                         [this](const std::string& w) { warnings_.push_back(w); });
  }

  // An ok entry of `key` in `cache` with `cubin` as its bytes.
  CacheEntry stored_entry(const KernelCache& cache, const std::string& key,
                          const std::string& cubin) {
    CacheEntry e;
    e.key = key;
    e.arch = "sm_90";
    e.config_id = "BLOCK=128";
    const fs::path tmp = cache.temp_path(key, ".cubin");
    write(tmp, cubin);
    return cache.store(e, tmp);
  }

  fs::path dir_, cache_dir_, root_;
  std::string location_, faults_, nginx_;
  std::vector<std::string> warnings_;
};

TEST_F(RemoteStoreTest, UploadThenFetchIntoAnotherCache) {
  const KernelCache a(dir_ / "a");
  const KernelCache b(dir_ / "b");
  const std::string key = key_of("k");
  const CacheEntry e = stored_entry(a, key, "cubin bytes");
  auto up = remote();
  ASSERT_TRUE(up->upload_entry(a, e));
  EXPECT_EQ(up->stats().uploads, 2);
  EXPECT_TRUE(fs::exists(root_ / "cas" / sha256_hex("cubin bytes")));
  EXPECT_TRUE(fs::exists(root_ / "ac" / key));

  auto down = remote();
  std::optional<CacheEntry> got = down->fetch_entry(b, request_of(key));
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->cubin_sha256, sha256_hex("cubin bytes"));
  EXPECT_EQ(read_file(b.cubin_path(key)), "cubin bytes");
  EXPECT_TRUE(b.lookup(key).has_value());
  EXPECT_EQ(down->stats().hits, 1);
  EXPECT_TRUE(warnings_.empty());
}

TEST_F(RemoteStoreTest, AMissIsQuiet) {
  const KernelCache b(cache_dir_);
  auto r = remote();
  EXPECT_FALSE(r->fetch_entry(b, request_of(key_of("absent"))).has_value());
  EXPECT_EQ(r->stats().misses, 1);
  EXPECT_TRUE(r->reachable());
  EXPECT_TRUE(warnings_.empty());
}

TEST_F(RemoteStoreTest, AnInvalidEntryIsSharedButNeverBelievedFromTheStore) {
  // docs/trust.md: another host's `failed` (a forgery, or its own trouble) never excludes a
  // candidate here: no answer, so the candidate is compiled here.
  const KernelCache a(dir_ / "a");
  const KernelCache b(dir_ / "b");
  for (CacheStatus status :
       {CacheStatus::failed, CacheStatus::over_limit, CacheStatus::timed_out}) {
    CacheEntry e;
    e.key = key_of(std::string(to_string(status)));
    e.arch = "sm_90";
    e.config_id = "BLOCK=128";
    e.status = status;
    e.reason = "the compiler exited with status 1";
    e.compile_s = 1e308;
    e = a.store(e, std::nullopt);
    ASSERT_TRUE(remote()->upload_entry(a, e));
    EXPECT_TRUE(fs::exists(root_ / "ac" / e.key));
    EXPECT_FALSE(remote()->fetch_entry(b, request_of(e.key)).has_value()) << to_string(status);
    EXPECT_FALSE(fs::exists(b.entry_path(e.key)));
  }
  EXPECT_TRUE(warnings_.empty());
}

TEST_F(RemoteStoreTest, AnEntryOfAnotherCandidateUnderTheKeyIsRefused) {
  // docs/trust.md: an entry that names another config (its blob, digest and argv copied under
  // this key) is not this key's candidate.
  const KernelCache a(dir_ / "a");
  const KernelCache b(dir_ / "b");
  const std::string key = key_of("k");
  CacheEntry e = stored_entry(a, key, "another config's bytes");
  ASSERT_TRUE(remote()->upload_entry(a, e));
  CompileRequest want = request_of(key);
  want.config_id = "BLOCK=32";
  EXPECT_FALSE(remote()->fetch_entry(b, want).has_value());
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_NE(warnings_[0].find(fmt::format("ac/{} is not the entry of its key: its config is "
                                          "'BLOCK=128', the key's is 'BLOCK=32'",
                                          key)),
            std::string::npos)
      << warnings_[0];
  // The keyed argv too: a forger who fixes the config id still names another compile.
  want = request_of(key);
  want.argv_keyed = {"nvcc", "-DBLOCK=32"};
  EXPECT_FALSE(remote()->fetch_entry(b, want).has_value());
  EXPECT_FALSE(fs::exists(b.cubin_path(key)));
}

TEST_F(RemoteStoreTest, ACorruptBlobIsAWarningAndNothingIsWritten) {
  const KernelCache a(dir_ / "a");
  const KernelCache b(dir_ / "b");
  const std::string key = key_of("k");
  const CacheEntry e = stored_entry(a, key, "good bytes");
  ASSERT_TRUE(remote()->upload_entry(a, e));
  // The server's copy goes bad (a disk, a proxy): the digest no longer matches.
  write(root_ / "cas" / e.cubin_sha256, "evil bytes");
  auto r = remote();
  EXPECT_FALSE(r->fetch_entry(b, request_of(key)).has_value());
  EXPECT_FALSE(fs::exists(b.cubin_path(key)));
  EXPECT_FALSE(fs::exists(b.entry_path(key)));
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_EQ(warnings_[0], fmt::format("remote store '{}': cas/{} does not match its digest (its "
                                      "sha256 is {}); compiling locally",
                                      location_, e.cubin_sha256, sha256_hex("evil bytes")));
  EXPECT_EQ(r->stats().corrupt, 1);
  EXPECT_TRUE(r->reachable());
}

TEST_F(RemoteStoreTest, AnEntryOfAnotherKeyIsRefused) {
  const KernelCache a(dir_ / "a");
  const KernelCache b(dir_ / "b");
  const CacheEntry e = stored_entry(a, key_of("one"), "bytes");
  ASSERT_TRUE(remote()->upload_entry(a, e));
  const std::string other = key_of("two");
  write(root_ / "ac" / other, json(e).dump());
  EXPECT_FALSE(remote()->fetch_entry(b, request_of(other)).has_value());
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_NE(warnings_[0].find("holds the entry of another key"), std::string::npos);
}

TEST_F(RemoteStoreTest, TheCandidateStoreDownloadsInsteadOfCompiling) {
  const KernelCache a(dir_ / "a");
  const KernelCache b(dir_ / "b");
  const std::string key = key_of("k");
  const CacheEntry e = stored_entry(a, key, "compiled elsewhere");
  ASSERT_TRUE(remote()->upload_entry(a, e));
  CompileRequest request;
  request.key = key;
  request.arch = "sm_90";
  request.config_id = "BLOCK=128";
  request.command = [](const fs::path&) -> std::vector<std::string> {
    ADD_FAILURE() << "the compiler ran";
    return {"/bin/false"};
  };
  auto r = remote();
  const CompileOutcome out = CandidateStore(b, r.get(), dir_ / "compile.log").get(request);
  EXPECT_FALSE(out.compiled);
  EXPECT_TRUE(out.downloaded);
  EXPECT_FALSE(fs::exists(dir_ / "compile.log"));
}

TEST_F(RemoteStoreTest, TheCandidateStorePublishesWhatItCompiles) {
  const KernelCache b(cache_dir_);
  const std::string key = key_of("k");
  CompileRequest request;
  request.key = key;
  request.arch = "sm_90";
  request.config_id = "BLOCK=128";
  request.command = [](const fs::path& out) -> std::vector<std::string> {
    return {"/bin/sh", "-c", "printf 'fresh cubin' > \"$1\"", "sh", out.string()};
  };
  auto r = remote();
  const CompileOutcome out = CandidateStore(b, r.get(), dir_ / "compile.log").get(request);
  EXPECT_TRUE(out.compiled);
  ASSERT_TRUE(out.entry.valid());
  EXPECT_EQ(read_file(root_ / "cas" / sha256_hex("fresh cubin")), "fresh cubin");
  EXPECT_EQ(json::parse(read_file(root_ / "ac" / key))["cubin_sha256"], sha256_hex("fresh cubin"));
}

TEST_F(RemoteStoreTest, TheCandidateStoreAsksItsLayersInTurn) {
  // The local cache first (the store is not asked), then the remote store, never the compiler
  // for `find`.
  const KernelCache a(dir_ / "a");
  const KernelCache b(dir_ / "b");
  const std::string here = key_of("here");
  const std::string there = key_of("there");
  stored_entry(b, here, "local bytes");
  ASSERT_TRUE(remote()->upload_entry(a, stored_entry(a, there, "remote bytes")));
  auto r = remote();
  const CandidateStore store(b, r.get(), dir_ / "compile.log");
  ASSERT_TRUE(store.find(request_of(here)).has_value());
  EXPECT_EQ(r->stats().hits + r->stats().misses, 0);
  std::optional<CacheEntry> fetched = store.find(request_of(there));
  ASSERT_TRUE(fetched.has_value());
  EXPECT_EQ(read_file(b.cubin_path(there)), "remote bytes");
  EXPECT_FALSE(store.find(request_of(key_of("nowhere"))).has_value());
  EXPECT_FALSE(fs::exists(dir_ / "compile.log"));
}

TEST_F(RemoteStoreTest, AnUnreachableStoreWarnsOnceAndStaysLocal) {
  // A port nobody listens on: bound, then closed.
  const std::string url = "http://127.0.0.1:9/nothing";
  const KernelCache b(cache_dir_);
  result<std::unique_ptr<Store>> s = open_store(url, "test");
  ASSERT_TRUE(s.has_value());
  HttpOptions quick;
  quick.attempts = 2;
  quick.backoff_s = 0.01;
  RemoteStore r(
      open_http_store(url, quick), [this](const std::string& w) { warnings_.push_back(w); },
      dir_ / "down");
  EXPECT_FALSE(r.fetch_entry(b, request_of(key_of("a"))).has_value());
  EXPECT_FALSE(r.fetch_entry(b, request_of(key_of("b"))).has_value());
  EXPECT_FALSE(r.reachable());
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_EQ(warnings_[0].rfind("remote store 'http://127.0.0.1:9/nothing' is unreachable (", 0), 0u)
      << warnings_[0];
  EXPECT_NE(warnings_[0].find("); working locally"), std::string::npos);
  // The next process of the same run is quiet and local from the start.
  RemoteStore next(
      open_http_store(url, quick), [this](const std::string& w) { warnings_.push_back(w); },
      dir_ / "down");
  EXPECT_FALSE(next.reachable());
  EXPECT_EQ(warnings_.size(), 1u);
}

TEST_F(RemoteStoreTest, AnUnreachableStoreWarnsOnceToSeveralThreads) {
  // Compile-ahead's threads share one RemoteStore: the store is found down once, with one
  // warning, however many transfers fail together. Several rounds: the failures must coincide.
  const std::string url = "http://127.0.0.1:9/nothing";
  const KernelCache b(cache_dir_);
  HttpOptions quick;
  quick.attempts = 1;
  constexpr int threads_n = 8;
  for (int round = 0; round < 8; ++round) {
    std::mutex m;
    int warned = 0;
    RemoteStore r(open_http_store(url, quick), [&](const std::string&) {
      const std::lock_guard<std::mutex> lock(m);
      ++warned;
    });
    std::latch together(threads_n);  // every thread's first fetch fails at about the same time
    std::vector<std::thread> threads;
    for (int i = 0; i < threads_n; ++i)
      threads.emplace_back([&, i] {
        together.arrive_and_wait();
        for (int j = 0; j < 4; ++j)
          EXPECT_FALSE(
              r.fetch_entry(b, request_of(key_of(fmt::format("{}.{}", i, j)))).has_value());
      });
    for (std::thread& t : threads)
      t.join();
    EXPECT_FALSE(r.reachable());
    EXPECT_EQ(warned, 1) << "round " << round;
  }
}

TEST_F(RemoteStoreTest, OneStoreOnSeveralThreadsCountsEveryTransfer) {
  const KernelCache a(dir_ / "a");
  const KernelCache b(dir_ / "b");
  constexpr int threads_n = 8, per_thread = 16;
  std::vector<CacheEntry> entries;
  for (int i = 0; i < threads_n * per_thread; ++i)
    entries.push_back(stored_entry(a, key_of(fmt::format("k{}", i)), fmt::format("cubin {}", i)));
  auto on_threads = [&](auto work) {
    std::vector<std::thread> threads;
    for (int t = 0; t < threads_n; ++t)
      threads.emplace_back([&, t] {
        for (int i = t * per_thread; i < (t + 1) * per_thread; ++i)
          work(entries[static_cast<std::size_t>(i)]);
      });
    for (std::thread& t : threads)
      t.join();
  };
  auto up = remote();
  on_threads([&](const CacheEntry& e) { EXPECT_TRUE(up->upload_entry(a, e)); });
  EXPECT_EQ(up->stats().uploads, 2 * threads_n * per_thread);  // each cubin, then its entry
  auto down = remote();
  on_threads([&](const CacheEntry& e) {
    EXPECT_TRUE(down->fetch_entry(b, request_of(e.key)).has_value());
  });
  EXPECT_EQ(down->stats().hits, threads_n * per_thread);
  for (const CacheEntry& e : entries)
    EXPECT_EQ(read_file(b.cubin_path(e.key)), read_file(a.cubin_path(e.key)));
  EXPECT_TRUE(warnings_.empty());
}

TEST_F(RemoteStoreTest, LocationsAndCredentials) {
  EXPECT_FALSE(open_store("relative/dir", "x").has_value());
  result<std::unique_ptr<Store>> creds = open_store("https://me:secret@example.com/p", "x");
  ASSERT_FALSE(creds.has_value());
  EXPECT_EQ(creds.error().message.find("secret"), std::string::npos);
  EXPECT_NE(creds.error().message.find("holds credentials"), std::string::npos);
  result<std::unique_ptr<Store>> d = open_store("file:///tmp/x", "x");
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ((*d)->where(), "/tmp/x");
  for (const char* leaky :
       {"HTTP://bob:s3cr3t@host/store", "Https://bob@host/s3cr3t", "ftp://bob:s3cr3t@host/",
        "http://host/store?token=s3cr3t", "http://host/store#s3cr3t",
        "http://host/store/../../etc/s3cr3t", "http://host/store/%2E%2e/s3cr3t",
        "/srv/store/../s3cr3t", "file:///srv/./s3cr3t", "s3cr3t/relative", "http:///s3cr3t"}) {
    result<std::unique_ptr<Store>> r = open_store(leaky, "x");
    ASSERT_FALSE(r.has_value()) << leaky;
    EXPECT_EQ(r.error().str().find("s3cr3t"), std::string::npos) << r.error().str();
  }
  result<std::unique_ptr<Store>> upper = open_store("FILE:///tmp/x", "x");
  ASSERT_TRUE(upper.has_value());
  EXPECT_EQ((*upper)->where(), "/tmp/x");
  // A location reads back as itself (a manifest holds it): the slashes and blanks at its end
  // go together, and a host with a blank is refused (the fuzz target store_location found
  // `HTTPS://Ce///Cache/Te/ /` read as `.../Te ` and then as `.../Te`).
  result<StoreLocation> ends = parse_store_location(" HTTPS://Ce///Cache/Te/ /", "x");
  ASSERT_TRUE(ends.has_value());
  EXPECT_EQ(ends->text, "https://Ce///Cache/Te");
  EXPECT_EQ(parse_store_location(ends->text, "x")->text, ends->text);
  EXPECT_FALSE(parse_store_location(" HTTPS://aTe/S://aTe/// ///  //.  /", "x").has_value());
  result<StoreLocation> blank = parse_store_location("https:// /s3cr3t", "x");
  ASSERT_FALSE(blank.has_value());
  EXPECT_NE(blank.error().message.find("host holds a blank"), std::string::npos);
  EXPECT_EQ(remote_location("off", "http://a"), "");
  EXPECT_EQ(remote_location("http://cli", "http://a"), "http://cli");
  EXPECT_FALSE(valid_store_path("cas/../../etc/passwd"));
  EXPECT_TRUE(valid_store_path("ac/" + std::string(64, 'a')));
}

TEST_F(RemoteStoreTest, AStoreAnsweringHtmlIsOneWarningThenLocal) {
  KernelCache cache(cache_dir_);
  std::vector<std::string> keys;
  for (int i = 0; i < 3; ++i) {
    keys.push_back(key_of("html" + std::to_string(i)));
    write(root_ / "ac" / keys.back(), "<!DOCTYPE html><html><body>Sign in</body></html>\n");
  }
  auto r = remote();
  for (const std::string& k : keys)
    EXPECT_FALSE(r->fetch_entry(cache, request_of(k)).has_value());
  EXPECT_FALSE(r->get_json("ac/" + keys.front()).has_value());
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_NE(warnings_[0].find("not JSON"), std::string::npos) << warnings_[0];
  EXPECT_FALSE(r->reachable());
}

TEST_F(RemoteStoreTest, AStoreAnsweringJsonThatIsNoEntryIsOneWarningThenLocal) {
  // `{}`, `[]`, `null`, `42` answered with 200 cost one warning per candidate.
  for (const char* body : {"{}", "[]", "null", "42", "{\"error\": \"not found\"}"}) {
    warnings_.clear();
    fs::remove_all(root_);
    KernelCache cache(cache_dir_);
    std::vector<std::string> keys;
    for (int i = 0; i < 3; ++i) {
      keys.push_back(key_of(std::string(body) + std::to_string(i)));
      write(root_ / "ac" / keys.back(), std::string(body) + "\n");
    }
    auto r = remote();
    for (const std::string& k : keys)
      EXPECT_FALSE(r->fetch_entry(cache, request_of(k)).has_value());
    ASSERT_EQ(warnings_.size(), 1u) << body;
    EXPECT_NE(warnings_[0].find("JSON that is not a cache entry"), std::string::npos)
        << warnings_[0];
    EXPECT_FALSE(r->reachable()) << body;
  }
}

TEST_F(RemoteStoreTest, AnEntryOrATrialThatSaysAKeyTwiceIsRefused) {
  // The readers of the store's objects keep the record's rule: a parser takes the last of a key
  // said twice (`"status": "ok", "status": "failed"`), which a forger would use. One reader of
  // entries (read_cache_entry) for the store and the local cache.
  const KernelCache a(dir_ / "a");
  const KernelCache b(dir_ / "b");
  const std::string key = key_of("twice");
  const CacheEntry e = stored_entry(a, key, "bytes");
  ASSERT_TRUE(remote()->upload_entry(a, e));
  const fs::path object = root_ / "ac" / key;
  std::string text = read_file(object);
  const std::size_t at = text.find("\"status\"");
  ASSERT_NE(at, std::string::npos);
  text.insert(at, "\"status\": \"failed\", ");
  write(object, text);
  auto r = remote();
  EXPECT_FALSE(r->fetch_entry(b, request_of(key)).has_value());
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_EQ(warnings_[0], fmt::format("remote store '{}': ac/{} is not a cache entry: key 'status' "
                                      "appears twice in one object: keep one of them (a reader "
                                      "would silently take the last); compiling locally",
                                      location_, key));
  EXPECT_TRUE(r->reachable());
  write(a.entry_path(key), text);  // the local cache reads it so too: a miss
  EXPECT_FALSE(a.lookup(key).has_value());
  EXPECT_FALSE(parse_store_json(R"({"trial": {"median_ms": 1, "median_ms": 0.001}})"));
  EXPECT_TRUE(parse_store_json(R"({"a": {"m": 1}, "b": {"m": 2}})"));
}

TEST_F(RemoteStoreTest, GcRemovesOnlyTheStoresOwnOldNames) {
  const fs::path d = dir_ / "gc";
  const std::string hex(64, 'a');
  const fs::path object = d / "cas" / hex;
  const fs::path temporary = d / "ac" / ("." + hex + ".tmp.123.4");
  const std::vector<fs::path> foreign = {d / "cas" / "README", d / "ac" / std::string(64, 'A'),
                                         d / "ac" / ("." + hex + ".tmp.x.4"),
                                         d / "cas" / (hex + ".bak")};
  const auto year_ago = fs::file_time_type::clock::now() - std::chrono::hours(24 * 365);
  for (const fs::path& p : foreign) {
    write(p, "not ours");
    fs::last_write_time(p, year_ago);
  }
  write(object, "old");
  write(temporary, "left by a writer that died");
  fs::last_write_time(object, year_ago);
  fs::last_write_time(temporary, year_ago);
  // A huge keep_days keeps every object, never an overflow into "everything is old"; the
  // temporary a writer left a year ago goes all the same.
  EXPECT_EQ(gc_directory_store(d, 1e300).removed, 1);
  EXPECT_FALSE(fs::exists(temporary));
  EXPECT_EQ(gc_directory_store(d, 1e15).removed, 0);
  EXPECT_TRUE(fs::exists(object));
  EXPECT_THROW(gc_directory_store(d, std::nan("")), error);
  EXPECT_THROW(gc_directory_store(d, -1), error);
  const GcCounts c = gc_directory_store(d, 30);
  EXPECT_EQ(c.removed, 1);
  EXPECT_FALSE(fs::exists(object));
  for (const fs::path& p : foreign)
    EXPECT_TRUE(fs::exists(p)) << p;
  EXPECT_TRUE(is_store_object_name(hex));
  EXPECT_FALSE(is_store_object_name("." + hex + ".tmp.1."));
}

// A stand-in objective: every candidate measures 1 ms, and counts how often it was asked.
class CountingObjective : public Objective {
 public:
  explicit CountingObjective(std::vector<Config> configs) : configs_(std::move(configs)) {}
  const std::vector<Config>& configs() override { return configs_; }
  Trial measure(std::size_t index) override {
    ++measured;
    Trial t = Trial::measured(1.0 + static_cast<double>(index), 1.0, 10);
    t.device = "Fake GPU";
    return t;
  }
  std::optional<std::string> cache_key(std::size_t index) override {
    return sha256_hex("key" + std::to_string(index));
  }
  int measured = 0;

 private:
  std::vector<Config> configs_;
};

std::vector<Config> three_configs() {
  std::vector<Config> out;
  for (int b : {64, 128, 256}) {
    Config c;
    c.set("BLOCK", b);
    out.push_back(c);
  }
  return out;
}

SharedTrials::Context context(bool adopt, std::string host) {
  SharedTrials::Context c;
  c.bucket.name = "n<=4096";
  c.host = std::move(host);
  c.adopt = adopt;
  c.incumbents = {0};
  c.device = [] { return std::pair<std::string, std::string>{"Fake GPU", "999.1"}; };
  return c;
}

TEST_F(RemoteStoreTest, TrialsAreAdoptedExceptIncumbents) {
  auto r = remote();
  CountingObjective first(three_configs());
  SharedTrials a(first, *r, context(true, "gpu-a"));
  for (std::size_t i = 0; i < 3; ++i)
    a.measure(i);
  EXPECT_EQ(first.measured, 3);
  EXPECT_EQ(a.uploaded(), 3u);

  CountingObjective second(three_configs());
  SharedTrials b(second, *r, context(true, "gpu-b"));
  const Trial inc = b.measure(0);
  const Trial t1 = b.measure(1);
  const Trial t2 = b.measure(2);
  EXPECT_EQ(second.measured, 1);  // the incumbent only
  EXPECT_FALSE(inc.remote.has_value());
  ASSERT_TRUE(t1.remote.has_value());
  EXPECT_EQ(*t1.remote, "gpu-a");
  EXPECT_EQ(t1.state.measured()->median_ms, 2.0);
  EXPECT_EQ(t2.state.measured()->median_ms, 3.0);
  EXPECT_EQ(b.adopted(), 2u);
  // The log line says where it came from.
  EXPECT_EQ(to_json(t1)["remote"], "gpu-a");
  EXPECT_TRUE(trial_from_json(to_json(t1)).has_value());
}

TEST_F(RemoteStoreTest, RemoteNamesArePrintedEscapedAndOtherDevicesNotAdopted) {
  auto r = remote();
  CountingObjective first(three_configs());
  SharedTrials a(first, *r, context(true, "gpu\x1b]0;owned\x07\x1b[2J"));
  a.measure(1);
  CountingObjective second(three_configs());
  SharedTrials b(second, *r, context(true, "gpu-b"));
  const Trial t = b.measure(1);
  ASSERT_TRUE(t.remote.has_value());
  const std::string line = describe_trial(Progress{1, 3, t, false, std::nullopt, 0, std::nullopt});
  EXPECT_EQ(line.find('\x1b'), std::string::npos) << line;
  EXPECT_NE(line.find("(remote, measured on gpu\\x1b]0;owned\\x07\\x1b[2J, Fake GPU)"),
            std::string::npos)
      << line;

  // An object at this key that names another driver (or a 300-byte host) is not adopted.
  const std::string key = shared_trial_key(sha256_hex("key2"), "Fake GPU", "999.1",
                                           context(true, "").bucket, BenchSettings{});
  SharedTrial forged{Trial::measured(0.001, 0.001, 10), "x", "Fake GPU", "1.0"};
  forged.trial.config = three_configs()[2];
  forged.trial.cache_key = sha256_hex("key2");
  ASSERT_TRUE(r->put_json("ac/" + key, to_json(forged)));
  CountingObjective third(three_configs());
  SharedTrials c(third, *r, context(true, "gpu-c"));
  EXPECT_FALSE(c.measure(2).remote.has_value());
  forged.driver = "999.1";
  forged.host = std::string(300, 'h');
  ASSERT_TRUE(r->put_json("ac/" + key, to_json(forged)));
  EXPECT_FALSE(c.measure(2).remote.has_value());
  EXPECT_EQ(third.measured, 2);
}

// SharedTrials changes only measure; every other virtual is the inner objective's
// (ForwardingObjective).
TEST_F(RemoteStoreTest, SharedTrialsForwardEverythingButMeasure) {
  struct Finalists : CountingObjective {
    using CountingObjective::CountingObjective;
    std::optional<double> budget_remaining() override { return 5.0; }
    std::optional<RunoffPairs> runoff(std::size_t incumbent, std::size_t challenger) override {
      RunoffPairs p;
      p.incumbent_ms = {static_cast<double>(incumbent)};
      p.challenger_ms = {static_cast<double>(challenger)};
      return p;
    }
  };
  auto r = remote();
  Finalists inner(three_configs());
  SharedTrials shared(inner, *r, context(true, "gpu-a"));
  EXPECT_EQ(&shared.configs(), &inner.configs());
  EXPECT_EQ(shared.budget_remaining(), 5.0);
  EXPECT_EQ(shared.cache_key(2), inner.cache_key(2));
  const std::optional<RunoffPairs> pairs = shared.runoff(1, 2);
  ASSERT_TRUE(pairs.has_value());
  EXPECT_EQ(pairs->incumbent_ms, std::vector<double>{1.0});
  EXPECT_EQ(pairs->challenger_ms, std::vector<double>{2.0});
  EXPECT_EQ(inner.measured, 0);
}

TEST_F(RemoteStoreTest, NoRemoteTrialsMeasuresEverything) {
  auto r = remote();
  CountingObjective first(three_configs());
  SharedTrials a(first, *r, context(true, "gpu-a"));
  for (std::size_t i = 0; i < 3; ++i)
    a.measure(i);
  CountingObjective second(three_configs());
  SharedTrials b(second, *r, context(false, "gpu-b"));
  for (std::size_t i = 0; i < 3; ++i)
    EXPECT_FALSE(b.measure(i).remote.has_value());
  EXPECT_EQ(second.measured, 3);
}

// Issue 35: shared trials planted in the store that give two slow configs fast times decided the
// finalists, and the record took their medians. The search measures adopted finalists here: the
// truly fastest wins with its median measured here, and the measurements replace the planted
// trials in the store.
TEST_F(RemoteStoreTest, PlantedSharedTrialsAreCheckedHereAndReplaced) {
  auto r = remote();
  std::vector<Config> configs;
  for (int b : {32, 64, 128, 256, 512}) {
    Config c;
    c.set("BLOCK", b);
    configs.push_back(c);
  }
  // Measured here, config i takes 1 + i ms: BLOCK=32 is the fastest. The store says 0.3 ms for
  // BLOCK=256 and BLOCK=512.
  const SharedTrials::Context c = context(true, "gpu-b");
  std::map<std::size_t, std::string> planted;
  for (std::size_t i : {3u, 4u}) {
    const std::string key = shared_trial_key(sha256_hex("key" + std::to_string(i)), "Fake GPU",
                                             "999.1", c.bucket, BenchSettings{});
    SharedTrial forged{Trial::measured(0.3, 0.3, 10), "mallory", "Fake GPU", "999.1"};
    forged.trial.config = configs[i];
    forged.trial.cache_key = sha256_hex("key" + std::to_string(i));
    ASSERT_TRUE(r->put_json("ac/" + key, to_json(forged)));
    planted[i] = key;
  }
  CountingObjective here(configs);
  SharedTrials shared(here, *r, c);
  std::vector<std::string> warnings;
  std::vector<std::string> lines;
  result<Output> out =
      Autotuner("k/n<=4096")
          .arch("sm_90")
          .log(dir_ / "k.trials.jsonl")
          .on_warning([&](const std::string& w) { warnings.push_back(w); })
          .on_progress([&](const Progress& p) { lines.push_back(describe_trial(p)); })
          .run_objective(shared);
  ASSERT_TRUE(out) << out.error().str();
  EXPECT_EQ(shared.adopted(), 2u);
  EXPECT_EQ(here.measured, 5);  // three in the search, the two adopted finalists to check them
  ASSERT_TRUE(out->best);
  EXPECT_EQ(out->best->id(), "BLOCK=32");
  const Trial& best = out->trials[*out->best_index];
  EXPECT_FALSE(best.adopted());
  EXPECT_DOUBLE_EQ(best.state.measured()->median_ms, 1.0);
  EXPECT_EQ(out->discarded.size(), 2u);
  ASSERT_FALSE(warnings.empty());
  EXPECT_NE(warnings[0].find("the remote store (measured on mallory) said 0.3 ms"),
            std::string::npos)
      << warnings[0];
  const std::string line =
      describe_trial(Progress{5, 5, out->trials[3], false, std::nullopt, 0, std::nullopt});
  EXPECT_NE(line.find("BLOCK=256 4.0000 ms (10 reps) (measured here to check 0.3 ms from the "
                      "remote store (measured on mallory): discarded)"),
            std::string::npos)
      << line;
  // The progress lines: the checks come after the search, numbered apart; once the planted
  // 0.3 ms trials are discarded, the best is what may still win (1 ms), not what they said.
  const auto first_check = std::find_if(
      lines.begin(), lines.end(), [](const std::string& l) { return l.starts_with("[check] "); });
  ASSERT_NE(first_check, lines.begin());
  ASSERT_NE(first_check, lines.end());
  EXPECT_EQ((first_check - 1)->substr(0, 1), "[");
  EXPECT_NE((first_check - 1)->find("; best 0.3000 ms"), std::string::npos) << *(first_check - 1);
  EXPECT_TRUE(lines.back().starts_with("[check] ")) << lines.back();
  EXPECT_NE(lines.back().find("; best 1.0000 ms"), std::string::npos) << lines.back();
  // What was measured here replaced the planted trials in the store.
  for (const auto& [i, key] : planted) {
    std::optional<json> j = r->get_json("ac/" + key);
    ASSERT_TRUE(j.has_value());
    result<SharedTrial> now = shared_trial_from_json(*j);
    ASSERT_TRUE(now) << now.error().str();
    EXPECT_EQ(now->host, "gpu-b");
    EXPECT_DOUBLE_EQ(now->trial.state.measured()->median_ms, 1.0 + static_cast<double>(i));
  }
}

TEST_F(RemoteStoreTest, OtherDevicesAndBenchSettingsAreOtherKeys) {
  Bucket bucket;
  bucket.name = "b";
  const std::string k = sha256_hex("key");
  const std::string base = shared_trial_key(k, "NVIDIA H200", "580.1", bucket, {});
  EXPECT_NE(base, shared_trial_key(k, "NVIDIA H100", "580.1", bucket, {}));
  EXPECT_NE(base, shared_trial_key(k, "NVIDIA H200", "575.0", bucket, {}));
  BenchSettings other;
  other.rep_ms = 200;
  EXPECT_NE(base, shared_trial_key(k, "NVIDIA H200", "580.1", bucket, other));
  Bucket shaped = bucket;
  shaped.shape.push_back({"n", ParamValue(4096)});
  EXPECT_NE(base, shared_trial_key(k, "NVIDIA H200", "580.1", shaped, {}));
}

#ifdef TUNE_TEST_HTTP

std::unique_ptr<RemoteStore> quick(const std::string& url, std::vector<std::string>& warnings,
                                   int attempts = 3) {
  HttpOptions o;
  o.attempts = attempts;
  o.backoff_s = 0.01;
  o.timeout_s = 1;
  o.connect_timeout_s = 0.5;
  return std::make_unique<RemoteStore>(
      open_http_store(url, o), [&warnings](const std::string& w) { warnings.push_back(w); });
}

TEST_F(RemoteStoreTest, ServerErrorsAreRetriedThenLocal) {
  const KernelCache b(cache_dir_);
  auto r = quick(nginx_ + "/fail500", warnings_);
  EXPECT_FALSE(r->fetch_entry(b, request_of(key_of("k"))).has_value());
  EXPECT_FALSE(r->reachable());
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_NE(warnings_[0].find("answered HTTP 500"), std::string::npos) << warnings_[0];
}

TEST_F(RemoteStoreTest, ATransient503IsRetried) {
  const KernelCache a(dir_ / "a");
  const KernelCache b(dir_ / "b");
  const std::string key = key_of("k");
  const CacheEntry e = stored_entry(a, key, "flaky bytes");
  const std::string url = faults_ + "/flaky/" + key_of("prefix").substr(0, 8);
  EXPECT_TRUE(quick(url, warnings_)->upload_entry(a, e));
  EXPECT_TRUE(quick(url, warnings_)->fetch_entry(b, request_of(key)).has_value());
  EXPECT_TRUE(warnings_.empty()) << warnings_[0];
}

TEST_F(RemoteStoreTest, APartialBodyIsNeverUsed) {
  const KernelCache b(cache_dir_);
  auto r = quick(faults_ + "/truncate", warnings_, 2);
  EXPECT_FALSE(r->fetch_entry(b, request_of(key_of("k"))).has_value());
  EXPECT_FALSE(fs::exists(b.entry_path(key_of("k"))));
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_NE(warnings_[0].find("unreachable"), std::string::npos) << warnings_[0];
}

TEST_F(RemoteStoreTest, ASlowServerTimesOutInBoundedTime) {
  const KernelCache b(cache_dir_);
  auto r = quick(faults_ + "/slow", warnings_, 2);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(r->fetch_entry(b, request_of(key_of("k"))).has_value());
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(took, 4.0);
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_NE(warnings_[0].find("unreachable"), std::string::npos) << warnings_[0];
}

TEST_F(RemoteStoreTest, RedirectsAreFollowedForReads) {
  const KernelCache a(dir_ / "a");
  const KernelCache b(dir_ / "b");
  const std::string key = key_of("k");
  const CacheEntry e = stored_entry(a, key, "moved bytes");
  ASSERT_TRUE(remote()->upload_entry(a, e));
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  auto r = quick(nginx_ + "/moved/" + info->name(), warnings_);
  EXPECT_TRUE(r->fetch_entry(b, request_of(key)).has_value());
  EXPECT_TRUE(warnings_.empty());
}

TEST_F(RemoteStoreTest, ARefusedUploadStopsUploadsButNotReads) {
  const KernelCache a(dir_ / "a");
  auto r = quick(nginx_ + "/forbidden", warnings_);
  EXPECT_FALSE(r->upload_entry(a, stored_entry(a, key_of("k"), "x")));
  EXPECT_FALSE(r->upload_entry(a, stored_entry(a, key_of("l"), "y")));
  EXPECT_TRUE(r->reachable());
  EXPECT_FALSE(r->uploading());
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_NE(warnings_[0].find("refused an upload"), std::string::npos) << warnings_[0];
  EXPECT_NE(warnings_[0].find("HTTP 403"), std::string::npos) << warnings_[0];
}

TEST_F(RemoteStoreTest, ConcurrentUploadsOfOneKeyLeaveOneWholeObject) {
  const KernelCache a(dir_ / "a");
  const std::string key = key_of("k");
  const CacheEntry e = stored_entry(a, key, std::string(1 << 20, 'c'));
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&] { EXPECT_TRUE(remote()->upload_entry(a, e)); });
  for (std::thread& t : threads)
    t.join();
  EXPECT_EQ(sha256_file(root_ / "cas" / e.cubin_sha256), e.cubin_sha256);
  const KernelCache b(dir_ / "b");
  EXPECT_TRUE(remote()->fetch_entry(b, request_of(key)).has_value());
}

// A store behind credentials or TLS, with `options` (quick timeouts, the fixture's CA unless
// `with_ca` is false).
std::unique_ptr<RemoteStore> secured(const std::string& url, HttpOptions o,
                                     std::vector<std::string>& warnings) {
  o.attempts = 2;
  o.backoff_s = 0.01;
  o.timeout_s = 5;
  o.connect_timeout_s = 2;
  return std::make_unique<RemoteStore>(
      open_http_store(url, o), [&warnings](const std::string& w) { warnings.push_back(w); });
}

// Whether any warning holds `secret`.
bool leaks(const std::vector<std::string>& warnings, const std::string& secret) {
  return std::any_of(warnings.begin(), warnings.end(),
                     [&](const std::string& w) { return w.find(secret) != std::string::npos; });
}

TEST_F(RemoteStoreTest, ABearerTokenIsSentAndNeverShown) {
  const json s = servers();
  const std::string token = s["bearer_token"];
  const std::string url = nginx_ + "/bearer/" + key_of("prefix").substr(0, 8);
  const KernelCache a(dir_ / "a");
  const KernelCache b(dir_ / "b");
  const std::string key = key_of("k");
  const CacheEntry e = stored_entry(a, key, "bearer bytes");

  // Without the token the server refuses the upload: one warning, and it names no secret.
  EXPECT_FALSE(secured(url, {}, warnings_)->upload_entry(a, e));
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_NE(warnings_[0].find("HTTP 401"), std::string::npos) << warnings_[0];
  warnings_.clear();

  HttpOptions wrong;
  wrong.bearer_token = "not-the-token";
  EXPECT_FALSE(secured(url, wrong, warnings_)->upload_entry(a, e));
  EXPECT_FALSE(leaks(warnings_, "not-the-token"));
  warnings_.clear();

  HttpOptions right;
  right.bearer_token = token;
  EXPECT_TRUE(secured(url, right, warnings_)->upload_entry(a, e));
  EXPECT_TRUE(secured(url, right, warnings_)->fetch_entry(b, request_of(key)).has_value());
  EXPECT_EQ(read_file(b.cubin_path(key)), "bearer bytes");
  EXPECT_TRUE(warnings_.empty()) << warnings_[0];
}

TEST_F(RemoteStoreTest, BasicAuthFromTheEnvironmentOrANetrcFile) {
  const json s = servers();
  const std::string user_password = s["basic_auth"];
  const std::string password = user_password.substr(user_password.find(':') + 1);
  const std::string url = nginx_ + "/basic/" + key_of("prefix").substr(0, 8);
  const KernelCache a(dir_ / "a");
  const std::string key = key_of("k");
  const CacheEntry e = stored_entry(a, key, "basic bytes");

  HttpOptions wrong;
  wrong.basic_auth = "tune:wrong-password";
  EXPECT_FALSE(secured(url, wrong, warnings_)->upload_entry(a, e));
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_NE(warnings_[0].find("HTTP 401"), std::string::npos) << warnings_[0];
  EXPECT_FALSE(leaks(warnings_, "wrong-password"));
  warnings_.clear();

  HttpOptions basic;
  basic.basic_auth = user_password;
  EXPECT_TRUE(secured(url, basic, warnings_)->upload_entry(a, e));

  // The same credentials from a netrc file, for the host of the URL.
  const fs::path netrc = dir_ / "netrc";
  write(netrc, fmt::format("machine 127.0.0.1 login tune password {}\n", password));
  HttpOptions from_file;
  from_file.netrc_file = netrc.string();
  const KernelCache b(dir_ / "b");
  EXPECT_TRUE(secured(url, from_file, warnings_)->fetch_entry(b, request_of(key)).has_value());
  EXPECT_EQ(read_file(b.cubin_path(key)), "basic bytes");
  EXPECT_TRUE(warnings_.empty()) << warnings_[0];
}

TEST_F(RemoteStoreTest, TlsIsVerifiedAgainstTheSystemOrTheGivenCaBundle) {
  const json s = servers();
  const std::string url = s["tls"].get<std::string>() + "/" + key_of("prefix").substr(0, 8);
  const KernelCache a(dir_ / "a");
  const std::string key = key_of("k");
  const CacheEntry e = stored_entry(a, key, "tls bytes");

  // The private CA is not in the system's bundle: the peer is not trusted, nothing is sent.
  const KernelCache b(dir_ / "b");
  auto untrusted = secured(url, {}, warnings_);
  EXPECT_FALSE(untrusted->fetch_entry(b, request_of(key)).has_value());
  EXPECT_FALSE(untrusted->reachable());
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_NE(warnings_[0].find("unreachable"), std::string::npos) << warnings_[0];
  EXPECT_NE(warnings_[0].find("certificate"), std::string::npos) << warnings_[0];
  warnings_.clear();
  auto refused = secured(url, {}, warnings_);
  EXPECT_FALSE(refused->upload_entry(a, e));
  ASSERT_EQ(warnings_.size(), 1u);
  EXPECT_NE(warnings_[0].find("certificate"), std::string::npos) << warnings_[0];
  warnings_.clear();

  HttpOptions with_ca;
  with_ca.ca_bundle = s["ca_bundle"].get<std::string>();
  EXPECT_TRUE(secured(url, with_ca, warnings_)->upload_entry(a, e));
  EXPECT_TRUE(secured(url, with_ca, warnings_)->fetch_entry(b, request_of(key)).has_value());
  EXPECT_EQ(read_file(b.cubin_path(key)), "tls bytes");
  EXPECT_TRUE(warnings_.empty()) << warnings_[0];
}

#endif

// A shared trial becomes a hint with its times as they were and none of the marks only this
// tune's own search makes: not the early rejection, the shared binary, the prior's rank, nor that
// the candidate needed no compile when proposed (that counts this search's window).
TEST(RemoteStoreJson, AHintKeepsItsTimesAndNoMarkOfThisTune) {
  Trial t = Trial::measured(1.5, 1.25, 10);
  t.rejected_early = true;
  t.same_binary = "BLOCK=64";
  t.prior_rank = 2;
  t.cached = true;
  const std::optional<Trial> hint = as_hint(t);
  ASSERT_TRUE(hint);
  ASSERT_TRUE(hint->state.measured());
  EXPECT_DOUBLE_EQ(hint->state.measured()->median_ms, 1.5);
  EXPECT_DOUBLE_EQ(hint->state.measured()->min_ms, 1.25);
  EXPECT_FALSE(hint->rejected_early);
  EXPECT_FALSE(hint->same_binary);
  EXPECT_FALSE(hint->prior_rank);
  EXPECT_FALSE(hint->cached);
}

// A shared trial is text anyone who can PUT wrote: one nesting 100,000 arrays deep is refused
// before it is parsed (a copy of it, as shared_trial_from_json makes, would recurse that deep).
TEST(RemoteStoreJson, DeepTextIsRefusedLikeText) {
  EXPECT_EQ(parse_store_json(R"({"schema_version": 1, "trial": {}})"),
            nlohmann::json({{"schema_version", 1}, {"trial", nlohmann::json::object()}}));
  EXPECT_FALSE(parse_store_json("<html>It works</html>"));
  EXPECT_FALSE(parse_store_json(R"({"trial": )" + std::string(100000, '[') +
                                std::string(100000, ']') + "}"));
}

// Found by fuzz_shared_trial (corpus crash_schema_version_object.json): a schema_version of
// another type threw out of json::value<int>, which ended the tune that asked the store. Any
// type is now read as a wrong version.
TEST(RemoteStoreJson, ASchemaVersionOfAnotherTypeIsAWrongVersion) {
  for (const char* version : {R"({"config_id": "BM=64"})", R"("1")", "[1]", "null", "1.5"}) {
    const nlohmann::json j = nlohmann::json::parse(
        std::string(R"({"host": "h", "device": "d", "driver": "r", "trial": {}, )") +
        R"("schema_version": )" + version + "}");
    result<SharedTrial> s = shared_trial_from_json(j);
    ASSERT_FALSE(s) << version;
    EXPECT_TRUE(s.error().message.starts_with("shared trial schema_version ")) << version;
  }
}

}  // namespace
}  // namespace tune
