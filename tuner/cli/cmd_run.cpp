// `tuner run --manifest M [--bucket B] [--arch A] [--budget S] [--timeout S] [--device N]`:
// tunes a kernel on the GPU by running its runner (tuner/cuda/runner.hpp) once per
// architecture and bucket, each with its trial log at
// `<log_dir>/<arch>/<encode_bucket(bucket)>.trials.jsonl` and its result beside it
// (`.result.json`), then writes the architecture's record, only when every bucket has a winner,
// and verifies it the way `tuner verify` does.
//
// With --bucket only that bucket is measured; the other buckets' winners come from their last
// result files (a result of another pruned space does not count). The new record is verified
// in memory, then written atomically, so that the old record stays as it was unless the new one
// verifies. The record is locked (`<record>.lock`, naming this process) from the first
// measurement to its write: a second `tuner run` of the same record, from this or another
// build tree, or a `tuner record set`, is refused naming the holder. SIGINT and SIGTERM are
// passed on to the runner, which abandons the candidate in flight; no record is written then.
//
// Exit codes: 0 every record written and verified, 1 a bucket without a winner (its record is
// not written) or a kernel without a harness, 2 bad usage or input or a record locked by another
// tune, 3 a broken environment (no runner built, no GPU, a runner killed, the new record does
// not verify), 130/143 interrupted.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <tuner/cli/commands.hpp>
#include <tuner/core/bucket_name.hpp>
#include <tuner/core/file_lock.hpp>
#include <tuner/core/hash.hpp>
#include <tuner/core/record.hpp>
#include <tuner/core/stop_signals.hpp>
#include <tuner/core/subprocess.hpp>
#include <tuner/core/text.hpp>
#include <tuner/core/toolchain.hpp>
#include <tuner/core/verify.hpp>

namespace tune::cli {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The runner's exit code: its status, or 128 + the signal that ended it.
int run_runner(const std::vector<std::string>& argv) {
  StopSignals stop;  // SIGINT/SIGTERM to this process alone reach the runner too
  const ExitStatus s = run_attached(argv);
  return s.signaled ? exit_interrupted(s.signal) : s.code;
}

}  // namespace

