#include <tuner/core/store/store.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>

#include <fmt/core.h>

#include <tuner/core/base/atomic_file.hpp>
#include <tuner/core/base/hash.hpp>

namespace tune {

namespace fs = std::filesystem;

namespace {

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::string(v) : std::string();
}

class DirectoryStore final : public Store {
 public:
  explicit DirectoryStore(fs::path dir) : dir_(std::move(dir)) {}

  std::string where() const override { return dir_.string(); }
  std::optional<fs::path> directory() const override { return dir_; }

  StoreReply get(std::string_view path) override {
    StoreReply reply = head(path);
    if (reply.status != StoreStatus::ok) return reply;
    try {
      reply.body = read_file(dir_ / path);
    } catch (const error& e) {
      // Removed between the two looks (a gc): a miss, as the server would answer.
      std::error_code ec;
      if (!fs::exists(dir_ / path, ec)) return {StoreStatus::missing, {}, {}};
      return {StoreStatus::failed, {}, e.what()};
    }
    // Read means wanted: gc keeps what was read recently.
    std::error_code ec;
    fs::last_write_time(dir_ / path, fs::file_time_type::clock::now(), ec);
    return reply;
  }

  StoreReply head(std::string_view path) override {
    if (!valid_store_path(path))
      return {StoreStatus::failed, {}, fmt::format("'{}' is not a store path", path)};
    std::error_code ec;
    const bool there = fs::is_regular_file(dir_ / path, ec);
    if (ec && ec != std::errc::no_such_file_or_directory)
      return {StoreStatus::failed,
              {},
              fmt::format("cannot read '{}': {}", (dir_ / path).string(), ec.message())};
    return {there ? StoreStatus::ok : StoreStatus::missing, {}, {}};
  }

  std::optional<std::string> put(std::string_view path, std::string_view body) override {
    if (!valid_store_path(path)) return fmt::format("'{}' is not a store path", path);
    try {
      write_file_atomic(dir_ / path, body);
    } catch (const error& e) {
      return std::string(e.what());
    }
    return std::nullopt;
  }

 private:
  fs::path dir_;
};

bool is_hex64(std::string_view s) {
  if (s.size() != 64) return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

}  // namespace

HttpOptions http_options_from_env() {
  HttpOptions o;
  o.bearer_token = env_or_empty("TUNE_REMOTE_STORE_TOKEN");
  o.basic_auth = env_or_empty("TUNE_REMOTE_STORE_BASIC_AUTH");
  o.netrc_file = env_or_empty("TUNE_REMOTE_STORE_NETRC");
  o.ca_bundle = env_or_empty("TUNE_REMOTE_STORE_CA_BUNDLE");
  const std::string timeout = env_or_empty("TUNE_REMOTE_STORE_TIMEOUT");
  if (!timeout.empty()) {
    char* end = nullptr;
    const double t = std::strtod(timeout.c_str(), &end);
    if (end != nullptr && *end == '\0' && t > 0) {
      o.timeout_s = t;
      o.connect_timeout_s = std::max(0.5, std::min(o.connect_timeout_s, t / 10));
    }
  }
  return o;
}

bool valid_store_path(std::string_view path) {
  if (path.rfind("cas/", 0) == 0) return is_hex64(path.substr(4));
  if (path.rfind("ac/", 0) == 0) return is_hex64(path.substr(3));
  return false;
}

std::unique_ptr<Store> open_directory_store(fs::path dir) {
  return std::make_unique<DirectoryStore>(std::move(dir));
}

result<std::unique_ptr<Store>> open_store(std::string_view location, std::string_view label) {
  const std::string where(label);
  if (location.rfind("http://", 0) == 0 || location.rfind("https://", 0) == 0) {
    const std::size_t authority = location.find("://") + 3;
    const std::size_t end = location.find('/', authority);
    const std::string_view host = location.substr(
        authority, end == std::string_view::npos ? std::string_view::npos : end - authority);
    if (host.find('@') != std::string_view::npos)
      return fail(where, 0, 0,
                  "the remote store URL holds credentials: remove them and set "
                  "TUNE_REMOTE_STORE_TOKEN, TUNE_REMOTE_STORE_BASIC_AUTH or a netrc file instead");
    if (host.empty())
      return fail(where, 0, 0, fmt::format("remote store '{}' names no host", location));
    std::string url(location);
    while (!url.empty() && url.back() == '/')
      url.pop_back();
    if (!http_store_available())
      return fail(where, 0, 0,
                  fmt::format("remote store '{}': this tuner was built without libcurl, so it "
                              "cannot reach an HTTP store",
                              url));
    return open_http_store(std::move(url), http_options_from_env());
  }
  std::string_view dir = location;
  if (dir.rfind("file://", 0) == 0) dir.remove_prefix(7);
  if (!dir.empty() && dir.front() == '/') return open_directory_store(fs::path(dir));
  return fail(where, 0, 0,
              fmt::format("remote store '{}' is neither an http:// or https:// URL nor an "
                          "absolute directory (file:///path)",
                          location));
}

GcCounts gc_directory_store(const fs::path& dir, double keep_days) {
  GcCounts counts;
  const auto now = fs::file_time_type::clock::now();
  const auto keep = std::chrono::duration_cast<fs::file_time_type::duration>(
      std::chrono::duration<double>(keep_days * 86400.0));
  for (const char* sub : {"ac", "cas"}) {
    std::error_code ec;
    if (!fs::exists(dir / sub, ec)) continue;
    fs::directory_iterator it(dir / sub, ec);
    if (ec)
      throw error(fmt::format("cannot read the store directory '{}': {}", (dir / sub).string(),
                              ec.message()));
    for (const fs::directory_entry& e : it) {
      std::error_code fe;
      if (!e.is_regular_file(fe)) continue;
      const std::string name = e.path().filename().string();
      const bool temporary = !name.empty() && name.front() == '.';
      const auto size = static_cast<std::int64_t>(e.file_size(fe));
      const auto written = e.last_write_time(fe);
      if (fe) continue;
      // A temporary older than a day belongs to a writer that died (one in progress is seconds
      // old); objects go after keep_days without a write or a read.
      const fs::file_time_type::duration limit =
          temporary
              ? std::chrono::duration_cast<fs::file_time_type::duration>(std::chrono::hours(24))
              : keep;
      if (now - written > limit) {
        if (fs::remove(e.path(), fe)) {
          ++counts.removed;
          counts.removed_bytes += size;
          continue;
        }
      }
      if (!temporary) ++counts.kept;
    }
  }
  return counts;
}

}  // namespace tune
