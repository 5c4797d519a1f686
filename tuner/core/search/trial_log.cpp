#include <tuner/core/search/trial_log.hpp>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <limits>
#include <optional>
#include <string_view>
#include <unordered_map>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/core.h>

#include <tuner/core/base/fault_inject.hpp>
#include <tuner/core/base/identity.hpp>
#include <tuner/core/base/input_limits.hpp>
#include <tuner/core/base/json_text.hpp>
#include <tuner/core/base/safe_file.hpp>
#include <tuner/core/search/trial_lines.hpp>

namespace tune {

nlohmann::json to_json(const LogHeader& h) {
  auto opt = [](const std::optional<std::string>& s) {
    return s ? nlohmann::json(*s) : nlohmann::json();
  };
  nlohmann::json j{{"log_schema", h.log_schema},        {"tuner", h.tuner},
                   {"space_hash", h.space_hash},        {"arch", h.arch},
                   {"source_hash", opt(h.source_hash)}, {"toolchain", opt(h.toolchain)},
                   {"objective", h.objective}};
  // A grid search's header stays as it was before strategies: the field only when it says more.
  if (h.search != default_log_search()) j["search"] = h.search;
  if (h.identity) {
    j["identity"] = *h.identity;
    j["inputs"] = h.identity_inputs;
  }
  if (!h.prior.is_null()) j["prior"] = h.prior;
  return j;
}

const nlohmann::json& default_log_search() {
  static const nlohmann::json grid = {{"strategy", "grid"}};
  return grid;
}

result<LogHeader> header_from_json(const nlohmann::json& j) {
  auto bad = [](std::string message) { return fail("", 0, 0, std::move(message)); };
  if (!j.is_object()) return bad("the header must be a JSON object");
  LogHeader h;
  auto schema = j.find("log_schema");
  if (schema == j.end() || !schema->is_number_integer())
    return bad("the header has no integer 'log_schema'");
  if (*schema > std::numeric_limits<int>::max() || *schema < std::numeric_limits<int>::min())
    return bad("the header's 'log_schema' is out of range");
  h.log_schema = schema->get<int>();
  for (auto [key, field] : {std::pair{"tuner", &h.tuner}, std::pair{"space_hash", &h.space_hash},
                            std::pair{"arch", &h.arch}}) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_string())
      return bad(fmt::format("the header's '{}' must be a string", key));
    *field = it->get<std::string>();
  }
  for (auto [key, field] :
       {std::pair{"source_hash", &h.source_hash}, std::pair{"toolchain", &h.toolchain},
        std::pair{"identity", &h.identity}}) {
    auto it = j.find(key);
    if (it == j.end() || it->is_null()) continue;
    if (!it->is_string())
      return bad(fmt::format("the header's '{}' must be a string or null", key));
    *field = it->get<std::string>();
  }
  if (auto it = j.find("objective"); it != j.end() && !it->is_null()) {
    if (!it->is_string() || (*it != "minimize" && *it != "maximize"))
      return bad("the header's 'objective' must be 'minimize' or 'maximize'");
    h.objective = it->get<std::string>();
  }
  if (auto it = j.find("search"); it != j.end() && !it->is_null()) {
    if (!it->is_object() || !it->contains("strategy") || !(*it)["strategy"].is_string())
      return bad("the header's 'search' must be an object naming its 'strategy'");
    h.search = *it;
  }
  if (auto it = j.find("prior"); it != j.end() && !it->is_null()) {
    if (!it->is_object()) return bad("the header's 'prior' must be an object or null");
    h.prior = *it;
  }
  if (auto it = j.find("inputs"); h.identity && it != j.end() && !it->is_null()) {
    // Only words are made of them: inputs that do not read (or do not give the digest) are
    // dropped, and the digest alone decides.
    result<BuildIdentity> inputs = identity_from_json(*it);
    if (inputs && inputs->digest() == *h.identity) h.identity_inputs = *it;
  }
  return h;
}

std::vector<std::string> header_differences(const LogHeader& logged, const LogHeader& expected) {
  std::vector<std::string> out;
  auto diff = [&out](const char* field, const std::string& a, const std::string& b) {
    if (a != b) out.push_back(fmt::format("{} '{}' (log) vs '{}' (this run)", field, a, b));
  };
  if (logged.log_schema != expected.log_schema)
    out.push_back(fmt::format("log_schema {} (log) vs {} (this run)", logged.log_schema,
                              expected.log_schema));
  diff("tuner", logged.tuner, expected.tuner);
  diff("space_hash", logged.space_hash, expected.space_hash);
  diff("arch", logged.arch, expected.arch);
  if (logged.source_hash && expected.source_hash)
    diff("source_hash", *logged.source_hash, *expected.source_hash);
  if (logged.toolchain && expected.toolchain)
    diff("toolchain", *logged.toolchain, *expected.toolchain);
  if (expected.identity) diff("identity", logged.identity.value_or("none"), *expected.identity);
  diff("objective", logged.objective, expected.objective);
  diff("search", logged.search.dump(), expected.search.dump());
  return out;
}

