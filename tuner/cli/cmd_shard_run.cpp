// `tuner run --manifest M --shard K/N [--arch A] [--out DIR] [--device N] [--budget S]
// [--timeout S]`: measures shard K of N (tuner/core/scale/shard.hpp): its slices of the buckets,
// each with the bucket's incumbents, into its own logs
// `<out>/<arch>/<bucket>.shard-K-of-N.trials.jsonl` (default out: `<log_dir>/shards`), without a
// runoff and without touching the record. When every slice is measured it writes its summary
// `<out>/<arch>/shard-K-of-N.json`, which `tuner merge` reads; a shard interrupted before that
// counts as missing. The summary is locked while the shard runs (`shard-K-of-N.json.lock`), so a
// second run of the same shard and a merge are refused naming it. Shards never share a log, so any
// number run at once, on one host or many.
//
// Output: one line per trial on stderr, the slice's best, and on stdout `<kernel>: shard K/N
// (<arch>) done: <summary>`. Exit codes: 0 the shard is done, 1 a kernel without a harness, 2
// bad usage or input or a shard already running, 3 a broken environment, 130/143 interrupted.
#include <cstdio>
#include <string>
#include <vector>

#include <fmt/core.h>

#include <tuner/cli/commands.hpp>
#include <tuner/cli/kernel_choice.hpp>
#include <tuner/core/base/hash.hpp>
#include <tuner/core/process/stop_signals.hpp>
#include <tuner/core/scale/shard.hpp>
#include <tuner/core/scale/shard_merge.hpp>
#include <tuner/core/search/file_lock.hpp>
#include <tuner/core/tune/kernel_tune.hpp>

namespace tune::cli {

namespace fs = std::filesystem;

namespace {

void say(const std::string& line) {
  fmt::print(stderr, "{}\n", line);
  std::fflush(stderr);
}

// Measures one slice; the bucket's part of the summary, or the exit code that stops the shard.
int run_slice(const KernelBuild& build, const RunOptions& opt, const std::string& arch,
              const ShardSpec& spec, const fs::path& out, const ShardSlice& slice,
              ShardSummary& summary) {
  const Bucket& bucket = build.space.buckets()[slice.bucket];
  const std::vector<Config> configs = build.space.configs(bucket).value();
  std::vector<std::string> ids;
  for (std::size_t i = slice.first; i < slice.end; ++i)
    ids.push_back(configs[i].id());
  fmt::print(stderr, "tuner run: {} {} bucket '{}' shard {}: candidates {}..{} of {}\n",
             build.manifest.kernel, arch, bucket.name, spec.str(), slice.first + 1, slice.end,
             configs.size());
  const fs::path log = shard_log_path(out, arch, bucket.name, spec);
  const BucketTune job{
      build,
      bucket,
      arch,
      log,
      opt.budget_s,
      opt.timeout_s,
      process_launcher(worker_command(build.manifest, bucket.name, arch, opt.device)),
      say,
      opt.store,
      !opt.no_remote_trials,
      ids,
      false};
  try {
    result<BucketResult> r = tune_bucket(job);
    if (!r) {
      fmt::print(stderr, "{}\n", r.error().str());
      return exit_bad_input;
    }
    if (r->incumbent_failure || !r->best)
      fmt::print(stderr, "{}: {}\n", bucket.name, describe_outcome(*r));
    else
      fmt::print(stderr, "{}: best of the slice {} at {:.4f} ms (the runoff is the merge's)\n",
                 bucket.name, r->best->config.id(), r->best->median_ms);
    if (!summary.device) summary.device = r->device;
    if (!summary.driver) summary.driver = r->driver;
    // The log is closed and complete: its digest lets the merge refuse a changed one.
    summary.buckets.push_back({bucket.name, slice.first, slice.end, log.filename().string(),
                               std::move(*r), sha256_file(log)});
    return exit_ok;
  } catch (const Interrupted& stop) {
    fmt::print(stderr, "tuner run: interrupted; shard {} is not done (run it again to resume)\n",
               spec.str());
    return exit_interrupted(stop.signal);
  } catch (const std::exception& e) {
    fmt::print(stderr, "tuner run: error: {}\n", e.what());
    return exit_environment;
  }
}

int run_shard_arch(const KernelBuild& build, const RunOptions& opt, const std::string& arch,
                   const ShardSpec& spec, const ShardPlan& plan, const ShardExpectation& expected) {
  const Manifest& manifest = build.manifest;
  const fs::path out = opt.out.empty() ? manifest.log_dir / "shards" : fs::absolute(opt.out);
  const fs::path summary_path = shard_summary_path(out, arch, spec);
  fs::create_directories(summary_path.parent_path());
  result<FileLock> lock = FileLock::try_lock(summary_path, "shard " + spec.str());
  if (!lock) {
    fmt::print(stderr, "tuner run: error: {}: {}; wait for it to finish or stop it\n",
               summary_path.string(), lock.error().message);
    return exit_bad_input;
  }
  fs::remove(summary_path);  // not done until every slice is measured again
  ShardSummary summary;
  summary.kernel = manifest.kernel;
  summary.arch = arch;
  summary.shard = spec;
  summary.space_hash = expected.space_hash;
  summary.source_hash = expected.source_hash;
  summary.toolchain = expected.toolchain;
  summary.bench = expected.bench;
  summary.host = FileLock::self().host;
  for (const ShardSlice& slice : plan.shards[static_cast<std::size_t>(spec.index - 1)])
    if (int rc = run_slice(build, opt, arch, spec, out, slice, summary); rc != exit_ok) return rc;
  summary.save(summary_path);
  fmt::print("{}: shard {} ({}) done: {}\n", manifest.kernel, spec.str(), arch,
             summary_path.string());
  std::fflush(stdout);
  return exit_ok;
}

}  // namespace

int run_shard(const RunOptions& opt) {
  result<ShardSpec> spec = parse_shard(opt.shard);
  if (!spec) {
    fmt::print(stderr, "tuner run: error: {}\n", spec.error().message);
    return exit_bad_input;
  }
  if (!opt.bucket.empty() || opt.if_stale) {
    fmt::print(stderr,
               "tuner run: error: --shard measures its share of every bucket; it takes "
               "neither --bucket nor --if-stale\n");
    return exit_bad_input;
  }
  int exit_code = exit_ok;
  std::optional<KernelBuild> build = load_build_to_run(opt.manifest, exit_code);
  if (!build) return exit_code;
  const Manifest& manifest = build->manifest;
  std::optional<std::vector<std::string>> archs = choose_archs(manifest, opt.arch);
  if (!archs) return exit_bad_input;
  result<ShardPlan> plan = plan_space(build->space, spec->count);
  if (!plan) {
    fmt::print(stderr, "{}\n", plan.error().str());
    return exit_bad_input;
  }
  ShardExpectation expected;
  try {
    expected = expect_shards(*build);
  } catch (const std::exception& e) {
    fmt::print(stderr, "tuner run: error: {}\n", e.what());
    return exit_environment;
  }
  StopSignals stop_signals;  // SIGINT/SIGTERM: the worker is killed, the log stays consistent
  for (const std::string& arch : *archs)
    if (int rc = run_shard_arch(*build, opt, arch, *spec, *plan, expected); rc != exit_ok)
      return rc;
  return exit_ok;
}

}  // namespace tune::cli
