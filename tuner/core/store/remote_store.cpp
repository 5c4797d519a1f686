#include <tuner/core/store/remote_store.hpp>

#include <chrono>
#include <cstdlib>

#include <fmt/core.h>

#include <tuner/core/base/atomic_file.hpp>
#include <tuner/core/base/hash.hpp>
#include <tuner/core/base/input_limits.hpp>
#include <tuner/core/base/json_position.hpp>
#include <tuner/core/base/text.hpp>
#include <tuner/core/store/trust.hpp>

namespace tune {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// How long a down marker holds: long enough to cover one warm's burst of processes, short
// enough that a server back up is used again by the next build.
constexpr auto down_marker_life = std::chrono::seconds(60);

// Whether `marker` says, recently, that the store at `where` is down.
bool recently_down(const fs::path& marker, const std::string& where) {
  std::error_code ec;
  const auto written = fs::last_write_time(marker, ec);
  if (ec || fs::file_time_type::clock::now() - written > down_marker_life) return false;
  try {
    const std::string text = read_file(marker);
    return text.substr(0, text.find('\n')) == where;
  } catch (const error&) {
    return false;
  }
}

bool is_hex64(std::string_view s) {
  return valid_store_path("ac/" + std::string(s));
}

}  // namespace

RemoteStore::RemoteStore(std::unique_ptr<Store> store, std::function<void(const std::string&)> warn,
                         std::optional<fs::path> down_marker)
    : store_(std::move(store)), down_marker_(std::move(down_marker)) {
  // Every warning may quote what the server said (an error body, a parser's "last read"):
  // escaped on its way out, so that no byte of a store reaches a terminal as it is.
  if (warn) warn_ = [w = std::move(warn)](const std::string& text) { w(printable(text)); };
  // Another process of this build found the store down a moment ago and warned: stay quiet and
  // local rather than wait for the same timeout again.
  if (down_marker_ && recently_down(*down_marker_, store_->where())) down_ = true;
}

void RemoteStore::mark_down(const std::string& reason) {
  if (down_.exchange(true)) return;  // another thread found it down first, and warned
  if (warn_)
    warn_(fmt::format("remote store '{}' is unreachable ({}); working locally", where(),
                      shorten(one_line(reason))));
  if (down_marker_) {
    try {
      write_file_atomic(*down_marker_, where() + "\n" + one_line(reason) + "\n");
    } catch (const error&) {
      // The marker only saves time; without it each process finds out for itself.
    }
  }
}

std::optional<std::string> RemoteStore::get(std::string_view path) {
  if (down_) return std::nullopt;
  StoreReply reply = store_->get(path);
  switch (reply.status) {
    case StoreStatus::ok:
      count([&](RemoteStats& s) {
        s.downloaded_bytes += static_cast<std::int64_t>(reply.body.size());
      });
      return std::move(reply.body);
    case StoreStatus::missing:
      count([](RemoteStats& s) { ++s.misses; });
      return std::nullopt;
    case StoreStatus::failed:
      mark_down(reply.error);
      return std::nullopt;
  }
  return std::nullopt;
}

bool RemoteStore::put(std::string_view path, std::string_view body) {
  if (down_ || uploads_off_) return false;
  if (std::optional<std::string> why = store_->put(path, body)) {
    if (uploads_off_.exchange(true)) return false;  // another thread's upload warned
    if (warn_)
      warn_(
          fmt::format("remote store '{}' refused an upload ({}); not uploading for the rest "
                      "of this run",
                      where(), shorten(one_line(*why))));
    return false;
  }
  count([&](RemoteStats& s) {
    ++s.uploads;
    s.uploaded_bytes += static_cast<std::int64_t>(body.size());
  });
  return true;
}

