// `tuner warm`: compile candidates into the kernel cache, compile-only, with no GPU.
//
// The build runs one `tuner warm --config <id> --stamp <file> --depfile <file>` per candidate
// and architecture (one Ninja edge each, see cmake/TuneKernel.cmake); without --config it warms
// every candidate of the space, one after the other (for tools and people).
//
// Each build step also appends what it did (`<arch> compiled|downloaded|cached <config id>`) to
// `<log_dir>/warm.events`; `tuner warm --manifest M --summary`, the command of the warm.<name>
// target (after every step), reads and removes those lines and prints one summary line per
// architecture: candidates compiled, taken from the store and already cached in this build,
// and the invalid ones by kind, after the invalid ones grouped by reason (warm_report.hpp). A
// step says nothing of its own invalid candidate: the summary says it once for all that failed
// the same way.
//
// A bucket left with no valid candidate (every one of its configs invalid) can never be tuned
// or pinned: the summary and a whole-space warm name it and exit 1.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <tuner/cli/commands.hpp>
#include <tuner/cli/kernel_choice.hpp>
#include <tuner/cli/warm_report.hpp>
#include <tuner/core/base/atomic_file.hpp>
#include <tuner/core/base/hash.hpp>
#include <tuner/core/base/json_text.hpp>
#include <tuner/core/build/cache_key.hpp>
#include <tuner/core/build/compiler_launcher.hpp>
#include <tuner/core/build/identical_binaries.hpp>
#include <tuner/core/build/kernel_build.hpp>
#include <tuner/core/build/kernel_cache.hpp>
#include <tuner/core/record/names_header.hpp>
#include <tuner/core/space/entry_template.hpp>
#include <tuner/core/space/space_checks.hpp>
#include <tuner/core/store/candidate_store.hpp>

