// `tuner run --manifest M [--bucket B] [--arch A] [--budget S] [--timeout S] [--device N]
// [--if-stale]`: tunes a kernel on the GPU, every bucket of every architecture, and writes each
// architecture's record. It drives the supervisor itself (tuner/core/tune/kernel_tune.hpp), which
// measures the candidates in the kernel's runner, the measuring worker; each bucket has its
// trial log at `<log_dir>/<arch>/<bucket_file_name(bucket)>.trials.jsonl` and its result beside it
// (`.result.json`). The record is written only when every bucket has a winner, verified in
// memory first the way `tuner verify` does, then written atomically: a failure at any point
// leaves the old record as it was.
//
// With --bucket only that bucket is measured; the other buckets' winners come from their last
// results (a result of another pruned space does not count). The record is locked
// (`<record>.lock`, naming this process) from the first measurement to its write: a second
// `tuner run` of the same record, from this or another build tree, or a `tuner record set`, is
// refused naming the holder. SIGINT and SIGTERM kill the worker and abandon the candidate in
// flight; the log keeps every finished trial and no record is written.
//
// Output: one line per trial on stderr (`<bucket>: [3/12] BLOCK=256 0.0123 ms (50 reps)`), the
// bucket's winner, and on stdout `<kernel>: wrote <record> (<arch>), verified` with one line per
// bucket; with --json those go to stderr and stdout gets {"kernel", "records": [...]} once the
// run ends with records written or a bucket without a winner (records_summary,
// tuner/cli/json_summary.hpp). Exit codes: 0 every record written and verified, 1 a bucket without
// a winner (its record is not written) or a kernel without a harness, 2 bad usage or input or a
// record locked by another tune, 3 a broken environment (no runner built, no GPU, the new record
// does not verify), 130/143 interrupted.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/core.h>

#include <tuner/cli/cli_checks.hpp>
#include <tuner/cli/commands.hpp>
#include <tuner/cli/json_summary.hpp>
#include <tuner/cli/kernel_choice.hpp>
#include <tuner/core/base/bucket_name.hpp>
#include <tuner/core/base/input_limits.hpp>
#include <tuner/core/base/json_text.hpp>
#include <tuner/core/base/safe_file.hpp>
#include <tuner/core/base/text.hpp>
#include <tuner/core/build/compiler_launcher.hpp>
#include <tuner/core/build/toolchain.hpp>
#include <tuner/core/process/stop_signals.hpp>
#include <tuner/core/record/bucket_result.hpp>
#include <tuner/core/record/verify.hpp>
#include <tuner/core/search/compile_ahead.hpp>
#include <tuner/core/search/file_lock.hpp>
#include <tuner/core/store/remote_store.hpp>
#include <tuner/core/tune/kernel_tune.hpp>
#include <tuner/core/tune/total_budget.hpp>

