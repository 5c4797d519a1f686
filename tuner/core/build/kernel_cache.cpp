#include <tuner/core/build/kernel_cache.hpp>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <regex>
#include <system_error>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <tuner/core/base/atomic_file.hpp>
#include <tuner/core/base/env_number.hpp>
#include <tuner/core/base/hash.hpp>
#include <tuner/core/base/json_text.hpp>
#include <tuner/core/base/result.hpp>
#include <tuner/core/base/safe_file.hpp>
#include <tuner/core/base/text.hpp>
#include <tuner/core/build/elf_symbols.hpp>
#include <tuner/core/process/stop_signals.hpp>
#include <tuner/core/process/subprocess.hpp>

extern char** environ;

namespace tune {

namespace fs = std::filesystem;
using nlohmann::json;

std::string_view to_string(CacheStatus status) {
  switch (status) {
    case CacheStatus::ok:
      return "ok";
    case CacheStatus::failed:
      return "failed";
    case CacheStatus::over_limit:
      return "over_limit";
    case CacheStatus::timed_out:
      return "timed_out";
  }
  return "ok";
}

std::optional<CacheStatus> parse_cache_status(std::string_view text) {
  for (CacheStatus s :
       {CacheStatus::ok, CacheStatus::failed, CacheStatus::over_limit, CacheStatus::timed_out})
    if (to_string(s) == text) return s;
  return std::nullopt;
}

void to_json(json& j, const KernelResources& r) {
  j = json{{"registers", r.registers},
           {"shared_bytes", r.shared_bytes},
           {"local_bytes", r.local_bytes},
           {"const_bytes", r.const_bytes}};
}

std::map<std::string, KernelResources> parse_ptxas_resources(std::string_view output) {
  // The report is line oriented: "Compiling entry function 'k' for 'sm_90'" opens an entry,
  // "Function properties for X" opens the properties of X (an entry or a device function that
  // was not inlined) and is followed by its stack frame line, and "Used N registers, ..."
  // closes the entry that is being compiled.
  static const std::regex compiling(R"(Compiling entry function '([^']+)')");
  static const std::regex properties(R"(Function properties for (\S+))");
  static const std::regex stack_frame(R"((\d+) bytes stack frame)");
  static const std::regex used(R"(ptxas\s+info\s*:\s*Used (\d+) registers(.*))");
  static const std::regex bytes_item(R"((\d+) bytes (smem|lmem|cmem\[\d+\]))");

  std::map<std::string, KernelResources> found;
  std::map<std::string, std::int64_t> stack;
  std::map<std::string, bool> has_lmem;
  std::string entry;
  std::string props;
  std::size_t pos = 0;
  while (pos <= output.size()) {
    std::size_t end = output.find('\n', pos);
    if (end == std::string_view::npos) end = output.size();
    const std::string line(output.substr(pos, end - pos));
    pos = end + 1;
    std::smatch m;
    if (std::regex_search(line, m, compiling)) {
      entry = m[1];
      props.clear();
    } else if (std::regex_search(line, m, properties)) {
      props = m[1];
    } else if (std::regex_search(line, m, used)) {
      if (entry.empty()) continue;
      KernelResources r;
      r.registers = std::stoi(m[1]);
      const std::string rest = m[2];
      bool lmem = false;
      for (auto it = std::sregex_iterator(rest.begin(), rest.end(), bytes_item);
           it != std::sregex_iterator(); ++it) {
        const std::int64_t n = std::stoll((*it)[1]);
        const std::string kind = (*it)[2];
        if (kind == "smem") {
          r.shared_bytes = n;
        } else if (kind == "lmem") {
          r.local_bytes = n;
          lmem = true;
        } else {
          r.const_bytes += n;
        }
      }
      found[entry] = r;
      has_lmem[entry] = lmem;
      entry.clear();
    } else if (std::regex_search(line, m, stack_frame)) {
      if (!props.empty()) stack[props] = std::stoll(m[1]);
    }
  }
  // CUDA 12 and later report local memory as the stack frame instead of `lmem`.
  for (auto& [name, r] : found) {
    if (has_lmem[name]) continue;
    if (auto it = stack.find(name); it != stack.end()) r.local_bytes = it->second;
  }
  return found;
}

namespace {

/// One row of the architecture table: a compute capability (90 for sm_90) and its maximum
/// shared memory per block (with the opt-in attribute), CUDA C++ Programming Guide,
/// "Technical Specifications per Compute Capability". The one list of the architectures tune
/// knows: `tuner archs` prints it for tune_add_kernel's ARCH check.
struct ArchRow {
  int cc;
  std::int64_t shared;
};

constexpr std::int64_t kib = 1024;
constexpr std::array<ArchRow, 20> arch_table{
    {{50, 48 * kib},   {52, 48 * kib},   {53, 48 * kib},   {60, 48 * kib},  {61, 48 * kib},
     {62, 48 * kib},   {70, 96 * kib},   {72, 96 * kib},   {75, 64 * kib},  {80, 163 * kib},
     {86, 99 * kib},   {87, 163 * kib},  {89, 99 * kib},   {90, 227 * kib}, {100, 227 * kib},
     {101, 227 * kib}, {103, 227 * kib}, {110, 227 * kib}, {120, 99 * kib}, {121, 99 * kib}}};

}  // namespace

const std::vector<std::string>& known_archs() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    out.reserve(arch_table.size());
    for (const ArchRow& row : arch_table)
      out.push_back(fmt::format("sm_{}", row.cc));
    return out;
  }();
  return names;
}

