// `tuner store status|push|pull|gc`: the remote store (docs/store.md) by hand.
//
//   tuner store status [--remote S] [--build-dir DIR] [--json]
//       whether the store answers; for a directory store its object counts; with --build-dir, how
//       many of the build tree's cache entries the store holds
//   tuner store push --build-dir DIR [--remote S]
//       uploads the build tree's kernel cache entries and its measured trials
//   tuner store pull --build-dir DIR [--remote S]
//       downloads the entries of every candidate of the build tree's kernels that the local
//       cache lacks (trials are adopted by the tune itself, which knows its device)
//   tuner store gc --keep-days N [--remote S]
//       removes what nobody wrote or read for N days from a directory store
//   tuner store check [--remote S]
//       reads the location as every command does (parse_store_location) and prints it as read,
//       without asking the store: the configure's check of TUNE_REMOTE_STORE, which it passes in
//       the environment (never on a command line) and writes into the manifests as printed
//
// The store is --remote, else TUNE_REMOTE_STORE, else the one the build tree was configured
// with. Exit codes: 0 done, 2 bad usage (no store, gc of an HTTP store), 3 the store does not
// answer or cannot be written.
#include <algorithm>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <tuner/cli/build_tree.hpp>
#include <tuner/cli/cli_checks.hpp>
#include <tuner/cli/commands.hpp>
#include <tuner/cli/log_reader.hpp>
#include <tuner/core/base/bucket_name.hpp>
#include <tuner/core/base/hash.hpp>
#include <tuner/core/build/cache_key.hpp>
#include <tuner/core/build/kernel_build.hpp>
#include <tuner/core/record/bucket_result.hpp>
#include <tuner/core/store/candidate_store.hpp>
#include <tuner/core/store/remote_store.hpp>
#include <tuner/core/store/shared_trials.hpp>

namespace tune::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct StoreOptions {
  std::string action;
  std::string remote;
  std::string build;
  double keep_days = -1;
  bool force = false;
  bool json = false;
};

// The kernels of a build tree (build_tree.hpp) whose manifests load.
std::vector<KernelBuild> build_kernels(const std::string& build) {
  std::vector<KernelBuild> out;
  if (build.empty()) return out;
  for (const fs::path& m : build_tree_manifests(build)) {
    result<KernelBuild> k = load_kernel_build(m);
    if (k)
      out.push_back(std::move(*k));
    else
      fmt::print(stderr, "tuner store: warning: {}\n", k.error().str());
  }
  return out;
}

// The kernel cache directories of those kernels, each once.
std::vector<fs::path> cache_dirs(const std::vector<KernelBuild>& kernels) {
  std::set<fs::path> dirs;
  for (const KernelBuild& k : kernels)
    dirs.insert(effective_cache_dir(k.manifest.cache_dir));
  return {dirs.begin(), dirs.end()};
}

// The keys of the entries in a cache directory (`<key>.json`), sorted.
std::vector<std::string> cached_keys(const fs::path& dir) {
  std::vector<std::string> keys;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    if (e.path().extension() == ".json" && valid_store_path("ac/" + e.path().stem().string()))
      keys.push_back(e.path().stem().string());
  }
  std::sort(keys.begin(), keys.end());
  return keys;
}

int status_command(const StoreOptions& opt, RemoteStore& remote,
                   const std::vector<KernelBuild>& kernels) {
  // A key nobody stores: any answer but a failure means the server is there.
  const StoreReply probe = remote.store().head("ac/" + std::string(64, '0'));
  const bool reachable = probe.status != StoreStatus::failed;
  json out = {{"store", remote.where()}, {"reachable", reachable}};
  if (!reachable) out["error"] = probe.error;
  if (std::optional<fs::path> dir = remote.store().directory()) {
    for (const char* sub : {"ac", "cas"}) {
      std::int64_t count = 0;
      std::int64_t bytes = 0;
      std::error_code ec;
      for (const fs::directory_entry& e : fs::directory_iterator(*dir / sub, ec)) {
        if (e.path().filename().string().front() == '.' || !e.is_regular_file(ec)) continue;
        ++count;
        bytes += static_cast<std::int64_t>(e.file_size(ec));
      }
      out[sub] = {{"objects", count}, {"bytes", bytes}};
    }
  }
  if (reachable && !kernels.empty()) {
    std::int64_t local = 0;
    std::int64_t stored = 0;
    for (const fs::path& dir : cache_dirs(kernels))
      for (const std::string& key : cached_keys(dir)) {
        ++local;
        if (remote.store().head("ac/" + key).status == StoreStatus::ok) ++stored;
      }
    out["local_entries"] = local;
    out["local_entries_in_store"] = stored;
  }
  if (opt.json) {
    fmt::print("{}\n", out.dump(2));
  } else {
    fmt::print("remote store: {}\n", remote.where());
    fmt::print("reachable: {}\n", reachable ? "yes" : "no (" + probe.error + ")");
    for (const char* sub : {"ac", "cas"})
      if (out.contains(sub))
        fmt::print("{}: {} objects, {} bytes\n", sub, out[sub]["objects"].get<std::int64_t>(),
                   out[sub]["bytes"].get<std::int64_t>());
    if (out.contains("local_entries"))
      fmt::print("this build's cache: {} entries, {} of them in the store\n",
                 out["local_entries"].get<std::int64_t>(),
                 out["local_entries_in_store"].get<std::int64_t>());
  }
  return reachable ? exit_ok : exit_environment;
}

