// `tuner record set --manifest M --bucket B --config ID [--arch A]`: pins a config as a bucket's
// winner without measuring. The entry carries the config's real cache key, no median, zero
// samples and `"source": "pinned"`; a config outside the bucket's pruned space is refused. The
// whole record is rewritten atomically with the current provenance (created when missing).
// Prints `<record>: pinned bucket '<B>' to <id> (cache key k1:<digest>)`; pinning over a
// measured winner says, on stderr, which measurement it drops (the median, the samples and the
// runoff go with the entry). --json prints {"record", "kernel", "arch", "bucket", "config",
// "cache_key", "replaced"} on stdout instead, `replaced` being the entry it took the place of
// ({"config", "source", "median_ms", "samples"}) or null.
// Refused, naming the holder, while a tune or another `record set` holds the record's lock.
// Before it writes, the config is looked up in the kernel cache (by its key; not in the store):
// a cached compile that `failed` or is `over_limit` is refused, unless --force pins it anyway,
// marking the entry `"forced": {"status", "reason"}` (verification then warns); a `timed_out`
// one (not proof that it cannot compile) is pinned with a warning; a config the cache lacks is
// pinned with a note saying how to compile it. --json adds "cache_status" (the entry's status,
// null when none) and "forced".
// `tuner record repin [--manifest M...] [--build-dir D] [--arch A]` does it for every entry of
// every stale record, each to the config it records (config ids are read in any param order).
// Exit codes: 0 pinned, 2 bad input (manifest, space, arch, bucket, config, an invalid compile
// without --force, an unreadable record or one of another kernel, a record locked by a tune), 3
// nvcc cannot be run or the record cannot be written.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <tuner/cli/build_tree.hpp>
#include <tuner/cli/commands.hpp>
#include <tuner/cli/kernel_choice.hpp>
#include <tuner/core/base/json_text.hpp>
#include <tuner/core/base/text.hpp>
#include <tuner/core/build/kernel_cache.hpp>
#include <tuner/core/record/verify.hpp>
#include <tuner/core/search/file_lock.hpp>

