// A remote store (docs/store.md): objects addressed by a short path, `cas/<sha256 of content>`
// for blobs and `ac/<key>` for small JSON entries, in the layout bazel-remote and an nginx
// WebDAV location serve over HTTP. Two implementations behind one interface: a directory (a
// shared file system, and what the tests check the policy layer against) and HTTP through
// libcurl. This layer moves bytes and says what happened; what to do about a failure (warn once,
// work locally) is remote_store.hpp's.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <tuner/core/base/result.hpp>

namespace tune {

/// What a store answered for one object: there, not there, or no answer (the reason says why).
enum class StoreStatus { ok, missing, failed };

/// The outcome of a read.
struct StoreReply {
  StoreStatus status = StoreStatus::failed;
  std::string body;   ///< the object's bytes when `ok`
  std::string error;  ///< why, when `failed` (no credentials in it)
};

/// How an HTTP store talks to its server. Every request is bounded: a connection error, a
/// timeout, a partial body or a 5xx is retried `attempts` times in all, waiting `backoff_s`,
/// then four times as long, between attempts.
struct HttpOptions {
  double connect_timeout_s = 3;
  double timeout_s = 30;  ///< one request, transfer included
  int attempts = 3;
  double backoff_s = 0.2;
  /// A bearer token (`Authorization: Bearer`), or `user:password` for basic auth; at most one.
  /// Without either, a netrc file is used when there is one (`netrc_file`, else ~/.netrc).
  std::string bearer_token;
  std::string basic_auth;
  std::string netrc_file;
  std::string ca_bundle;  ///< a CA bundle file for a private CA; TLS is always verified
};

/// The options from the environment: TUNE_REMOTE_STORE_TOKEN, TUNE_REMOTE_STORE_BASIC_AUTH
/// (`user:password`), TUNE_REMOTE_STORE_NETRC, TUNE_REMOTE_STORE_CA_BUNDLE and
/// TUNE_REMOTE_STORE_TIMEOUT (seconds per request; the connect timeout is at most a tenth of it,
/// at least 0.5 s; a number in [0.1, 3600]). A timeout out of range or not a number is a warning
/// naming the variable (base/env_number.hpp), and the default is used.
HttpOptions http_options_from_env();

/// A store of objects under short paths (`cas/<hex>`, `ac/<hex>`).
class Store {
 public:
  virtual ~Store() = default;
  /// Where it is, for messages: the URL or the directory (never credentials).
  virtual std::string where() const = 0;
  /// Reads the object at `path`.
  virtual StoreReply get(std::string_view path) = 0;
  /// Whether the object at `path` is there (`body` stays empty).
  virtual StoreReply head(std::string_view path) = 0;
  /// Stores `body` at `path`, replacing what is there; nullopt on success, else why not.
  /// Writing the same bytes twice, also concurrently, leaves one whole object.
  virtual std::optional<std::string> put(std::string_view path, std::string_view body) = 0;
  /// The directory of a local directory store; nullopt for HTTP.
  virtual std::optional<std::filesystem::path> directory() const { return std::nullopt; }
};

/// Whether `path` is one a store holds: `cas/` or `ac/` then 64 lowercase hex digits.
bool valid_store_path(std::string_view path);

/// A store in a directory (`<dir>/cas/<hex>`, `<dir>/ac/<hex>`), created on the first write.
/// Writes are atomic; a read refreshes the object's modification time, so `gc_directory_store`
/// removes what nobody read for a while.
std::unique_ptr<Store> open_directory_store(std::filesystem::path dir);

/// A store over HTTP or HTTPS at `url` (`http://host:port/prefix`): GET, HEAD and PUT of
/// `<url>/<path>`. Throws tune::error when this tuner was built without libcurl.
std::unique_ptr<Store> open_http_store(std::string url, HttpOptions options);

/// Whether this tuner was built with libcurl (HTTP stores work).
bool http_store_available() noexcept;

/// A store location as tune reads it (parse_store_location).
struct StoreLocation {
  bool http = false;  ///< an HTTP store; else a directory store
  /// `http(s)://host[:port]/prefix` (the scheme in lowercase, no trailing '/') or the absolute
  /// directory (`file://` removed).
  std::string text;
};

/// The one reader of store locations: TUNE_REMOTE_STORE, --remote, a manifest's
/// `remote_store`, and the configure's check of the CMake variable (`tuner store check`).
/// White space around it is dropped. `http://` or `https://` (any case) with a host
/// is an HTTP store, `file://<dir>` or an absolute path a directory store. A diagnostic (path
/// `label`) that never echoes the location, which may hold a secret: for credentials in the
/// URL (they belong in the environment or a netrc file, never in a setting that is written
/// down), a control character, a bidi control or bytes that are not UTF-8, a query, a fragment
/// or a parameter (`?`, `#`, `;`), a `.` or `..` segment (also percent-encoded), no host, and
/// anything else.
result<StoreLocation> parse_store_location(std::string_view location, std::string_view label);

/// The store a location names (parse_store_location), with HTTP options from the environment.
/// A diagnostic as parse_store_location's, and for an HTTP store when this tuner was built
/// without libcurl.
result<std::unique_ptr<Store>> open_store(std::string_view location, std::string_view label);

/// What `gc_directory_store` removed and kept.
struct GcCounts {
  std::int64_t removed = 0;
  std::int64_t kept = 0;
  std::int64_t removed_bytes = 0;
};

/// Whether `name` is one a directory store writes in `ac/` or `cas/`: 64 lowercase hex digits,
/// or a writer's temporary `.<64 hex>.tmp.<pid>.<n>`.
bool is_store_object_name(std::string_view name);

/// Removes the objects of a directory store not written or read for `keep_days` days, and the
/// temporaries that writers left a day ago; nothing else (only names of the store's own shape,
/// `is_store_object_name`). A huge `keep_days` keeps everything. Throws tune::error when
/// `keep_days` is not finite or negative, or the directory cannot be read.
GcCounts gc_directory_store(const std::filesystem::path& dir, double keep_days);

}  // namespace tune
