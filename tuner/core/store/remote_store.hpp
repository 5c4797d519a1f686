// The remote store as warm, tune and `tuner store` use it (docs/store.md): the kernel cache's
// entries and blobs (`ac/<cache key>` names the digest of `cas/<sha256>`), and JSON objects such
// as shared trials. Every failure here is a warning and local work, never a failed build: the
// first read that gets no answer marks the store down for the rest of the process (one warning)
// and, through a marker beside the kernel cache, for the warm processes that start in the next
// minute; the first refused upload stops uploads the same way. A blob that does not match its
// digest is never used. One RemoteStore may be used from several threads at once (compile-ahead's
// compiles fetch and upload beside the search's thread); transfers run in parallel, and the
// store is marked down, and uploads stopped, once with one warning.
//
// Example:
//   std::unique_ptr<RemoteStore> remote = open_remote_store("", manifest.remote_store,
//       cache.dir(), [](const std::string& w) { fmt::print(stderr, "warning: {}\n", w); });
//   if (remote) entry = remote->fetch_entry(cache, compile_request(manifest, keyer, c, arch));
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include <tuner/core/build/kernel_cache.hpp>
#include <tuner/core/store/store.hpp>

namespace tune {

/// One process's traffic with the store.
struct RemoteStats {
  std::int64_t hits = 0;     ///< objects found (entries with their blob, JSON objects)
  std::int64_t misses = 0;   ///< objects the store does not have
  std::int64_t uploads = 0;  ///< objects written
  std::int64_t corrupt = 0;  ///< blobs or entries refused after download
  std::int64_t downloaded_bytes = 0;
  std::int64_t uploaded_bytes = 0;
};

/// A store with the policy of the tools.
class RemoteStore {
 public:
  /// `warn` gets each warning without a prefix (`remote store '...' is unreachable ...`).
  /// `down_marker`, when set, is the file that tells the next processes the store is down.
  RemoteStore(std::unique_ptr<Store> store, std::function<void(const std::string&)> warn,
              std::optional<std::filesystem::path> down_marker = std::nullopt);

  Store& store() noexcept { return *store_; }
  std::string where() const { return store_->where(); }
  /// False once a read got no answer (or a recent process found the store down).
  bool reachable() const noexcept { return !down_; }
  /// False once the store is down or refused an upload.
  bool uploading() const noexcept { return !down_ && !uploads_off_; }

  /// The entry of `key`, downloaded into `cache` (with its cubin, checked against the entry's
  /// digest before anything is written); nullopt when the store lacks it, is down, or sent
  /// something that does not check out (then with a warning).
  /// The entry must be the request's candidate and a valid one (tuner/core/store/trust.hpp:
  /// entry_mismatch, verdict_believed): another config's entry under this key is refused with a
  /// warning, and a negative verdict (failed, over_limit, timed_out) is no answer: nullopt, the
  /// candidate is compiled here and this host's verdict published.
  std::optional<CacheEntry> fetch_entry(const KernelCache& cache, const CompileRequest& request);
  /// Uploads a cache entry (its cubin to `cas/` first, so that an entry never names a missing
  /// blob, then the entry to `ac/<key>`). Best effort: false when it did not happen.
  bool upload_entry(const KernelCache& cache, const CacheEntry& entry);

  /// The JSON object at `path` (`ac/<hex>`); nullopt when missing, down or not JSON.
  std::optional<nlohmann::json> get_json(std::string_view path);
  /// Writes a JSON object at `path`; best effort, false when it did not happen.
  bool put_json(std::string_view path, const nlohmann::json& value);

  /// The traffic so far (a copy: other threads may be adding to it).
  RemoteStats stats() const;

 private:
  std::optional<std::string> get(std::string_view path);
  bool put(std::string_view path, std::string_view body);
  void mark_down(const std::string& reason);
  /// Adds to the traffic figures under the lock: `add(stats_)`.
  template <class Add>
  void count(Add add) {
    const std::lock_guard<std::mutex> lock(stats_mutex_);
    add(stats_);
  }

  std::unique_ptr<Store> store_;
  std::function<void(const std::string&)> warn_;
  std::optional<std::filesystem::path> down_marker_;
  std::atomic<bool> down_ = false;
  std::atomic<bool> uploads_off_ = false;
  mutable std::mutex stats_mutex_;
  RemoteStats stats_;
};

/// The JSON of an object the store answered (text anyone who can PUT may have written): nullopt
/// for text that is not JSON, that nests deeper than max_json_depth (a copy or a dump of it
/// would recurse that deep) or that says a key twice in one object (json_duplicate_key).
std::optional<nlohmann::json> parse_store_json(std::string_view text);

/// The location to use: `cli` (the --remote option) when given, else TUNE_REMOTE_STORE when set
/// and not empty, else `configured` (the manifest's, from the CMake cache variable). `off` at
/// any level turns the store off there. Empty when there is none.
std::string remote_location(std::string_view cli, std::string_view configured);

/// The store of `remote_location(cli, configured)`, or nullptr when there is none or it cannot
/// be used (a malformed location or a tuner without libcurl: then a warning, never an error;
/// one per minute and location, however many processes of a build ask). The down marker lives
/// in `cache_dir`.
std::unique_ptr<RemoteStore> open_remote_store(std::string_view cli, std::string_view configured,
                                               const std::filesystem::path& cache_dir,
                                               std::function<void(const std::string&)> warn);

}  // namespace tune