std::optional<ArchLimits> arch_limits(std::string_view arch) {
  static const std::regex pattern(R"(sm_(\d+)[af]?)");
  std::match_results<std::string_view::const_iterator> m;
  if (!std::regex_match(arch.begin(), arch.end(), m, pattern)) return std::nullopt;
  const int cc = std::stoi(m[1].str());
  for (const ArchRow& row : arch_table) {
    if (row.cc != cc) continue;
    ArchLimits limits;
    limits.max_shared_per_block = row.shared;
    return limits;
  }
  return std::nullopt;
}

std::optional<std::string> exceeded_limit(std::string_view function, const KernelResources& r,
                                          const ArchLimits& limits, std::string_view arch) {
  if (r.registers > limits.max_registers_per_thread)
    return fmt::format("function '{}' uses {} registers per thread, over the limit of {} on {}",
                       function, r.registers, limits.max_registers_per_thread, arch);
  if (r.shared_bytes > limits.max_static_shared)
    return fmt::format(
        "function '{}' uses {} bytes of static shared memory, over the limit of {} bytes on {}",
        function, r.shared_bytes, limits.max_static_shared, arch);
  if (r.shared_bytes > limits.max_shared_per_block)
    return fmt::format(
        "function '{}' uses {} bytes of shared memory, over the limit of {} bytes per block on {}",
        function, r.shared_bytes, limits.max_shared_per_block, arch);
  return std::nullopt;
}

void to_json(json& j, const CacheEntry& e) {
  j = json{{"schema_version", kernel_cache_schema_version},
           {"key", e.key},
           {"key_schema", e.key_schema},
           {"status", std::string(to_string(e.status))},
           {"reason", e.reason},
           {"compiler_output", e.compiler_output},
           {"resources", e.resources ? json(*e.resources) : json(nullptr)},
           {"cubin_sha256", e.cubin_sha256},
           {"arch", e.arch},
           {"config_id", e.config_id},
           {"argv", e.argv},
           {"dependencies", e.dependencies}};
  if (!e.entry_symbol.empty()) j["entry_symbol"] = e.entry_symbol;
  if (e.compile_s) j["compile_s"] = *e.compile_s;
}

fs::path effective_cache_dir(const fs::path& configured) {
  return env_directory("TUNE_CACHE_DIR").value_or(configured);  // absolute, `~` expanded
}

fs::path KernelCache::cubin_path(std::string_view key) const {
  return dir_ / (std::string(key) + ".cubin");
}

fs::path KernelCache::entry_path(std::string_view key) const {
  return dir_ / (std::string(key) + ".json");
}

std::optional<CacheEntry> KernelCache::lookup(std::string_view key) const {
  std::error_code ec;
  if (!fs::is_regular_file(entry_path(key), ec)) return std::nullopt;
  CacheEntry entry;
  try {
    CacheEntryText read = read_cache_entry(read_file(entry_path(key)));
    if (!read.entry) return std::nullopt;  // malformed: a miss, the compile rewrites it
    entry = std::move(*read.entry);
  } catch (const std::exception&) {
    return std::nullopt;  // unreadable: a miss
  }
  if (entry.key != key) return std::nullopt;
  if (entry.status == CacheStatus::ok) {
    try {
      if (sha256_file(cubin_path(key)) != entry.cubin_sha256) return std::nullopt;
    } catch (const error&) {
      return std::nullopt;
    }
  }
  return entry;
}