namespace tune::cli {

namespace {

namespace fs = std::filesystem;

struct RecordSetOptions {
  std::string manifest;
  std::string bucket;
  std::string config;
  std::string arch;
  bool force = false;
  bool json = false;
};

// What the kernel cache says of the config to pin, said on stderr: nullopt when the pin may go
// ahead (with the entry's mark in `forced` when --force pins an invalid compile), else the exit
// status of a refusal.
std::optional<int> check_compile(const Manifest& m, const std::string& arch, const Config& config,
                                 const CacheKey& key, const RecordSetOptions& opt,
                                 const std::string& label,
                                 std::optional<RecordEntry::Forced>& forced,
                                 nlohmann::json& cache_status) {
  const KernelCache cache(effective_cache_dir(m.cache_dir));
  const std::optional<CacheEntry> entry = cache.lookup(key.digest);
  if (!entry) {
    fmt::print(stderr,
               "{}: note: config {} was never compiled here (the kernel cache {} has no entry "
               "for it): pinned all the same; to check that it compiles: tuner warm --manifest "
               "{} --arch {} --config '{}'\n",
               label, config.id(), cache.dir().string(), m.path.string(), arch, config.id());
    return std::nullopt;
  }
  cache_status = std::string(to_string(entry->status));
  if (entry->status == CacheStatus::timed_out) {
    fmt::print(stderr,
               "{}: warning: config {} timed out compiling for {} ({}): pinned all the same, as "
               "a timeout does not say it cannot compile; a warm with a longer compile timeout "
               "tells\n",
               label, config.id(), arch, entry->reason);
    return std::nullopt;
  }
  if (entry->valid()) return std::nullopt;
  const std::string status(to_string(entry->status));
  const std::string why = entry->status == CacheStatus::over_limit
                              ? "its compile is over the limits of " + arch
                              : "its compile failed for " + arch;
  if (!opt.force) {
    fmt::print(stderr,
               "tuner record set: error: config {} of bucket '{}' is invalid ({}): {}: {} (see "
               "{}): pin a config that compiles, or pass --force to pin it anyway (the entry is "
               "then marked forced)\n",
               config.id(), opt.bucket, status, why, entry->reason,
               cache.entry_path(key.digest).string());
    return exit_bad_input;
  }
  fmt::print(stderr, "{}: warning: bucket '{}' pinned with --force to {}, although {}: {}\n", label,
             opt.bucket, config.id(), why, entry->reason);
  forced = RecordEntry::Forced{status, entry->reason};
  return std::nullopt;
}

// The entry of `bucket` that pinning replaces, as JSON (null when there is none), and a note on
// stderr when it was measured: its median, samples and runoff are dropped.
nlohmann::json replaced_entry(const Record& record, const std::string& bucket,
                              const std::string& label) {
  for (const RecordEntry& e : record.entries()) {
    if (e.bucket != bucket) continue;
    if (e.source == "measured" && e.median_ms)
      fmt::print(stderr,
                 "{}: note: bucket '{}' had the measured winner {} ({:.4g} ms over {} samples); "
                 "pinning drops that measurement (re-tune to measure again)\n",
                 label, bucket, e.config.id(), *e.median_ms, e.samples);
    return {{"config", e.config.id()},
            {"source", e.source},
            {"median_ms", e.median_ms ? nlohmann::json(*e.median_ms) : nlohmann::json(nullptr)},
            {"samples", e.samples}};
  }
  return nullptr;
}

// What is wrong with the names of a config id that matches no config: `: it lacks 'LOAD'`,
// `: the space has no param 'TILES'`; empty when the names are the space's (a value is off).
std::string param_names_problem(const Space& space, std::string_view id) {
  std::vector<std::string> given;
  for (std::size_t start = 0; start <= id.size();) {
    const std::size_t comma = std::min(id.find(',', start), id.size());
    const std::string_view part = id.substr(start, comma - start);
    given.emplace_back(part.substr(0, part.find('=')));
    start = comma + 1;
  }
  std::vector<std::string> missing, unknown;
  for (const Param& p : space.params())
    if (std::find(given.begin(), given.end(), p.name) == given.end()) missing.push_back(p.name);
  for (const std::string& g : given)
    if (std::none_of(space.params().begin(), space.params().end(),
                     [&](const Param& p) { return p.name == g; }))
      unknown.push_back(g);
  std::string out;
  if (!missing.empty()) out += ": it lacks " + quoted_list(missing);
  if (!unknown.empty())
    out +=
        (out.empty() ? ": " : "; ") + std::string("the space has no param ") + quoted_list(unknown);
  if (out.empty()) out = ": a value is not one the space lists (tuner space lists its configs)";
  return out;
}

int run_record_set(const RecordSetOptions& opt) {
  std::optional<ChosenKernel> chosen = load_chosen_kernel(opt.manifest, opt.arch, ArchChoice::one);
  if (!chosen) return exit_bad_input;
  const Manifest& m = chosen->build.manifest;
  const Space& space = chosen->build.space;
  const std::string arch = chosen->archs.front();
  result<fs::path> path = m.record_path(arch);
  if (!path) {
    fmt::print(stderr, "{}\n", path.error().str());
    return exit_bad_input;
  }
  result<const Bucket*> found = space.find_bucket(opt.bucket);
  if (!found) {
    fmt::print(stderr, "{}\n", found.error().str());
    return exit_bad_input;
  }
  const Bucket* bucket = *found;
  result<std::vector<Config>> pruned = space.configs(*bucket);
  if (!pruned) {
    fmt::print(stderr, "{}\n", pruned.error().str());
    return exit_bad_input;
  }
  const Config* config = find_config(*pruned, opt.config);
  if (config == nullptr) {
    if (find_config(space.all_configs(), opt.config) != nullptr)
      fmt::print(stderr,
                 "tuner record set: error: config '{}' is pruned from bucket '{}': pin one of "
                 "its {} configs (tuner space {} --bucket '{}' lists them)\n",
                 opt.config, opt.bucket, pruned->size(), m.space.string(), opt.bucket);
    else
      fmt::print(stderr, "tuner record set: error: config '{}' is not in the space '{}'{}\n",
                 opt.config, m.space.string(), param_names_problem(space, opt.config));
    return exit_bad_input;
  }

  CacheKeyer keyer(m, space);
  result<Workspace> w = current_workspace(m, space, arch, keyer.toolchain());
  if (!w) {
    fmt::print(stderr, "{}\n", w.error().str());
    return exit_bad_input;
  }
  std::string label = display_path(m, *path);
  // Refused while a tune (or another `record set`) writes this record.
  std::error_code lock_ec;
  std::filesystem::create_directories(path->parent_path(), lock_ec);
  result<FileLock> lock = FileLock::try_lock(*path, "record");
  if (!lock && lock.error().path == FileLock::lock_path(*path).string()) {
    fmt::print(stderr, "tuner record set: error: {}\n", lock.error().str());  // a refused lock
    return exit_bad_input;
  }
  if (!lock) {
    fmt::print(stderr, "tuner record set: error: {}: {}: wait for the tune that writes it\n", label,
               lock.error().message);
    return exit_bad_input;
  }
  Record record;
  std::error_code ec;
  if (fs::exists(*path, ec)) {
    result<Record> loaded = Record::load(*path);
    if (!loaded) {
      fmt::print(stderr, "{}\n", loaded.error().str());
      return exit_bad_input;
    }
    if (loaded->schema_version != record_schema_version || loaded->kernel != m.kernel ||
        loaded->arch != arch) {
      fmt::print(stderr,
                 "tuner record set: error: '{}' is a record of schema {} for kernel '{}' arch "
                 "'{}', not of schema {} for '{}' '{}': move it away or fix the manifest\n",
                 label, loaded->schema_version, loaded->kernel, loaded->arch, record_schema_version,
                 m.kernel, arch);
      return exit_bad_input;
    }
    record = std::move(*loaded);
    // The provenance becomes the current one; entries pinned or tuned against another source,
    // space or toolchain keep their old keys, so verification still names them.
    record.source_hash = w->source_hash;
    record.space_hash = w->space_hash;
    record.toolchain = w->toolchain;
    record.identity = w->identity;
    record.tuner_version = w->tuner_version;
  } else {
    record = Record(*w);
    record.context.stamp_here_and_now();
  }
  // What the kernel cache says of the config: an invalid compile is refused unless forced.
  const CacheKey key = keyer.key(*config, arch);
  std::optional<RecordEntry::Forced> forced;
  nlohmann::json cache_status = nullptr;
  if (std::optional<int> refused =
          check_compile(m, arch, *config, key, opt, label, forced, cache_status))
    return *refused;
  RecordEntry entry;
  entry.bucket = bucket->name;
  entry.pruned_space_hash = w->bucket(bucket->name)->pruned_space_hash;
  entry.config = *config;
  entry.median_ms.reset();
  entry.samples = 0;
  entry.cache_key = L2Key{key.schema, key.digest};
  entry.source = "pinned";
  entry.forced = forced;
  const nlohmann::json replaced = replaced_entry(record, bucket->name, label);
  record.insert(std::move(entry));
  record.save(*path);
  if (opt.json)
    fmt::print("{}\n", dump_json(nlohmann::json{{"record", path->string()},
                                                {"kernel", m.kernel},
                                                {"arch", arch},
                                                {"bucket", bucket->name},
                                                {"config", config->id()},
                                                {"cache_key", key.schema + ":" + key.digest},
                                                {"cache_status", cache_status},
                                                {"forced", forced.has_value()},
                                                {"replaced", replaced}},
                                 2));
  else
    fmt::print("{}: pinned bucket '{}' to {} (cache key {}:{})\n", label, bucket->name,
               config->id(), key.schema, key.digest);
  return exit_ok;
}

struct RepinOptions {
  std::vector<std::string> manifests;
  std::string build_dir = "build";
  std::string arch;
};

// `tuner record repin`: every entry of every stale record pinned again to the config it
// records, the way each `tuner record set` of the stale notes would, in one command. A fresh
// record, a missing one and a bucket without an entry (or whose recorded config left its
// pruned space) are left alone, the last two with the command that pins them.
int run_record_repin(const RepinOptions& opt) {
  std::vector<fs::path> manifests(opt.manifests.begin(), opt.manifests.end());
  if (manifests.empty()) manifests = build_tree_manifests(opt.build_dir);
  if (manifests.empty()) {
    fmt::print(stderr,
               "tuner record repin: error: no manifests in '{}': configure the build with CMake "
               "first, or name them with --manifest\n",
               (fs::path(opt.build_dir) / "tune").string());
    return exit_bad_input;
  }
  int status = exit_ok;
  std::size_t pinned = 0, records = 0, left = 0;
  for (const fs::path& path : manifests) {
    result<KernelBuild> build = load_kernel_build(path);
    if (!build) {
      fmt::print(stderr, "{}\n", build.error().str());
      status = exit_bad_input;
      continue;
    }
    const Manifest& m = build->manifest;
    result<std::vector<std::string>> archs = select_archs(m, opt.arch);
    if (!archs) {
      if (!opt.arch.empty() && !opt.manifests.empty()) {
        fmt::print(stderr, "{}\n", archs.error().str());
        status = exit_bad_input;
      }
      continue;  // a kernel of the tree not built for --arch
    }
    for (const std::string& arch : *archs) {
      const fs::path record_path = m.record_path(arch).value();
      result<Verification> v = verify_kernel_record(*build, arch, record_path);
      if (!v) {
        fmt::print(stderr, "{}\n", v.error().str());
        status = exit_bad_input;
        continue;
      }
      if (v->state != RecordState::stale) continue;
      result<Record> record = Record::load(record_path);
      if (!record) {
        fmt::print(stderr, "{}\n", record.error().str());
        status = exit_bad_input;
        continue;
      }
      ++records;
      for (const Bucket& bucket : build->space.buckets()) {
        const RecordEntry* e = record->get(bucket.name);
        result<std::vector<Config>> pruned = build->space.configs(bucket);
        if (e == nullptr || !pruned || find_config(*pruned, e->config.id()) == nullptr) {
          fmt::print(stderr,
                     "{}: note: bucket '{}' has {}: pin one with tuner record set --manifest {} "
                     "--arch {} --bucket '{}' --config <id>\n",
                     display_path(m, record_path), bucket.name,
                     e == nullptr ? "no entry" : "a recorded config its space no longer holds",
                     m.path.string(), arch, bucket.name);
          ++left;
          continue;
        }
        RecordSetOptions set;
        set.manifest = m.path.string();
        set.arch = arch;
        set.bucket = bucket.name;
        set.config = e->config.id();
        const int rc = run_record_set(set);
        if (rc == exit_ok)
          ++pinned;
        else
          ++left, status = std::max(status, rc);
      }
    }
  }
  fmt::print("tuner record repin: {} {} pinned again in {} stale {}{}\n", pinned,
             pinned == 1 ? "entry" : "entries", records, records == 1 ? "record" : "records",
             left > 0 ? fmt::format(", {} left (above)", left) : "");
  return status;
}

}  // namespace

void add_record_command(CLI::App& app, Run& run) {
  auto* sub =
      app.add_subcommand("record", "edit a record without measuring (record set, record repin)");
  sub->require_subcommand(1);
  sub->footer(
      "Exit status: that of the subcommand ('tuner record set --help', 'tuner record repin "
      "--help'); 2 bad usage.");
  auto opt = std::make_shared<RecordSetOptions>();
  auto* set = sub->add_subcommand(
      "set", "pin a config as a bucket's winner without measuring (the entry says pinned)");
  set->add_option("--manifest", opt->manifest, "the kernel's manifest.json")->required();
  set->add_option("--bucket", opt->bucket, "the bucket label, exactly")->required();
  set->add_option("--config", opt->config,
                  "the config id, e.g. BM=64,LAYOUT=\"row\" (params in any order; strings may be "
                  "unquoted)")
      ->required();
  set->add_option("--arch", opt->arch, "the architecture (default: the manifest's only one)");
  set->add_flag("--force", opt->force,
                "pin a config whose cached compile failed or is over the architecture's limits "
                "(the entry is marked forced)");
  set->add_flag("--json", opt->json, "print what was pinned, and what it replaced, as JSON");
  set->footer(
      "Exit status: 0 pinned, 2 bad usage or input (manifest, space, arch, bucket, config, an "
      "invalid compile without --force, an unreadable record or one of another kernel, a record "
      "locked by a tune), 3 nvcc cannot be run or the record cannot be written.");
  set->callback([&run, opt] { run = [opt] { return run_record_set(*opt); }; });
  auto ropt = std::make_shared<RepinOptions>();
  auto* repin = sub->add_subcommand(
      "repin",
      "pin every entry of every stale record again to the config it records, without a GPU "
      "(one `record set` per entry, as the stale notes list them)");
  repin->add_option("--manifest", ropt->manifests, "a kernel's manifest.json (repeatable)");
  repin->add_option("--build-dir", ropt->build_dir,
                    "every kernel the build tree declares (default: build)");
  repin->add_option("--arch", ropt->arch, "only this architecture");
  repin->footer(
      "Exit status: 0 when every entry of the stale records was pinned again (or none was "
      "stale), 2 bad input (a manifest or record that does not read, a recorded config whose "
      "compile failed), 3 nvcc cannot be run or a record cannot be written.");
  repin->callback([&run, ropt] { run = [ropt] { return run_record_repin(*ropt); }; });
}

}  // namespace tune::cli