LogJudgement judge_log(const LogHeader& logged, const LogHeader& expected) {
  LogHeader same = logged;
  same.prior = expected.prior;
  // Another search (the strategy aside, whose trials are as good a prior) is refused as it is.
  LogHeader other_build = same;
  other_build.space_hash = expected.space_hash;
  other_build.source_hash = expected.source_hash;
  other_build.toolchain = expected.toolchain;
  other_build.identity = expected.identity;
  other_build.identity_inputs = expected.identity_inputs;
  other_build.search = expected.search;
  if (!header_differences(other_build, expected).empty())
    return {LogFate::refuse, header_differences(logged, expected)};
  LogHeader build_only = same;
  build_only.search = expected.search;
  if (header_differences(build_only, expected).empty()) {
    // The same build: resumed, unless only the strategy differs (refused, naming it).
    std::vector<std::string> d = header_differences(same, expected);
    return {d.empty() ? LogFate::resume : LogFate::refuse, d};
  }
  // Another build of the same search: what changed, in words.
  std::vector<std::string> changes;
  if (expected.identity && logged.identity != expected.identity) {
    result<BuildIdentity> was = identity_from_json(logged.identity_inputs);
    result<BuildIdentity> now = identity_from_json(expected.identity_inputs);
    if (!logged.identity)
      changes.push_back("the log was written before logs carried their build's identity");
    else if (was && now)
      for (std::string& c : identity_changes(*was, *now))
        changes.push_back(std::move(c));
    else
      changes.push_back(fmt::format("the build's identity changed ('{}' -> '{}')", *logged.identity,
                                    *expected.identity));
  }
  const bool named_toolchain = std::any_of(
      changes.begin(), changes.end(), [](const auto& c) { return c.starts_with("toolchain "); });
  if (logged.toolchain && expected.toolchain && logged.toolchain != expected.toolchain &&
      !named_toolchain)
    changes.push_back(
        fmt::format("toolchain '{}' -> '{}'", *logged.toolchain, *expected.toolchain));
  if (logged.source_hash && expected.source_hash && logged.source_hash != expected.source_hash &&
      changes.empty())
    changes.push_back("the kernel's sources changed");
  if (logged.space_hash != expected.space_hash)
    changes.push_back("the bucket's configs changed (the space or its pruning)");
  return {LogFate::prior, std::move(changes)};
}

namespace {

std::string errno_text() {
  return std::strerror(errno);
}

std::string read_all(int fd, const std::filesystem::path& path) {
  std::string text;
  char buf[1 << 16];
  off_t off = 0;
  for (;;) {
    ssize_t n = ::pread(fd, buf, sizeof buf, off);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw error(fmt::format("cannot read '{}': {}", path.string(), errno_text()));
    }
    if (n == 0) break;
    text.append(buf, static_cast<std::size_t>(n));
    off += n;
  }
  return text;
}

// Writes all of `data` at the end of `fd` (opened O_APPEND) in one call and syncs it; on a
// short write cuts the file back to `old_size`. Throws tune::error naming `path`. `what` names
// the write for fault injection (`log-header` or `log-append`).
void append_line(int fd, const std::filesystem::path& path, std::uint64_t old_size,
                 const std::string& data, const std::string& what) {
  fault_point(what + "-before-write");
  std::string_view out = data;
  if (what == "log-append") {
    // The torn write a crash in the middle of write(2) would leave: half a line, on disk.
    if (fault_point_selected("log-append-torn")) {
      const std::string_view half = out.substr(0, out.size() / 2);
      if (::write(fd, half.data(), half.size()) > 0) ::fdatasync(fd);
      fault_point("log-append-torn");
      // Not this occurrence: cut the half line back off and write the whole one as usual.
      if (::ftruncate(fd, static_cast<off_t>(old_size)) != 0)
        throw error(fmt::format("cannot append to '{}': {}", path.string(), errno_text()));
    }
  }
  ssize_t n;
  do {
    n = ::write(fd, out.data(), out.size());
  } while (n < 0 && errno == EINTR);
  if (n != static_cast<ssize_t>(out.size())) {
    std::string why = n < 0 ? errno_text() : "short write";
    if (::ftruncate(fd, static_cast<off_t>(old_size)) != 0) {
      // Nothing more to do: the torn line is repaired at the next open.
    }
    throw error(fmt::format("cannot append to '{}': {}", path.string(), why));
  }
  if (::fdatasync(fd) != 0)
    throw error(fmt::format("cannot sync '{}': {}", path.string(), errno_text()));
  fault_point(what + "-after-write");
}