fs::path KernelCache::temp_path(std::string_view key, std::string_view extension) const {
  static std::atomic<unsigned> counter{0};
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec)
    throw error(fmt::format("cannot create the kernel cache directory '{}': {}", dir_.string(),
                            ec.message()));
  return dir_ /
         fmt::format(".tmp-{}-{}-{}{}", key, static_cast<long>(::getpid()), counter++, extension);
}

CacheEntry KernelCache::store(CacheEntry entry, const std::optional<fs::path>& cubin) const {
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec)
    throw error(fmt::format("cannot create the kernel cache directory '{}': {}", dir_.string(),
                            ec.message()));
  if (entry.status == CacheStatus::ok) {
    if (!cubin)
      throw error(fmt::format("kernel cache: an ok entry for '{}' needs a cubin", entry.key));
    entry.cubin_sha256 = sha256_file(*cubin);
    fs::rename(*cubin, cubin_path(entry.key), ec);
    if (ec)
      throw error(fmt::format("cannot move '{}' to '{}': {}", cubin->string(),
                              cubin_path(entry.key).string(), ec.message()));
  } else {
    entry.cubin_sha256.clear();
    if (cubin) fs::remove(*cubin, ec);
  }
  write_file_atomic(entry_path(entry.key), dump_json(json(entry), 2) + "\n");
  return entry;
}

void append_log_line(const fs::path& log, std::string_view line, std::string_view what) {
  std::error_code ec;
  if (log.has_parent_path()) fs::create_directories(log.parent_path(), ec);
  const std::string text = std::string(line) + "\n";
  result<int> opened = open_for_writing(log, O_WRONLY | O_CREAT | O_APPEND, what);
  if (!opened) throw error(opened.error().str());  // the build tree's own file, not user input
  const int fd = *opened;
  const ssize_t n = ::write(fd, text.data(), text.size());
  const int saved = errno;
  ::close(fd);
  if (n != static_cast<ssize_t>(text.size()))
    throw error(
        fmt::format("cannot append to {} '{}': {}", what, log.string(), std::strerror(saved)));
}

void append_compile_log(const fs::path& log, std::string_view key, std::string_view config_id) {
  append_log_line(log, fmt::format("{} {}", key, config_id), "the compile log");
}

namespace {

// The first line of compiler output that reads as an error, trimmed: what a reader of the
// entry needs first. Empty when there is none.
std::string first_error_line(std::string_view output) {
  std::size_t pos = 0;
  while (pos < output.size()) {
    std::size_t end = output.find('\n', pos);
    if (end == std::string_view::npos) end = output.size();
    std::string_view line = output.substr(pos, end - pos);
    pos = end + 1;
    if (line.find("error") != std::string_view::npos ||
        line.find("fatal") != std::string_view::npos) {
      while (!line.empty() && (line.back() == '\r' || line.back() == ' '))
        line.remove_suffix(1);
      return std::string(line);
    }
  }
  return {};
}

// Why a cubin that compiled cannot serve: it does not define `entry` (nvcc compiles a source
// without the ENTRY function happily; the runner would fail on the GPU). nullopt when it does,
// when no entry is asked for, or when the file does not read as ELF (left to the loader).
std::optional<std::string> missing_entry_problem(const fs::path& cubin, const std::string& entry) {
  if (entry.empty()) return std::nullopt;
  result<std::vector<std::string>> functions = elf_function_symbols_of_file(cubin);
  if (!functions) return std::nullopt;
  for (const std::string& f : *functions)
    if (f == entry) return std::nullopt;
  const std::string defined =
      functions->empty() ? std::string("no function at all") : "only " + quoted_list(*functions);
  return fmt::format(
      "the cubin defines no function '{}' (the kernel's ENTRY), {}{}; declare it "
      "extern \"C\" __global__ in the source, or pass ENTRY <symbol>",
      entry, defined, did_you_mean(entry, *functions));
}

}  // namespace

bool entry_serves(const CacheEntry& entry, std::optional<double> timeout_s) {
  if (entry.status != CacheStatus::timed_out) return true;
  return timeout_s && entry.compile_s && *timeout_s <= *entry.compile_s;
}

bool entry_serves(const CacheEntry& entry, const CompileRequest& request) {
  return !request.cached_refused && entry_serves(entry, request.timeout_s) &&
         (entry.valid() || !request.retry_invalid);
}