// Uploads the measured trials of one bucket's log, keyed with the device and driver of its
// result (a log without a result says nothing of its driver, and is left out).
std::int64_t push_bucket_trials(RemoteStore& remote, const KernelBuild& k, const std::string& arch,
                                const Bucket& bucket) {
  const fs::path dir = k.manifest.log_dir / arch;
  const fs::path log = dir / bucket_file_name(bucket.name, ".trials.jsonl");
  const fs::path result_path = dir / bucket_file_name(bucket.name, ".result.json");
  std::error_code ec;
  if (!fs::exists(log, ec) || !fs::exists(result_path, ec)) return 0;
  result<BucketResult> r = BucketResult::load(result_path);
  if (!r || !r->device || !r->driver) return 0;
  result<LogFile> file = parse_log_file(log.string(), read_file(log));
  if (!file) return 0;
  std::int64_t pushed = 0;
  const std::string host = host_name();
  for (const json& line : file->trials) {
    result<Trial> t = trial_from_json(line);
    if (!t || !t->is_measured() || t->phase == Phase::runoff || t->remote || !t->cache_key ||
        t->device != r->device)
      continue;
    const SharedTrial shared{*t, host, *r->device, *r->driver};
    const std::string key =
        shared_trial_key(*t->cache_key, *r->device, *r->driver, bucket, k.space.bench());
    if (!remote.put_json("ac/" + key, to_json(shared))) return pushed;
    ++pushed;
  }
  return pushed;
}

int push_command(RemoteStore& remote, const std::vector<KernelBuild>& kernels) {
  std::int64_t entries = 0;
  for (const fs::path& dir : cache_dirs(kernels)) {
    const KernelCache cache(dir);
    for (const std::string& key : cached_keys(dir))
      if (std::optional<CacheEntry> e = cache.lookup(key))
        entries += remote.upload_entry(cache, *e) ? 1 : 0;
  }
  std::int64_t trials = 0;
  for (const KernelBuild& k : kernels)
    for (const std::string& arch : k.manifest.archs)
      for (const Bucket& b : k.space.buckets())
        trials += push_bucket_trials(remote, k, arch, b);
  fmt::print("tuner store: pushed {} cache entries and {} trials to {} ({} bytes)\n", entries,
             trials, remote.where(), remote.stats().uploaded_bytes);
  return remote.uploading() ? exit_ok : exit_environment;
}

int pull_command(RemoteStore& remote, const std::vector<KernelBuild>& kernels) {
  std::int64_t pulled = 0;
  std::int64_t present = 0;
  for (const KernelBuild& k : kernels) {
    const KernelCache cache(effective_cache_dir(k.manifest.cache_dir));
    const CacheKeyer keyer(k.manifest, k.space);
    std::set<std::string> seen;
    for (const Bucket& b : k.space.buckets()) {
      result<std::vector<Config>> configs = k.space.configs(b);
      if (!configs) continue;
      for (const Config& c : *configs)
        for (const std::string& arch : k.manifest.archs) {
          const std::string key = keyer.key(c, arch).digest;
          if (!seen.insert(key).second) continue;
          if (cache.lookup(key))
            ++present;
          else if (remote.fetch_entry(cache, compile_request(k.manifest, keyer, c, arch)))
            ++pulled;
        }
    }
  }
  fmt::print("tuner store: pulled {} cache entries from {} ({} bytes); {} were here already\n",
             pulled, remote.where(), remote.stats().downloaded_bytes, present);
  return remote.reachable() ? exit_ok : exit_environment;
}