namespace {

struct RunOptions {
  std::string manifest;
  std::string bucket;
  std::string arch;
  std::optional<double> budget_s;
  std::optional<double> timeout_s;
  std::optional<int> device;
  bool if_stale = false;
};

// A bucket's result file, when it reads and has a winner of this pruned space.
std::optional<json> winning_result(const fs::path& path, const std::string& pruned_hash) {
  try {
    if (!fs::exists(path)) return std::nullopt;
    json j = json::parse(read_file(path));
    if (j.value("pruned_space_hash", "") != pruned_hash) return std::nullopt;
    if (!j.contains("best") || !j["best"].is_object()) return std::nullopt;
    return j;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

int run_run(const RunOptions& opt) {
  result<KernelBuild> build = load_kernel_build(opt.manifest);
  if (!build) {
    fmt::print(stderr, "{}\n", build.error().str());
    return exit_bad_input;
  }
  const Manifest& manifest = build->manifest;
  const Space& space = build->space;
  if (!manifest.runner) {
    fmt::print(stderr,
               "tuner run: error: kernel '{}' has no harness: add HARNESS to tune_add_kernel to "
               "tune it\n",
               manifest.kernel);
    return exit_negative;
  }
  if (!fs::exists(*manifest.runner)) {
    fmt::print(stderr,
               "tuner run: error: the runner of '{}' is not built ('{}'): build it with 'cmake "
               "--build {} --target {}.runner'\n",
               manifest.kernel, manifest.runner->string(), manifest.build_dir.string(),
               manifest.kernel);
    return exit_environment;
  }
  result<std::vector<std::string>> archs = select_archs(manifest, opt.arch);
  if (!archs) {
    fmt::print(stderr, "{}\n", archs.error().str());
    return exit_bad_input;
  }
  if (!opt.bucket.empty()) {
    if (result<const Bucket*> found = space.find_bucket(opt.bucket); !found) {
      fmt::print(stderr, "{}\n", found.error().str());
      return exit_bad_input;
    }
  }
  std::string toolchain;
  try {
    toolchain = manifest_toolchain(manifest).fingerprint();
  } catch (const std::exception& e) {
    fmt::print(stderr, "tuner run: error: {}\n", e.what());
    return exit_environment;
  }

  int status = exit_ok;
  for (const std::string& arch : *archs) {
    // One tune per record at a time: held from the first measurement to the record's write,
    // so that another build tree of this source tree (or `tuner record set`) is refused.
    const fs::path record_path = manifest.record_path(arch).value();
    const std::string shown = display_path(manifest, record_path);
    fs::create_directories(record_path.parent_path());
    result<FileLock> lock = FileLock::try_lock(record_path, "record");
    if (!lock) {
      fmt::print(stderr,
                 "tuner run: error: {} ({}): {}: another tune of '{}' is writing it (from this "
                 "or another build tree); wait for it to finish or stop it, then run again\n",
                 shown, arch, lock.error().message, manifest.kernel);
      return exit_bad_input;
    }
    if (opt.if_stale) {
      // `tuner tune` checked before warming; another tree's tune may have written the record
      // since. Checked again under the lock, so two trees never tune one record twice.
      result<Verification> v = verify_kernel_record(*build, arch, record_path);
      if (v && v->ok()) {
        fmt::print("{}: record {} is fresh ({}): another tune wrote it meanwhile; nothing to do\n",
                   manifest.kernel, shown, arch);
        std::fflush(stdout);
        continue;
      }
    }
    const fs::path dir = manifest.log_dir / arch;
    fs::create_directories(dir);
    std::vector<std::string> without_winner;
    std::vector<json> results;
    for (const Bucket& bucket : space.buckets()) {
      const std::string enc = encode_bucket(bucket.name);
      const fs::path log = dir / (enc + ".trials.jsonl");
      const fs::path result_path = dir / (enc + ".result.json");
      const std::string pruned_hash = Space::pruned_space_hash(space.configs(bucket).value());
      if (opt.bucket.empty() || opt.bucket == bucket.name) {
        fs::remove(result_path);
        std::vector<std::string> argv = {manifest.runner->string(),
                                         "--manifest",
                                         manifest.path.string(),
                                         "--bucket",
                                         bucket.name,
                                         "--log",
                                         log.string(),
                                         "--arch",
                                         arch,
                                         "--result",
                                         result_path.string()};
        if (opt.budget_s) argv.insert(argv.end(), {"--budget", fmt::format("{}", *opt.budget_s)});
        if (opt.timeout_s)
          argv.insert(argv.end(), {"--timeout", fmt::format("{}", *opt.timeout_s)});
        if (opt.device) argv.insert(argv.end(), {"--device", std::to_string(*opt.device)});
        fmt::print(stderr, "tuner run: {} {} bucket '{}'\n", manifest.kernel, arch, bucket.name);
        const int rc = run_runner(argv);
        if (rc == 130 || rc == 143) {
          fmt::print(stderr, "tuner run: interrupted; no record written (run again to resume)\n");
          return rc;
        }
        if (rc == exit_environment || rc == exit_bad_input) {
          fmt::print(stderr,
                     "tuner run: error: the runner failed for bucket '{}' (exit status "
                     "{}); no record written\n",
                     bucket.name, rc);
          return rc;
        }
        if (rc > 128) {
          fmt::print(stderr,
                     "tuner run: error: the runner of bucket '{}' was killed by {}; no record "
                     "written (its log keeps every finished trial: run again to resume)\n",
                     bucket.name, signal_name(rc - 128));
          return exit_environment;
        }
      }
      std::optional<json> r = winning_result(result_path, pruned_hash);
      if (!r) {
        without_winner.push_back(bucket.name);
        continue;
      }
      results.push_back(*r);
    }
    if (!without_winner.empty()) {
      fmt::print(stderr,
                 "tuner run: error: no record written for {} ({}): no winner for bucket{} {}; "
                 "the old record is left as it was\n",
                 manifest.kernel, arch, without_winner.size() == 1 ? "" : "s",
                 quoted_list(without_winner));
      status = exit_negative;
      continue;
    }

    result<Workspace> ws = current_workspace(manifest, space, arch, toolchain);
    if (!ws) {
      fmt::print(stderr, "{}\n", ws.error().str());
      return exit_bad_input;
    }
    Record record(*ws);
    record.context.stamp_here_and_now();
    for (const json& r : results) {
      if (r.contains("device") && r["device"].is_string())
        record.context.device = r["device"].get<std::string>();
      if (r.contains("driver") && r["driver"].is_string())
        record.context.driver = r["driver"].get<std::string>();
      const json& best = r["best"];
      RecordEntry e;
      e.bucket = r["bucket"].get<std::string>();
      e.pruned_space_hash = r["pruned_space_hash"].get<std::string>();
      for (const auto& [name, value] : best["params"].items())
        e.config.set(name, value.get<ParamValue>());
      e.median_ms = best["median_ms"].get<double>();
      e.samples = best["reps"].get<std::int64_t>();
      if (best["cache_key"].is_string())
        e.cache_key = L2Key{best.value("key_schema", "k1"), best["cache_key"].get<std::string>()};
      e.source = "measured";
      e.runoff = r.value("runoff", json());
      record.insert(std::move(e));
    }
    // Verified as it will be read back, then written atomically (Record::save): a failure at
    // any point leaves the old record as it was.
    result<Record> reread = Record::parse(record.dump(), record_path.string());
    result<Verification> v = reread ? verify_kernel_record(*build, arch, std::move(*reread))
                                    : result<Verification>(fail(reread.error()));
    if (!v || !v->ok()) {
      fmt::print(stderr, "tuner run: error: the new record of {} ({}) does not verify:\n",
                 manifest.kernel, arch);
      if (!v)
        fmt::print(stderr, "{}\n", v.error().str());
      else
        for (const std::string& e : v->errors)
          fmt::print(stderr, "  {}\n", e);
      fmt::print(stderr, "the old record is left as it was\n");
      return exit_environment;
    }
    record.save(record_path);
    fmt::print("{}: wrote {} ({}), verified\n", manifest.kernel, shown, arch);
    for (const RecordEntry& e : record.entries()) {
      std::string how = "sequential medians";
      if (!e.runoff.is_null())
        how = fmt::format("runoff {}", e.runoff.value("outcome", std::string("?")));
      fmt::print("  {}: {} {:.4f} ms ({})\n", e.bucket, e.config.id(), e.median_ms.value_or(0),
                 how);
    }
    std::fflush(stdout);
  }
  return status;
}

}  // namespace

void add_run_command(CLI::App& app, Run& run) {
  auto opt = std::make_shared<RunOptions>();
  auto* sub = app.add_subcommand(
      "run", "tune a kernel on the GPU with its runner, every bucket, and write its record");
  sub->add_option("--manifest", opt->manifest, "the kernel's manifest.json")->required();
  sub->add_option("--bucket", opt->bucket,
                  "measure only this bucket (the others keep their last results)");
  sub->add_option("--arch", opt->arch, "one architecture (default: every one the manifest lists)");
  sub->add_option("--budget", opt->budget_s, "wall-clock budget per bucket in seconds");
  sub->add_option("--timeout", opt->timeout_s, "per-candidate timeout in seconds");
  sub->add_option("--device", opt->device,
                  "the device index (default 0; CUDA_VISIBLE_DEVICES applies)");
  sub->add_flag("--if-stale", opt->if_stale,
                "measure an architecture only when its record does not verify (checked under "
                "the record's lock; what `tuner tune` passes)");
  sub->footer(
      "Exit status: 0 records written and verified, 1 a bucket without a winner (no record "
      "written) or no harness, 2 bad usage or input, 3 a broken environment (no runner, no "
      "GPU), 130/143 interrupted.");
  sub->callback([&run, opt] { run = [opt] { return run_run(*opt); }; });
}

}  // namespace tune::cli