namespace tune::cli {

namespace fs = std::filesystem;

namespace {

// What one bucket's tune ended in: a result (with or without a winner), or an exit code that
// stops the whole run.
struct BucketOutcome {
  std::optional<BucketResult> result;
  int stop = exit_ok;
};

BucketOutcome tune_one(const KernelBuild& build, const RunOptions& opt, const std::string& arch,
                       const Bucket& bucket, const fs::path& log, const fs::path& result_path) {
  const Manifest& manifest = build.manifest;
  fs::remove(result_path);
  fmt::print(stderr, "tuner run: {} {} bucket '{}'\n", manifest.kernel, arch, bucket.name);
  auto say = [](const std::string& line) {
    fmt::print(stderr, "{}\n", line);
    std::fflush(stderr);
  };
  BucketTune job{build,
                 bucket,
                 arch,
                 log,
                 opt.budget_s,
                 opt.timeout_s,
                 process_launcher(worker_command(manifest, bucket.name, arch, opt.device)),
                 say,
                 opt.store,
                 !opt.no_remote_trials};
  if (opt.compile_ahead) {
    const CompilerLauncher launcher = compiler_launcher(manifest);
    job.compile_ahead = compile_ahead_jobs(opt.compile_jobs, !launcher.empty());
    fmt::print(stderr, "tuner run: compiling ahead, {} at once {}\n", job.compile_ahead,
               launcher.empty() ? std::string("on this host")
                                : "through the compiler launcher " + launcher.describe());
  }
  job.prior_log = prior_log_path(log.parent_path(), bucket.name);
  try {
    result<BucketResult> r = tune_bucket(job);
    if (!r) {
      fmt::print(stderr, "{}\n", r.error().str());
      return {std::nullopt, exit_bad_input};
    }
    fmt::print(stderr, "{}: {}\n", bucket.name, describe_outcome(*r));
    r->save(result_path);
    return {std::move(*r), exit_ok};
  } catch (const Interrupted& stop) {
    fmt::print(stderr, "{}: interrupted; the log keeps every finished trial\n", bucket.name);
    fmt::print(stderr, "tuner run: interrupted; no record written (run again to resume)\n");
    return {std::nullopt, exit_interrupted(stop.signal)};
  } catch (const std::exception& e) {  // the worker cannot start, nvcc cannot be asked, I/O
    fmt::print(stderr, "tuner run: error: {}\n", e.what());
    return {std::nullopt, exit_environment};
  }
}

// The bucket's last result, when it has a winner of this pruned space.
std::optional<BucketResult> last_result(const fs::path& path, const std::string& pruned_hash) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return std::nullopt;
  result<BucketResult> r = BucketResult::load(path);
  if (!r || r->pruned_space_hash != pruned_hash || !r->best) return std::nullopt;
  return std::move(*r);
}

}  // namespace