std::optional<CacheEntry> RemoteStore::fetch_entry(const KernelCache& cache,
                                                   const CompileRequest& request) {
  const std::string_view key = request.key;
  if (!is_hex64(key)) return std::nullopt;
  const std::string ac = "ac/" + std::string(key);
  std::optional<std::string> text = get(ac);
  if (!text) return std::nullopt;
  auto refuse = [&](const std::string& why) -> std::optional<CacheEntry> {
    count([](RemoteStats& s) { ++s.corrupt; });
    if (warn_) warn_(fmt::format("remote store '{}': {}; compiling locally", where(), why));
    return std::nullopt;
  };
  // The one reader of entries (read_cache_entry), as the local cache reads them.
  CacheEntryText read = read_cache_entry(*text);
  // Not JSON at all (a proxy's HTML page answered 200): the server is no store of ours, and
  // every other object would be the same; one warning, then local work.
  if (read.kind == CacheEntryText::Kind::not_json) {
    mark_down(
        fmt::format("it answered {} with something that is not JSON, as a web page or a "
                    "proxy would; is the location a store?",
                    ac));
    return std::nullopt;
  }
  // JSON that is no entry at all (`{}`, `[]`, `null`, `42`: a gateway or a mock answering
  // 200): as for a web page, one warning, then local work. An entry of another schema is
  // refused alone (a store may hold some of an older tuner).
  if (read.kind == CacheEntryText::Kind::not_an_entry) {
    mark_down(
        fmt::format("it answered {} with JSON that is not a cache entry ({}), as an API "
                    "gateway or a mock would; is the location a store?",
                    ac, read.why));
    return std::nullopt;
  }
  if (!read.entry) return refuse(fmt::format("{} is {}", ac, read.why));
  CacheEntry entry = std::move(*read.entry);
  if (entry.key != key)
    return refuse(fmt::format("{} holds the entry of another key '{}'", ac, entry.key));
  if (std::optional<std::string> why = entry_mismatch(entry, request, EntryOrigin::remote))
    return refuse(fmt::format("{} is not the entry of its key: {}", ac, *why));
  // Another host's negative verdict is no answer (docs/trust.md): compiled here.
  if (!verdict_believed(entry, EntryOrigin::remote)) return std::nullopt;
  if (!is_hex64(entry.cubin_sha256)) return refuse(fmt::format("{} names no blob digest", ac));
  const std::string cas = "cas/" + entry.cubin_sha256;
  std::optional<std::string> blob = get(cas);
  if (!blob) return std::nullopt;
  // The digest before anything is written: a blob that does not match is never a cubin here.
  if (const std::string got = sha256_hex(*blob); got != entry.cubin_sha256)
    return refuse(fmt::format("{} does not match its digest (its sha256 is {})", cas, got));
  const fs::path tmp = cache.temp_path(entry.key, ".cubin");
  write_file_atomic(tmp, *blob);
  count([](RemoteStats& s) { ++s.hits; });
  return cache.store(std::move(entry), tmp);
}

RemoteStats RemoteStore::stats() const {
  const std::lock_guard<std::mutex> lock(stats_mutex_);
  return stats_;
}

bool RemoteStore::upload_entry(const KernelCache& cache, const CacheEntry& entry) {
  if (down_ || uploads_off_ || !is_hex64(entry.key)) return false;
  if (entry.valid()) {
    std::string cubin;
    try {
      cubin = read_file(cache.cubin_path(entry.key));
    } catch (const error&) {
      return false;  // removed meanwhile: nothing to share
    }
    if (sha256_hex(cubin) != entry.cubin_sha256) return false;
    if (!put("cas/" + entry.cubin_sha256, cubin)) return false;
  }
  return put("ac/" + entry.key, json(entry).dump(2) + "\n");
}

std::optional<json> RemoteStore::get_json(std::string_view path) {
  std::optional<std::string> text = get(path);
  if (!text) return std::nullopt;
  std::optional<json> j = parse_store_json(*text);
  if (j) {
    count([](RemoteStats& s) { ++s.hits; });
    return j;
  }
  count([](RemoteStats& s) { ++s.corrupt; });
  mark_down(
      fmt::format("it answered {} with something that is not JSON, as a web page or a "
                  "proxy would; is the location a store?",
                  path));
  return std::nullopt;
}

std::optional<json> parse_store_json(std::string_view text) {
  // The limits and the duplicate-key rule of every other reader: a parser keeps the last of a
  // key said twice, which a forged object would use.
  if (json_nesting_problem(text, "") || json_duplicate_key(text)) return std::nullopt;
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return std::nullopt;
  return j;
}

bool RemoteStore::put_json(std::string_view path, const json& value) {
  return put(path, value.dump(2) + "\n");
}

std::string remote_location(std::string_view cli, std::string_view configured) {
  // Blanks alone say nothing (an empty YAML value); parse_store_location drops them too.
  std::string location = trim(cli);
  if (location.empty()) {
    const char* env = std::getenv("TUNE_REMOTE_STORE");
    if (env != nullptr) location = trim(env);
  }
  if (location.empty()) location = trim(configured);
  if (location == "off") location.clear();
  return location;
}

std::unique_ptr<RemoteStore> open_remote_store(std::string_view cli, std::string_view configured,
                                               const fs::path& cache_dir,
                                               std::function<void(const std::string&)> warn) {
  const std::string location = remote_location(cli, configured);
  if (location.empty()) return nullptr;
  const fs::path marker = cache_dir / ".remote-store-down";
  result<std::unique_ptr<Store>> store = open_store(location, "remote store");
  if (!store) {
    // One warning per build, not one per warm step: the marker names the refused location by
    // its digest (never the text, which may hold a secret) for the processes that follow.
    const std::string tag = "refused " + sha256_hex(location);
    if (!recently_down(marker, tag)) {
      if (warn) warn(store.error().message + "; working locally");
      try {
        write_file_atomic(marker, tag + "\n");
      } catch (const error&) {
        // Without the marker each process warns for itself.
      }
    }
    return nullptr;
  }
  return std::make_unique<RemoteStore>(std::move(*store), std::move(warn), marker);
}

}  // namespace tune