int run_store(const StoreOptions& opt) {
  if (opt.action == "check") {
    const std::string location = remote_location(opt.remote, "");
    if (location.empty()) {
      fmt::print("off\n");
      return exit_ok;
    }
    result<StoreLocation> parsed = parse_store_location(location, "TUNE_REMOTE_STORE");
    if (!parsed) {
      fmt::print(stderr, "{}\n", parsed.error().str());
      return exit_bad_input;
    }
    fmt::print("{}\n", parsed->text);
    return exit_ok;
  }
  const std::vector<KernelBuild> kernels = build_kernels(opt.build);
  if ((opt.action == "push" || opt.action == "pull") && opt.build.empty()) {
    fmt::print(stderr, "tuner store {}: error: --build-dir is required\n", opt.action);
    return exit_bad_input;
  }
  const std::string configured = kernels.empty() ? "" : kernels.front().manifest.remote_store;
  const std::string location = remote_location(opt.remote, configured);
  if (location.empty()) {
    fmt::print(stderr,
               "tuner store: error: no remote store: pass --remote or set TUNE_REMOTE_STORE\n");
    return exit_bad_input;
  }
  result<std::unique_ptr<Store>> store = open_store(location, "--remote");
  if (!store) {
    fmt::print(stderr, "{}\n", store.error().str());
    return exit_bad_input;
  }
  if (opt.action == "gc") {
    std::optional<fs::path> dir = (*store)->directory();
    if (!dir) {
      fmt::print(stderr,
                 "tuner store gc: error: '{}' is an HTTP store: gc works on a directory store "
                 "only (an HTTP server expires its own objects, e.g. bazel-remote --max_size)\n",
                 (*store)->where());
      return exit_bad_input;
    }
    // Under an hour, gc may take an object a build is writing or about to read: only on purpose.
    if (opt.keep_days * 24 < 1 && !opt.force) {
      fmt::print(stderr,
                 "tuner store gc: error: --keep-days {} would remove objects written less than an "
                 "hour ago, which builds may be using: pass --force to do so, or keep at least "
                 "0.05 days\n",
                 opt.keep_days);
      return exit_bad_input;
    }
    const GcCounts c = gc_directory_store(*dir, opt.keep_days);
    fmt::print("tuner store gc: {}: removed {} objects ({} bytes), kept {}\n", dir->string(),
               c.removed, c.removed_bytes, c.kept);
    return exit_ok;
  }
  // No down marker: a command by hand asks the store itself every time.
  RemoteStore remote(std::move(*store), [](const std::string& w) {
    fmt::print(stderr, "tuner store: warning: {}\n", w);
  });
  if (opt.action == "status") return status_command(opt, remote, kernels);
  if (opt.action == "push") return push_command(remote, kernels);
  return pull_command(remote, kernels);
}

}  // namespace

void add_store_command(CLI::App& app, Run& run) {
  auto opt = std::make_shared<StoreOptions>();
  auto* sub = app.add_subcommand(
      "store",
      "the remote store of compiled candidates and trials; docs/store.md tells the layout");
  sub->require_subcommand(1);
  // Before the subcommands are added: each takes its parent's footer.
  sub->footer(
      "Exit status: 0 done, 2 bad usage (no store; gc of an HTTP store), 3 the store does not "
      "answer or cannot be written.");
  auto common = [&](CLI::App* s) {
    s->add_option("--remote", opt->remote,
                  "the store (http(s)://host:port/prefix or a directory; default: "
                  "TUNE_REMOTE_STORE, else the build tree's)");
  };
  auto* status = sub->add_subcommand("status", "whether the store answers, and counts");
  common(status);
  status->add_option("--build-dir,--build", opt->build,
                     "a build tree: how many of its entries are stored");
  status->add_flag("--json", opt->json, "print the status as JSON");
  auto* push = sub->add_subcommand("push", "upload a build tree's kernel cache and trials");
  common(push);
  push->add_option("--build-dir,--build", opt->build, "the build tree")->required();
  auto* pull = sub->add_subcommand("pull", "download the build tree's candidates the cache lacks");
  common(pull);
  pull->add_option("--build-dir,--build", opt->build, "the build tree")->required();
  auto* gc = sub->add_subcommand("gc", "remove old objects from a directory store");
  common(gc);
  gc->add_option("--keep-days", opt->keep_days, "keep what was written or read in N days")
      ->required()
      ->check(days());
  gc->add_flag("--force", opt->force, "allow --keep-days under an hour (0.0417)");
  auto* check = sub->add_subcommand(
      "check",
      "print the store location as tune reads it, or why it cannot be used ('off' for "
      "none); the store is not asked");
  check->add_option("--remote", opt->remote, "the location (default: TUNE_REMOTE_STORE)");
  for (CLI::App* s : {status, push, pull, gc, check}) {
    const std::string name = s->get_name();
    s->callback([&run, opt, name] {
      opt->action = name;
      run = [opt] { return run_store(*opt); };
    });
  }
}

}  // namespace tune::cli