namespace tune::cli {
namespace {

namespace fs = std::filesystem;

struct WarmOptions {
  std::string list_candidates;
  std::string kernel;  // with --list-candidates: the name the space is declared under
  std::string entry;
  std::string names_header;  // with --list-candidates: write the kernel's names header there
  std::string manifest;
  std::string arch;
  std::vector<std::string> configs;
  std::string stamp;
  std::string depfile;
  std::string remote;
  bool json = false;
  bool summary = false;
  bool retry_invalid = false;
};

// What warm did to the candidates of one architecture, and what the cache says of them.
struct WarmCounts {
  std::size_t candidates = 0;
  std::size_t compiled = 0;
  std::size_t downloaded = 0;  // taken from the remote store
  std::size_t missing = 0;     // no cache entry (a summary only: warm was interrupted)
  std::map<std::string, std::size_t> invalid;  // by status: failed, over_limit
};

// `tuner warm: fill sm_90: 4 candidates: 1 compiled, 0 from the store, 3 already cached; 2
// invalid (1 failed, 1 over_limit)`.
// `again` is the command that compiles the missing ones (a summary's only).
std::string describe_warm(const std::string& kernel, const std::string& arch, const WarmCounts& c,
                          const std::string& again = "") {
  const std::size_t cached =
      c.candidates - std::min(c.candidates, c.compiled + c.downloaded + c.missing);
  std::string line = fmt::format(
      "tuner warm: {} {}: {} candidates: {} compiled, {} from the store, {} already cached", kernel,
      arch, c.candidates, c.compiled, c.downloaded, cached);
  if (c.missing > 0) line += fmt::format(", {} not in the cache ({})", c.missing, again);
  std::size_t invalid = 0;
  std::string kinds;
  for (const auto& [status, n] : c.invalid) {
    invalid += n;
    kinds += fmt::format("{}{} {}", kinds.empty() ? "" : ", ", n, status);
  }
  if (invalid == 0) return line + "; none invalid";
  return line + fmt::format("; {} invalid ({})", invalid, kinds);
}

// How to drop the invalid verdicts a mistake cached: every input the verdict depends on is in
// the key, so fixing the kernel's source, flags or ENTRY compiles anew by itself; a verdict of
// a broken environment (a full disk, a compiler that crashed) is compiled again on request.
std::string retry_hint(const Manifest& manifest) {
  return fmt::format(
      "tuner warm: note: an invalid verdict is kept in the kernel cache (and the remote store) "
      "under its key; a fix to the source, the flags or ENTRY changes the key and compiles "
      "anew, and 'tuner warm --manifest {} --retry-invalid' compiles the cached invalid ones "
      "again (replacing them here and in the store)",
      manifest.path.string());
}

// Candidates that compiled to byte-identical cubins, on stderr: a param that never reaches the
// kernel is a mistake in the kernel or the space.
void warn_identical(const std::string& kernel, const std::string& arch,
                    const std::vector<Config>& configs, const std::vector<std::string>& cubins) {
  for (const std::string& line : describe(identical_binaries(configs, cubins)))
    fmt::print(stderr, "tuner warm: {} {}: warning: {}\n", kernel, arch, line);
}

fs::path warm_events_path(const Manifest& manifest) {
  return manifest.log_dir / "warm.events";
}

// The candidates warm compiles: the union of every bucket's pruned configs, in order of first
// appearance (docs/formats.md "Search space"). The limit on a space's configs holds for its
// buckets together, as in `tuner space`: each bucket may be under it while all of them are far
// over (the time goes into evaluating prunes, and the configure into a graph that size).
result<std::vector<Config>> all_candidates(const Space& space) {
  std::vector<Config> out;
  std::set<std::string> seen;
  std::uint64_t total = 0;
  for (const Bucket& bucket : space.buckets()) {
    result<std::vector<Config>> configs = space.configs(bucket);
    if (!configs) return fail(configs.error());
    total += configs->size();
    if (total > max_space_configs)
      return fail(space.path(), 0, 0,
                  fmt::format("the buckets hold more than {} configs together (the limit of a "
                              "space): prune the space",
                              max_space_configs));
    for (Config& c : *configs)
      if (seen.insert(c.id()).second) out.push_back(std::move(c));
  }
  return out;
}

// `--list-candidates <space> [--kernel NAME] [--entry TEMPLATE]`: the candidate ids, one per
// line (ids hold no newline), for the CMake functions, which need them to write Ninja's graph.
// Reading lines keeps the configure linear in the size of the space, where picking ids out of
// `tuner space --json` with CMake's string(JSON) re-parses the document once per id. A space that
// can never give a record (space_checks.hpp) is refused here, so that the configure stops on it.
int list_candidates(const std::string& space_path, const std::string& kernel,
                    const std::string& entry, const std::string& names_out) {
  result<Space> space = Space::load(space_path);
  if (!space) {
    fmt::print(stderr, "{}\n", space.error().str());
    return exit_bad_input;
  }
  result<std::vector<diagnostic>> problems = space_declaration_problems(*space, kernel);
  if (!problems) {
    fmt::print(stderr, "{}\n", problems.error().str());
    return exit_bad_input;
  }
  for (const diagnostic& d : *problems)
    fmt::print(stderr, "{}\n", d.str());
  if (!problems->empty()) return exit_bad_input;
  if (!entry.empty()) {  // tune_add_kernel's template ENTRY, checked against the space
    result<EntryTemplate> t = parse_entry_template(entry, *space);
    if (!t) {
      fmt::print(stderr, "tuner warm: error: ENTRY '{}' (column {}): {}\n", entry, t.error().column,
                 t.error().message);
      return exit_bad_input;
    }
    if (space->entry_template() && *space->entry_template() != entry) {
      fmt::print(stderr,
                 "tuner warm: error: ENTRY '{}' differs from the template '{}' of the space {}: "
                 "declare it in one place\n",
                 entry, *space->entry_template(), space_path);
      return exit_bad_input;
    }
  }
  result<std::vector<Config>> all = all_candidates(*space);
  if (!all) {
    fmt::print(stderr, "{}\n", all.error().str());
    return exit_bad_input;
  }
  if (!names_out.empty()) {
    // Rewritten only when it changes, so that a configure does not rebuild the harness.
    try {
      write_file_if_changed(names_out, names_header(*space, kernel, space_path));
    } catch (const std::exception& e) {
      fmt::print(stderr, "tuner warm: error: {}\n", e.what());
      return exit_environment;
    }
  }
  std::string out;
  for (const Config& c : *all)
    out += c.id() + "\n";
  std::fputs(out.c_str(), stdout);
  return exit_ok;
}

// The events the warm steps appended since the last summary, taken away atomically (a step
// that appends meanwhile starts a new file, read by the next summary): per architecture, how
// many candidates were compiled and how many downloaded.
std::map<std::string, WarmCounts> take_warm_events(const fs::path& events) {
  std::map<std::string, WarmCounts> counts;
  const fs::path taken = events.string() + ".reading";
  std::error_code ec;
  fs::rename(events, taken, ec);
  if (ec) return counts;  // no step ran since the last summary
  std::string text;
  try {
    text = read_file(taken);
  } catch (const error&) {
  }
  fs::remove(taken, ec);
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    const std::size_t a = line.find(' ');
    const std::size_t b = a == std::string::npos ? a : line.find(' ', a + 1);
    if (b == std::string::npos) continue;
    const std::string what = line.substr(a + 1, b - a - 1);
    WarmCounts& c = counts[line.substr(0, a)];
    if (what == "compiled") ++c.compiled;
    if (what == "downloaded") ++c.downloaded;
  }
  return counts;
}

// `--summary`: one line per architecture, after the warm steps of the build ran.
int warm_summary(const Manifest& manifest, const Space& space,
                 const std::vector<std::string>& archs) {
  result<std::vector<Config>> all = all_candidates(space);
  if (!all) {
    fmt::print(stderr, "{}\n", all.error().str());
    return exit_bad_input;
  }
  std::map<std::string, WarmCounts> counts = take_warm_events(warm_events_path(manifest));
  const CacheKeyer keyer(manifest, space);
  const KernelCache cache(effective_cache_dir(manifest.cache_dir));
  bool any_invalid = false;
  bool unusable = false;
  for (const std::string& arch : archs) {
    WarmCounts& c = counts[arch];
    c.candidates = all->size();
    std::vector<std::string> cubins;
    std::vector<CandidateOutcome> outcomes;
    for (const Config& config : *all) {
      const std::string key = keyer.key(config, arch).digest;
      const std::optional<CacheEntry> entry = cache.lookup(key);
      cubins.push_back(entry && entry->valid() ? entry->cubin_sha256 : std::string());
      CandidateOutcome& o = outcomes.emplace_back();
      o.config_id = config.id();
      o.entry = cache.entry_path(key);
      if (!entry) {
        ++c.missing;
        o.missing = true;
        // Its stamp says it is warm, which is no longer true (the cache was emptied or rotated
        // under the build): without it the next build of the warm target runs its step again.
        std::error_code ec;
        std::filesystem::remove(warm_stamp(manifest, arch, o.config_id), ec);
      } else if (!entry->valid()) {
        ++c.invalid[std::string(to_string(entry->status))];
        o.status = std::string(to_string(entry->status));
        o.reason = entry->reason;
      } else {
        o.valid = true;
      }
    }
    const std::string again = fmt::format(
        "never warmed, or the cache lost them since: their warm steps run again on the next "
        "'cmake --build {} --target warm.{}', or 'tuner warm --manifest {} --arch {}' compiles "
        "them now",
        manifest.build_dir.string(), manifest.kernel, manifest.path.string(), arch);
    for (const std::string& line : describe_invalid(manifest.kernel, arch, outcomes))
      fmt::print("{}\n", line);
    fmt::print("{}\n", describe_warm(manifest.kernel, arch, c, again));
    warn_identical(manifest.kernel, arch, *all, cubins);
    for (const std::string& line : buckets_without_valid(manifest.kernel, arch, space, outcomes)) {
      fmt::print(stderr, "{}\n", line);
      unusable = true;
    }
    any_invalid = any_invalid || !c.invalid.empty();
  }
  if (any_invalid) fmt::print(stderr, "{}\n", retry_hint(manifest));
  return unusable ? exit_negative : exit_ok;
}

int run_warm(const WarmOptions& opt) {
  if (!opt.list_candidates.empty())
    return list_candidates(opt.list_candidates, opt.kernel, opt.entry, opt.names_header);
  if (opt.manifest.empty()) {
    fmt::print(stderr, "tuner warm: error: --manifest is required\n");
    return exit_bad_input;
  }
  std::optional<ChosenKernel> chosen = load_chosen_kernel(opt.manifest, opt.arch);
  if (!chosen) return exit_bad_input;
  const Manifest& manifest = chosen->build.manifest;
  const Space& space = chosen->build.space;
  const std::vector<std::string>& archs = chosen->archs;
  if (opt.summary) return warm_summary(manifest, space, archs);
  if (!opt.stamp.empty() && (archs.size() != 1 || opt.configs.size() != 1)) {
    fmt::print(stderr, "tuner warm: error: --stamp needs one --arch and one --config\n");
    return exit_bad_input;
  }

  std::vector<Config> configs;
  if (opt.configs.empty()) {
    result<std::vector<Config>> all = all_candidates(space);
    if (!all) {
      fmt::print(stderr, "{}\n", all.error().str());
      return exit_bad_input;
    }
    configs = std::move(*all);
  } else {
    for (const std::string& id : opt.configs) {
      const Config* c = find_config(space.all_configs(), id);
      if (c == nullptr) {
        fmt::print(stderr,
                   "tuner warm: error: config '{}' is not in the space '{}' of kernel '{}' "
                   "(re-run the CMake configure if the space changed)\n",
                   id, manifest.space.string(), manifest.kernel);
        return exit_bad_input;
      }
      configs.push_back(*c);
    }
  }

  const CacheKeyer keyer(manifest, space);
  const KernelCache cache(effective_cache_dir(manifest.cache_dir));
  const std::unique_ptr<RemoteStore> remote = open_remote_store(
      opt.remote, manifest.remote_store, cache.dir(),
      [](const std::string& w) { fmt::print(stderr, "tuner warm: warning: {}\n", w); });
  const CandidateStore store(cache, remote.get(), manifest.compile_log,
                             space.search().compile_timeout_s.value_or(default_compile_timeout_s),
                             compiler_launcher(manifest));

  int compiled = 0;
  int downloaded = 0;
  int cached = 0;
  int invalid = 0;
  std::map<std::string, WarmCounts> counts;
  std::map<std::string, std::vector<std::string>> cubins;         // per arch, as `configs`
  std::map<std::string, std::vector<CandidateOutcome>> outcomes;  // per arch, as `configs`
  nlohmann::json results = nlohmann::json::array();
  for (const std::string& arch : archs) {
    for (const Config& config : configs) {
      const CacheKey key = keyer.key(config, arch);
      CompileRequest request = compile_request(manifest, keyer, config, arch);
      request.retry_invalid = opt.retry_invalid;
      const CompileOutcome outcome = store.get(request);
      ++(outcome.compiled ? compiled : cached);
      if (outcome.downloaded) ++downloaded;
      WarmCounts& c = counts[arch];
      cubins[arch].push_back(outcome.entry.valid() ? outcome.entry.cubin_sha256 : std::string());
      ++c.candidates;
      c.compiled += outcome.compiled ? 1 : 0;
      c.downloaded += outcome.downloaded ? 1 : 0;
      CandidateOutcome& o = outcomes[arch].emplace_back();
      o.config_id = config.id();
      o.entry = cache.entry_path(key.digest);
      o.valid = outcome.entry.valid();
      if (!outcome.entry.valid()) {
        ++c.invalid[std::string(to_string(outcome.entry.status))];
        ++invalid;
        o.status = std::string(to_string(outcome.entry.status));
        o.reason = outcome.entry.reason;
      }
      results.push_back({{"arch", arch},
                         {"config_id", config.id()},
                         {"key", key.digest},
                         {"status", std::string(to_string(outcome.entry.status))},
                         {"reason", outcome.entry.reason},
                         {"compiled", outcome.compiled},
                         {"downloaded", outcome.downloaded},
                         {"entry", cache.entry_path(key.digest).string()}});

      if (!opt.stamp.empty()) {
        // For the summary of the warm.<name> target.
        append_log_line(warm_events_path(manifest),
                        fmt::format("{} {} {}", arch,
                                    outcome.compiled     ? "compiled"
                                    : outcome.downloaded ? "downloaded"
                                                         : "cached",
                                    config.id()),
                        "the warm events");
        // The depfile names what the key read, on a hit too: Ninja must learn the headers of
        // a candidate that another build tree compiled.
        std::vector<std::string> deps;
        for (const fs::path& d : key.dependencies)
          deps.push_back(d.string());
        if (!opt.depfile.empty()) write_file_atomic(opt.depfile, make_depfile(opt.stamp, deps));
        // Last, and only after success: the stamp is what tells Ninja the step is done.
        write_file_atomic(opt.stamp, key.digest + "\n");
      }
    }
  }

  // A bucket with no valid candidate: only a warm of every candidate can tell (a build step
  // warms one, and the summary after the steps tells).
  std::vector<std::string> unusable;
  if (opt.stamp.empty())
    for (const std::string& arch : archs)
      for (std::string& line : buckets_without_valid(manifest.kernel, arch, space, outcomes[arch]))
        unusable.push_back(std::move(line));

  if (opt.json) {
    nlohmann::json out = {{"kernel", manifest.kernel}, {"cache_dir", cache.dir().string()},
                          {"compiled", compiled},      {"cached", cached},
                          {"invalid", invalid},        {"results", results},
                          {"unusable", unusable}};
    if (remote) {
      out["downloaded"] = downloaded;
      out["remote"] = {{"store", remote->where()},
                       {"reachable", remote->reachable()},
                       {"downloaded_bytes", remote->stats().downloaded_bytes},
                       {"uploaded_bytes", remote->stats().uploaded_bytes},
                       {"uploads", remote->stats().uploads}};
    }
    fmt::print("{}\n", dump_json(out, 2));
  } else if (opt.stamp.empty()) {
    for (const std::string& arch : archs) {
      for (const std::string& line : describe_invalid(manifest.kernel, arch, outcomes[arch]))
        fmt::print("{}\n", line);
      fmt::print("{}\n", describe_warm(manifest.kernel, arch, counts[arch]));
      warn_identical(manifest.kernel, arch, configs, cubins[arch]);
    }
    for (const std::string& line : unusable)
      fmt::print(stderr, "{}\n", line);
    if (invalid > 0 && !opt.retry_invalid) fmt::print(stderr, "{}\n", retry_hint(manifest));
  }
  return unusable.empty() ? exit_ok : exit_negative;
}

}  // namespace

