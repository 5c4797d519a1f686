#include <tuner/core/store/store.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <string>

#include <fmt/core.h>

#include <tuner/core/base/atomic_file.hpp>
#include <tuner/core/base/env_number.hpp>
#include <tuner/core/base/hash.hpp>
#include <tuner/core/base/text.hpp>

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
  // Bounded: an infinite or huge timeout would overflow libcurl's milliseconds into "none".
  if (const auto t = env_number("TUNE_REMOTE_STORE_TIMEOUT", 0.1, 3600)) {
    o.timeout_s = *t;
    o.connect_timeout_s = std::max(0.5, std::min(o.connect_timeout_s, *t / 10));
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

namespace {

// Why the path part of a location cannot be used (a query, a fragment, a parameter, a `.` or `..`
// segment,
// also percent-encoded), or nullopt.
std::optional<std::string> path_problem(std::string_view path) {
  if (path.find_first_of("?#;") != std::string_view::npos)
    return "holds a query, a fragment or a parameter ('?', '#' or ';'): a token belongs in "
           "TUNE_REMOTE_STORE_TOKEN, never in the location";
  std::string decoded;
  for (std::size_t i = 0; i < path.size(); ++i) {
    if (path[i] == '%' && i + 2 < path.size() && path[i + 1] == '2' &&
        (path[i + 2] == 'e' || path[i + 2] == 'E')) {
      decoded += '.';
      i += 2;
    } else {
      decoded += path[i];
    }
  }
  std::size_t start = 0;
  while (start <= decoded.size()) {
    std::size_t slash = decoded.find('/', start);
    if (slash == std::string::npos) slash = decoded.size();
    const std::string_view segment = std::string_view(decoded).substr(start, slash - start);
    if (segment == "." || segment == "..")
      return "holds a '.' or '..' segment: name the store's own folder";
    start = slash + 1;
  }
  return std::nullopt;
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

}  // namespace

result<StoreLocation> parse_store_location(std::string_view location, std::string_view label) {
  // Nothing of an unchecked location is ever echoed: it may hold a password or a token.
  const std::string where(label);
  const std::string trimmed = trim(location);
  location = trimmed;
  const std::size_t sep = location.find("://");
  const bool url = sep != std::string_view::npos && sep > 0 &&
                   location.find('/') > sep;  // a scheme, not a path holding `://`
  std::string scheme;
  std::string_view rest = location;
  if (url) {
    scheme = lower(location.substr(0, sep));
    rest = location.substr(sep + 3);
    // Credentials first, before anything else is looked at or said.
    const std::string_view authority = rest.substr(0, rest.find_first_of("/?#"));
    if (authority.find('@') != std::string_view::npos)
      return fail(where, 0, 0,
                  "the remote store URL holds credentials: remove them and set "
                  "TUNE_REMOTE_STORE_TOKEN, TUNE_REMOTE_STORE_BASIC_AUTH or a netrc file instead");
  }
  // A control character, a bidi control or bytes that are not UTF-8 would be printed by every
  // message that names the store, and written into every manifest.
  if (printable(location) != location)
    return fail(where, 0, 0,
                "the remote store location holds a control character, a bidi control or bytes "
                "that are not UTF-8: write it as plain text");
  if (std::optional<std::string> why = path_problem(location))
    return fail(where, 0, 0, "the remote store location " + *why);
  if (scheme == "http" || scheme == "https") {
    const std::size_t end = rest.find('/');
    const std::string_view host = rest.substr(0, end);
    if (host.empty()) return fail(where, 0, 0, "the remote store URL names no host");
    if (host.find(' ') != std::string_view::npos)
      return fail(where, 0, 0, "the remote store URL's host holds a blank: write the host alone");
    // Without the slashes and blanks at its end (`https://h/a/ /` is `https://h/a`), so that the
    // location reads back as itself from a manifest.
    std::string normalized = scheme + "://" + std::string(rest);
    while (normalized.back() == '/' || normalized.back() == ' ')
      normalized.pop_back();
    if (std::optional<std::string> why = path_problem(normalized))  // `/a/.  /` ends in `.`
      return fail(where, 0, 0, "the remote store location " + *why);
    return StoreLocation{true, std::move(normalized)};
  }
  std::string_view dir = location;
  if (scheme == "file") dir = rest;
  if ((!url || scheme == "file") && !dir.empty() && dir.front() == '/')
    return StoreLocation{false, std::string(dir)};
  return fail(where, 0, 0,
              "the remote store location is neither an http:// or https:// URL nor an absolute "
              "directory (file:///path)");
}

result<std::unique_ptr<Store>> open_store(std::string_view location, std::string_view label) {
  result<StoreLocation> parsed = parse_store_location(location, label);
  if (!parsed) return fail(parsed.error());
  if (!parsed->http) return open_directory_store(fs::path(parsed->text));
  if (!http_store_available())
    return fail(std::string(label), 0, 0,
                fmt::format("remote store '{}': this tuner was built without libcurl, so it "
                            "cannot reach an HTTP store",
                            parsed->text));
  return open_http_store(parsed->text, http_options_from_env());
}

bool is_store_object_name(std::string_view name) {
  if (is_hex64(name)) return true;
  // A writer's temporary (base/atomic_file.cpp): `.<64 hex>.tmp.<pid>.<n>`.
  if (name.size() < 1 + 64 + 5 || name.front() != '.') return false;
  if (!is_hex64(name.substr(1, 64)) || name.substr(65, 5) != ".tmp.") return false;
  const std::string_view rest = name.substr(70);
  const std::size_t dot = rest.find('.');
  if (dot == 0 || dot == std::string_view::npos || dot + 1 == rest.size()) return false;
  const auto digits = [](std::string_view s) {
    return std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
  };
  return digits(rest.substr(0, dot)) && digits(rest.substr(dot + 1));
}

GcCounts gc_directory_store(const fs::path& dir, double keep_days) {
  if (!std::isfinite(keep_days) || keep_days < 0)
    throw error(fmt::format("gc: keep_days must be a finite number of days, 0 or more (got {})",
                            keep_days));
  GcCounts counts;
  const auto now = fs::file_time_type::clock::now();
  // Ages compare in seconds as doubles: a huge keep_days keeps everything instead of
  // overflowing a duration.
  const double keep_s = keep_days * 86400.0;
  const auto age_s = [&](fs::file_time_type written) {
    return std::chrono::duration<double>(now - written).count();
  };
  for (const char* sub : {"ac", "cas"}) {
    std::error_code ec;
    if (!fs::exists(dir / sub, ec)) continue;
    fs::directory_iterator it(dir / sub, ec);
    if (ec)
      throw error(fmt::format("cannot read the store directory '{}': {}", (dir / sub).string(),
                              ec.message()));
    for (const fs::directory_entry& e : it) {
      std::error_code fe;
      const std::string name = e.path().filename().string();
      // Only the store's own names: a bazel disk cache, say, has `ac/` and `cas/` folders too.
      if (!is_store_object_name(name)) continue;
      if (!e.is_regular_file(fe) || e.is_symlink(fe)) continue;
      const bool temporary = name.front() == '.';
      const auto size = static_cast<std::int64_t>(e.file_size(fe));
      const auto written = e.last_write_time(fe);
      if (fe) continue;
      // A temporary older than a day belongs to a writer that died (one in progress is seconds
      // old); objects go after keep_days without a write or a read.
      const double limit_s = temporary ? 86400.0 : keep_s;
      if (age_s(written) > limit_s) {
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