int write_record(const KernelBuild& build, const std::string& arch, const Record& record,
                 const fs::path& record_path, const char* command) {
  const Manifest& manifest = build.manifest;
  result<Record> reread = Record::parse(record.dump(), record_path.string());
  // An adopted winner (the budget ran out before its check) is written, marked: every other
  // reader of the record calls it not fresh (docs/trust.md).
  VerifyOptions options;
  options.allow_unverified = true;
  result<Verification> v = reread ? verify_kernel_record(build, arch, std::move(*reread), options)
                                  : result<Verification>(fail(reread.error()));
  if (!v || !v->ok()) {
    fmt::print(stderr, "{}: error: the new record of {} ({}) does not verify:\n", command,
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
  fmt::print("{}: wrote {} ({}), verified\n", manifest.kernel, display_path(manifest, record_path),
             arch);
  for (const std::string& w : v->warnings)
    if (w.find(" was adopted from ") != std::string::npos)
      fmt::print(stderr,
                 "{}: warning: {}: the record is not fresh until a tune measures it here ({})\n",
                 command, w, manifest.retune_command());
  for (const RecordEntry& e : record.entries()) {
    std::string how = "sequential medians";
    if (!e.runoff.is_null())
      how = fmt::format("runoff {}", e.runoff.value("outcome", std::string("?")));
    const std::string versus =
        e.incumbent && e.median_ms
            ? "; " + describe_speedup(*e.incumbent, e.config.id(), *e.median_ms)
            : std::string();
    fmt::print("  {}: {} {:.4f} ms ({}){}\n", e.bucket, e.config.id(), e.median_ms.value_or(0), how,
               versus);
  }
  std::fflush(stdout);
  return exit_ok;
}

namespace {

// Tunes one architecture under the record's lock and writes its record.
int run_arch(const KernelBuild& build, const RunOptions& opt, const std::string& arch,
             const std::string& toolchain) {
  const Manifest& manifest = build.manifest;
  const fs::path record_path = manifest.record_path(arch).value();
  const std::string shown = display_path(manifest, record_path);
  fs::create_directories(record_path.parent_path());
  // One tune per record at a time: held from the first measurement to the record's write, so
  // that another build tree of this source tree (or `tuner record set`) is refused.
  result<FileLock> lock = FileLock::try_lock(record_path, "record");
  if (!lock && lock.error().path == FileLock::lock_path(record_path).string()) {
    fmt::print(stderr, "tuner run: error: {}\n", lock.error().str());  // a refused lock file
    return exit_bad_input;
  }
  if (!lock) {
    fmt::print(stderr,
               "tuner run: error: {} ({}): {}: another tune of '{}' is writing it (from this or "
               "another build tree); wait for it to finish or stop it, then run again\n",
               shown, arch, lock.error().message, manifest.kernel);
    return exit_bad_input;
  }
  if (opt.if_stale) {
    // `tuner tune` checked before warming; another tree's tune may have written the record
    // since. Checked again under the lock, so two trees never tune one record twice.
    result<Verification> v = verify_kernel_record(build, arch, record_path);
    if (v && v->ok()) {
      fmt::print("{}: record {} is fresh ({}): another tune wrote it meanwhile; nothing to do\n",
                 manifest.kernel, shown, arch);
      std::fflush(stdout);
      return exit_ok;
    }
  }
  const fs::path dir = manifest.log_dir / arch;
  fs::create_directories(dir);
  std::vector<std::string> without_winner;
  std::vector<BucketResult> results;
  for (const Bucket& bucket : build.space.buckets()) {
    // Bounded: a long label keeps a readable start and a hash, so its files can be created.
    const fs::path result_path = dir / bucket_file_name(bucket.name, ".result.json");
    std::optional<BucketResult> r;
    if (opt.bucket.empty() || opt.bucket == bucket.name) {
      RunOptions bucket_opt = opt;
      if (opt.total_budget != nullptr) {
        const std::size_t sharing = opt.total_budget->buckets_left();
        const double left = opt.total_budget->left_s();
        bucket_opt.budget_s = opt.total_budget->next_bucket(
            opt.budget_s ? opt.budget_s : build.space.search().budget_s);
        fmt::print(stderr,
                   "tuner run: {} {} bucket '{}': {:.0f} s of the total budget ({:.0f} s left for "
                   "{} bucket{})\n",
                   manifest.kernel, arch, bucket.name, *bucket_opt.budget_s, left, sharing,
                   sharing == 1 ? "" : "s");
      }
      BucketOutcome o = tune_one(build, bucket_opt, arch, bucket,
                                 dir / bucket_file_name(bucket.name, ".trials.jsonl"), result_path);
      if (o.stop != exit_ok) return o.stop;
      if (o.result && o.result->best) r = std::move(o.result);
    } else {
      r = last_result(result_path, Space::pruned_space_hash(build.space.configs(bucket).value()));
    }
    if (r)
      results.push_back(std::move(*r));
    else
      without_winner.push_back(bucket.name);
  }
  if (!without_winner.empty()) {
    fmt::print(stderr,
               "tuner run: error: no record written for {} ({}): no winner for bucket{} {}; the "
               "old record is left as it was\n",
               manifest.kernel, arch, without_winner.size() == 1 ? "" : "s",
               quoted_list(without_winner));
    return exit_negative;
  }
  result<Workspace> ws = current_workspace(manifest, build.space, arch, toolchain);
  if (!ws) {
    fmt::print(stderr, "{}\n", ws.error().str());
    return exit_bad_input;
  }
  return write_record(build, arch, assemble_record(*ws, results), record_path);
}

}  // namespace

std::optional<KernelBuild> load_build_to_run(const std::string& manifest, int& exit_code) {
  std::optional<KernelBuild> build = load_build(manifest);
  if (!build) {
    exit_code = exit_bad_input;
    return std::nullopt;
  }
  if (!build->manifest.runner) {
    fmt::print(stderr,
               "tuner run: error: kernel '{}' has no harness: add HARNESS to tune_add_kernel to "
               "tune it\n",
               build->manifest.kernel);
    exit_code = exit_negative;
    return std::nullopt;
  }
  return std::move(*build);
}

namespace {

int run_kernel_text(const RunOptions& opt);

}  // namespace

int run_kernel(const RunOptions& opt) {
  if (!opt.json || !opt.shard.empty()) return run_kernel_text(opt);
  int status = exit_ok;
  {
    StdoutToStderr quiet(true);
    status = run_kernel_text(opt);
  }
  if (status != exit_ok && status != exit_negative) return status;
  result<KernelBuild> build = load_kernel_build(opt.manifest);  // said why already, if bad
  if (!build) return status;
  result<std::vector<std::string>> archs = select_archs(build->manifest, opt.arch);
  if (!archs) return status;
  try {
    fmt::print("{}\n", dump_json(nlohmann::json{{"kernel", build->manifest.kernel},
                                                {"records", records_summary(*build, *archs)}},
                                 2));
  } catch (const std::exception& e) {
    fmt::print(stderr, "tuner run: error: {}\n", e.what());
    return exit_environment;
  }
  return status;
}

namespace {

int run_kernel_text(const RunOptions& opt) {
  if (!opt.shard.empty()) return run_shard(opt);
  int exit_code = exit_ok;
  std::optional<KernelBuild> build = load_build_to_run(opt.manifest, exit_code);
  if (!build) return exit_code;
  const Manifest& manifest = build->manifest;
  if (!fs::exists(*manifest.runner)) {
    fmt::print(stderr,
               "tuner run: error: the runner of '{}' is not built ('{}'): build it with 'cmake "
               "--build {} --target {}.runner'\n",
               manifest.kernel, manifest.runner->string(), manifest.build_dir.string(),
               manifest.kernel);
    return exit_environment;
  }
  std::optional<std::vector<std::string>> archs = choose_archs(manifest, opt.arch);
  if (!archs) return exit_bad_input;
  if (!opt.bucket.empty()) {
    if (result<const Bucket*> found = build->bucket(opt.bucket); !found) {
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
  StopSignals stop_signals;  // SIGINT/SIGTERM: the worker is killed, the log stays consistent
  const std::unique_ptr<RemoteStore> remote = open_remote_store(
      opt.remote, manifest.remote_store, effective_cache_dir(manifest.cache_dir),
      [](const std::string& w) { fmt::print(stderr, "tuner run: warning: {}\n", w); });
  RunOptions with_store = opt;
  with_store.store = remote.get();
  int status = exit_ok;
  for (const std::string& arch : *archs) {
    const int rc = run_arch(*build, with_store, arch, toolchain);
    if (rc == exit_negative) {
      status = rc;  // the next architecture may still get its record
      continue;
    }
    if (rc != exit_ok) return rc;
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
  sub->add_option("--budget", opt->budget_s, "wall-clock budget per bucket in seconds")
      ->check(seconds(/*zero_allowed=*/true));
  sub->add_option("--timeout", opt->timeout_s, "per-candidate timeout in seconds")
      ->check(seconds(/*zero_allowed=*/false));
  sub->add_option("--device", opt->device,
                  "the device index (default 0; CUDA_VISIBLE_DEVICES applies)")
      ->check(whole_number(0, 1023));
  sub->add_option("--remote", opt->remote,
                  "the remote store (http(s)://host:port/prefix, a directory, or off; default: "
                  "TUNE_REMOTE_STORE, else the build's)");
  sub->add_flag("--no-remote-trials", opt->no_remote_trials,
                "measure every candidate here rather than adopt the store's trials");
  sub->add_option("--shard", opt->shard,
                  "K/N: measure only shard K of N into its own logs, for `tuner merge`");
  sub->add_option("--out", opt->out,
                  "with --shard: the folder of the shard's logs (default: <log_dir>/shards)");
  sub->add_flag("--compile-ahead", opt->compile_ahead,
                "compile candidates missing from the kernel cache on this host's cores ahead of "
                "the measuring worker (TUNE_COMPILE_JOBS threads, default: the cores but one) "
                "instead of counting them not compiled; through TUNE_COMPILER_LAUNCHER, else the "
                "build's CMAKE_CUDA_COMPILER_LAUNCHER, when there is one");
  sub->add_option("--compile-jobs", opt->compile_jobs,
                  "with --compile-ahead: at most this many compiles at once (through a compiler "
                  "launcher: this many, even past this host's cores)")
      ->check(whole_number(1, max_jobs));
  sub->add_flag("--json", opt->json,
                "print each record's state and winners as JSON on stdout (other lines go to "
                "stderr)");
  sub->add_flag("--if-stale", opt->if_stale,
                "measure an architecture only when its record does not verify (checked under "
                "the record's lock; what `tuner tune` passes)");
  sub->footer(
      "Exit status: 0 records written and verified, 1 a bucket without a winner (no record "
      "written) or no harness, 2 bad usage or input, 3 a broken environment (no runner, no "
      "GPU), 130/143 interrupted.");
  sub->callback([&run, opt] { run = [opt] { return run_kernel(*opt); }; });
}

}  // namespace tune::cli