// Cuts the log back to `size` (a torn line or header removed), synced.
void truncate_to(int fd, const std::filesystem::path& path, std::uint64_t size) {
  fault_point("log-repair-before-write");
  if (::ftruncate(fd, static_cast<off_t>(size)) != 0 || ::fdatasync(fd) != 0)
    throw error(fmt::format("cannot repair '{}': {}", path.string(), errno_text()));
  fault_point("log-repair-after-write");
}

}  // namespace

namespace {

// The refusal of a log whose header belongs to another search, listing every difference.
unexpected_diag refuse_mismatch(const std::string& where, const std::vector<std::string>& diffs) {
  std::string list;
  for (const auto& d : diffs)
    list += (list.empty() ? "" : ", ") + d;
  return fail(where, 1, 0,
              fmt::format("log belongs to another search: {}; it was left untouched: move it "
                          "away or use another log path",
                          list));
}

// A header line: nullopt when it is valid and `expected`'s, else the reason to refuse the log.
std::optional<unexpected_diag> check_header(std::string_view line, const std::string& where,
                                            const LogHeader& expected) {
  if (line.size() > max_log_line_bytes || json_nesting_problem(line, where))
    return fail(where, 1, 0,
                fmt::format("not a trial log: the first line is longer than {} or nests deeper "
                            "than {} levels",
                            describe_size(max_log_line_bytes), max_json_depth));
  nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded())
    return fail(where, 1, 0, "not a trial log: the first line is not valid JSON");
  result<LogHeader> logged = header_from_json(j);
  if (!logged) {
    // A header of another schema may not have our fields; the schema alone says enough.
    auto schema = j.is_object() ? j.find("log_schema") : j.end();
    if (j.is_object() && schema != j.end() && schema->is_number_integer() &&
        *schema != expected.log_schema)
      return refuse_mismatch(where, {fmt::format("log_schema {} (log) vs {} (this run)",
                                                 schema->get<long>(), expected.log_schema)});
    return fail(where, 1, 0, "not a trial log: " + logged.error().message);
  }
  std::vector<std::string> diffs = header_differences(*logged, expected);
  if (!diffs.empty()) return refuse_mismatch(where, diffs);
  return std::nullopt;
}

// A file without a newline: empty, or a header whose write was cut short (nothing else can be
// in the file). Refuses what cannot be a torn header of this search; otherwise cuts the file
// to nothing and writes `header_line`.
std::optional<unexpected_diag> start_log(std::string_view text, int fd,
                                         const std::filesystem::path& path, const LogHeader& header,
                                         const std::string& header_line,
                                         std::vector<std::string>& warnings) {
  const std::string where = path.string();
  if (!text.empty()) {
    if (text.size() > max_log_line_bytes || json_nesting_problem(text, where))
      return *check_header(text, where, header);  // refuses such a line
    nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (!j.is_discarded()) {
      if (auto refusal = check_header(text, where, header)) return *refusal;
    } else if (text.front() != '{') {
      return fail(where, 1, 0, "not a trial log: the first line is not valid JSON");
    }
    warnings.push_back(
        fmt::format("{}:1: warning: replaced a torn header (the log held nothing else)", where));
    truncate_to(fd, path, 0);
  }
  append_line(fd, path, 0, header_line, "log-header");
  return std::nullopt;
}

// The trial lines from byte `pos` of `text` on (a log of a `maximize` objective): each readable
// trial into `trials`, a warning for each line skipped, and a torn last line cut off the file
// (left alone when `fd` < 0). Returns the size kept.
std::uint64_t read_trials(std::string_view text, std::size_t pos, int fd,
                          const std::filesystem::path& path, std::vector<Trial>& trials,
                          std::vector<std::string>& warnings, bool maximize) {
  const std::string where = path.string();
  int line_no = 1;
  while (pos < text.size()) {
    ++line_no;
    std::size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) {
      // The last write was cut short: drop the partial line so the next append starts clean.
      warnings.push_back(fmt::format("{}:{}: warning: {} a torn last line (an interrupted write)",
                                     where, line_no, fd < 0 ? "ignored" : "removed"));
      if (fd >= 0) truncate_to(fd, path, pos);
      break;
    }
    std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    std::string warning;
    if (std::optional<Trial> trial = read_trial_line(line, where, line_no, warning, maximize))
      trials.push_back(std::move(*trial));
    else
      warnings.push_back(std::move(warning));
  }
  return std::min<std::uint64_t>(pos, text.size());
}

void create_parent_directories(const std::filesystem::path& path) {
  if (!path.has_parent_path()) return;
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  if (ec)
    throw error(
        fmt::format("cannot create directory '{}': {}", path.parent_path().string(), ec.message()));
}

}  // namespace