void add_warm_command(CLI::App& app, Run& run) {
  auto opt = std::make_shared<WarmOptions>();
  auto* sub = app.add_subcommand(
      "warm",
      "compile candidates into the kernel cache (compile-only, no GPU); a candidate that fails "
      "to compile or is over the architecture's limits is stored as invalid, not an error");
  auto* manifest = sub->add_option("--manifest", opt->manifest, "the kernel's manifest.json");
  sub->add_option("--arch", opt->arch, "one architecture (default: every one the manifest lists)");
  sub->add_option("--config", opt->configs,
                  "a config id to compile (repeatable; default: every candidate of the space)");
  auto* stamp =
      sub->add_option("--stamp", opt->stamp,
                      "file to write the cache key to once done (needs one arch and config)");
  sub->add_option("--depfile", opt->depfile, "Makefile-syntax depfile naming the stamp's inputs")
      ->needs(stamp);
  sub->add_option("--remote", opt->remote,
                  "the remote store to look candidates up in and upload compiles to "
                  "(http(s)://host:port/prefix, a directory, or off; default: TUNE_REMOTE_STORE, "
                  "else the build's)");
  sub->add_flag("--json", opt->json, "print the outcome of every candidate as JSON");
  sub->add_flag("--retry-invalid", opt->retry_invalid,
                "compile again the candidates the kernel cache or the remote store holds as "
                "invalid (failed, over_limit, timed_out), replacing their entries");
  sub->add_flag("--summary", opt->summary,
                "compile nothing: say what the build's warm steps did since the last summary "
                "(compiled, from the store, already cached) and which candidates are invalid")
      ->needs(manifest);
  auto* list = sub->add_option("--list-candidates", opt->list_candidates,
                               "print the candidate ids of a space file, one per line, and "
                               "compile nothing (what the CMake functions read)");
  list->excludes(manifest);
  auto* kernel = sub->add_option("--kernel", opt->kernel,
                                 "with --list-candidates: the name the kernel is declared under; "
                                 "a space of another kernel is refused")
                     ->needs(list);
  sub->add_option("--names-header", opt->names_header,
                  "with --list-candidates and --kernel: also write the kernel's names header "
                  "(tune::kernel::<kernel>::param and ::shape) to this file")
      ->needs(kernel);
  sub->add_option("--entry", opt->entry,
                  "with --list-candidates: a template entry to check against the space")
      ->needs(list);
  sub->footer(
      "Exit status: 0 when every candidate was compiled or found in the cache (valid or not), "
      "1 when a bucket is left with no valid candidate (a warm of every candidate, or "
      "--summary; a single --config step never fails for an invalid candidate), 2 for bad "
      "usage or input, 3 when the compiler cannot be run or the cache written.");
  sub->callback([&run, opt] { run = [opt] { return run_warm(*opt); }; });
}

}  // namespace tune::cli