CompileOutcome compile_into_cache(const KernelCache& cache, const CompileRequest& request,
                                  const fs::path& compile_log) {
  if (auto hit = cache.lookup(request.key); hit && entry_serves(*hit, request))
    return {std::move(*hit), false};

  const fs::path out = cache.temp_path(request.key, ".cubin");
  CaptureOptions options;
  options.merge_stderr = true;  // nvcc's and ptxas's lines in the order written
  options.timeout_s = request.timeout_s;
  // A stop request (SIGINT, SIGTERM) kills the compile at once: killed, it is not cached.
  options.stop = [] { return StopSignals::received() != 0; };
  const auto started = std::chrono::steady_clock::now();
  const Captured run = request.launcher.run(request.command(out), options);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  append_compile_log(compile_log, request.key, request.config_id);

  CacheEntry entry;
  entry.key = request.key;
  entry.key_schema = request.key_schema;
  entry.arch = request.arch;
  entry.config_id = request.config_id;
  entry.argv = request.argv_keyed;
  entry.dependencies = request.dependencies;
  entry.compiler_output = run.out;
  entry.compile_s = seconds;
  if (run.timed_out) {
    // Its own verdict: cached, so that the next tune does not spend the timeout on it again.
    std::error_code ec;
    fs::remove(out, ec);
    entry.status = CacheStatus::timed_out;
    entry.compile_s = *request.timeout_s;
    entry.reason = fmt::format(
        "the compile ran longer than the compile timeout of {:g} s ([search] "
        "compile_timeout_s); raise it to try the candidate again",
        *request.timeout_s);
    return {cache.store(std::move(entry), std::nullopt), true};
  }

  const auto functions = parse_ptxas_resources(run.out);
  std::string entry_name = request.entry;
  std::optional<std::string> no_instance;
  if (request.entry_template) {
    std::vector<std::string> names;
    for (const auto& f : functions)
      names.push_back(f.first);
    result<std::string> symbol = request.entry_template->pick_symbol(names);
    if (symbol)
      entry.entry_symbol = entry_name = *symbol;
    else
      no_instance = symbol.error().message;
  }
  if (auto it = functions.find(entry_name); it != functions.end()) entry.resources = it->second;

  std::optional<std::string> over;
  if (const auto limits = arch_limits(request.arch)) {
    // The entry first, then the other functions of the module in name order: any function over
    // the limits makes the module unloadable.
    if (entry.resources) over = exceeded_limit(entry_name, *entry.resources, *limits, request.arch);
    for (auto it = functions.begin(); !over && it != functions.end(); ++it)
      over = exceeded_limit(it->first, it->second, *limits, request.arch);
  }

  std::error_code ec;
  const bool have_cubin = fs::is_regular_file(out, ec) && fs::file_size(out, ec) > 0;
  if (over) {
    entry.status = CacheStatus::over_limit;
    entry.reason = *over;
  } else if (!run.status.success()) {
    entry.status = CacheStatus::failed;
    const std::string first = first_error_line(run.out);
    entry.reason = run.status.signaled
                       ? fmt::format("the compiler was {}", run.status.describe())
                       : fmt::format("the compiler exited with status {}", run.status.code);
    if (!first.empty()) entry.reason += ": " + first;
  } else if (!have_cubin) {
    entry.status = CacheStatus::failed;
    entry.reason =
        fmt::format("the compiler exited with status 0 but wrote no cubin to '{}'", out.string());
  } else if (no_instance) {
    entry.status = CacheStatus::failed;
    entry.reason = *no_instance;
  } else if (auto missing = missing_entry_problem(out, entry_name)) {
    entry.status = CacheStatus::failed;
    entry.reason = *missing;
  } else {
    entry.status = CacheStatus::ok;
  }
  // A compiler killed by a signal (out of memory, a stop) or whose status was lost has not judged
  // the source, nor has a launcher that failed itself: the failure is this run's, not the
  // candidate's, and is not cached, so that the next warm or tune compiles it again.
  const bool unjudged = run.status.signaled || run.status.code < 0 ||
                        request.launcher.failed_itself(first_error_line(run.out));
  if (entry.status == CacheStatus::failed && unjudged) {
    fs::remove(out, ec);
    entry.reason += " (not cached: the next warm compiles it again)";
    return {std::move(entry), true};
  }
  std::optional<fs::path> cubin;
  if (fs::exists(out, ec)) cubin = out;
  return {cache.store(std::move(entry), cubin), true};
}

std::string make_depfile(std::string_view target, const std::vector<std::string>& dependencies) {
  auto escape = [](std::string_view path) {
    std::string out;
    for (char c : path) {
      if (c == ' ' || c == '#') out += '\\';
      if (c == '$') out += '$';
      out += c;
    }
    return out;
  };
  std::string text = escape(target) + ":";
  for (const std::string& d : dependencies)
    text += " \\\n  " + escape(d);
  text += "\n";
  return text;
}

}  // namespace tune