result<TrialLog> TrialLog::open(const std::filesystem::path& path, const LogHeader& header) {
  const std::string where = path.string();
  create_parent_directories(path);
  result<FileLock> lock = FileLock::try_lock(path, "log");
  if (!lock) return fail(lock.error());
  result<int> opened = open_for_writing(path, O_RDWR | O_CREAT | O_APPEND, "trial log");
  if (!opened) return fail(opened.error());
  const int fd = *opened;
  TrialLog log(path, std::move(*lock), fd);
  log.header_ = header;
  struct stat st {};
  if (::fstat(fd, &st) == 0)
    if (auto d = size_problem(where, static_cast<std::uint64_t>(st.st_size), max_log_bytes,
                              "a trial log")) {
      d->message += "; it was left untouched: move it away or use another log path";
      return fail(*d);
    }
  const std::string text = read_all(fd, path);

  const std::size_t first_nl = text.find('\n');
  if (first_nl == std::string::npos) {
    const std::string header_line = dump_json(to_json(header)) + "\n";
    if (auto refusal = start_log(text, fd, path, header, header_line, log.warnings_))
      return *refusal;
    log.size_ = header_line.size();
    return log;
  }
  if (auto refusal = check_header(std::string_view(text).substr(0, first_nl), where, header))
    return *refusal;
  log.size_ = read_trials(text, first_nl + 1, fd, path, log.trials_, log.warnings_,
                          header.objective == "maximize");
  return log;
}

result<LogContents> read_log(const std::filesystem::path& path) {
  const std::string where = path.string();
  if (std::optional<diagnostic> d = not_regular_problem(path)) return fail(*d);
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) return fail(where, 0, 0, "cannot read the file: " + ec.message());
  if (auto d = size_problem(where, size, max_log_bytes, "a trial log")) return fail(*d);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    // As every reader of a log tune writes says it (not "Too many levels of symbolic links").
    struct stat st {};
    if (errno == ELOOP && ::lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode))
      return fail(symlink_refused(path));
    return fail(where, 0, 0, "cannot read the file: " + errno_text());
  }
  std::string text;
  try {
    text = read_all(fd, path);
  } catch (const error& e) {
    ::close(fd);
    return fail(where, 0, 0, e.what());
  }
  ::close(fd);
  const std::size_t first_nl = text.find('\n');
  result<LogHeader> header = read_log_header(std::string_view(text).substr(0, first_nl), where);
  if (!header) return fail(header.error());
  LogContents out;
  out.header = std::move(*header);
  if (first_nl != std::string::npos)
    read_trials(text, first_nl + 1, -1, path, out.trials, out.warnings,
                out.header.objective == "maximize");
  return out;
}

TrialLog::TrialLog(TrialLog&& other) noexcept
    : path_(std::move(other.path_)),
      lock_(std::move(other.lock_)),
      fd_(std::exchange(other.fd_, -1)),
      size_(other.size_),
      header_(std::move(other.header_)),
      trials_(std::move(other.trials_)),
      warnings_(std::move(other.warnings_)) {}

TrialLog& TrialLog::operator=(TrialLog&& other) noexcept {
  if (this != &other) {
    close();
    path_ = std::move(other.path_);
    lock_ = std::move(other.lock_);
    fd_ = std::exchange(other.fd_, -1);
    size_ = other.size_;
    header_ = std::move(other.header_);
    trials_ = std::move(other.trials_);
    warnings_ = std::move(other.warnings_);
  }
  return *this;
}

TrialLog::~TrialLog() {
  close();
}

void TrialLog::close() noexcept {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  lock_.unlock();
}

void TrialLog::append(const Trial& trial) {
  if (fd_ < 0) throw error(fmt::format("append to a closed log '{}'", path_.string()));
  std::string line = to_json_line(trial) + "\n";
  append_line(fd_, path_, size_, line, "log-append");
  size_ += line.size();
}

std::map<std::string, Trial> adoptable_trials(const std::vector<Trial>& logged,
                                              const std::vector<Config>& configs,
                                              const std::vector<std::optional<std::string>>* keys) {
  std::unordered_map<std::string, std::size_t> index;
  for (std::size_t i = 0; i < configs.size(); ++i)
    index.emplace(configs[i].id(), i);
  std::map<std::string, Trial> out;
  for (const Trial& t : logged) {
    // A check measured here replaces the adopted trial it checked, even when it is invalid.
    if (t.checks) out.erase(t.id());
    if (!t.is_measured() || t.phase == Phase::runoff) continue;
    std::string id = t.id();
    auto it = index.find(id);
    if (it == index.end()) continue;
    if (keys != nullptr && it->second < keys->size()) {
      const std::optional<std::string>& key = (*keys)[it->second];
      if (key && t.cache_key != key) continue;
    }
    out.insert_or_assign(std::move(id), t);
  }
  return out;
}

}  // namespace tune
