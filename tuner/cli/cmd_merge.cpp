// `tuner merge --manifest M [--arch A] [--from DIR]... [--partial] [--device N] [--timeout S]`:
// combines the shards of a kernel's tune (`tuner run --shard K/N`,
// tuner/core/scale/shard_merge.hpp) into its record. The summaries are looked for under each --from
// folder, recursively (default:
// `<log_dir>/shards`), and refused when they disagree with each other or with this build (shard
// count, duplicates, split, space, sources, toolchain, bench settings, device kind), naming the
// difference. Missing shards are listed and nothing is written, unless --partial; a shard still
// running (its lock held) is refused. Then, per bucket, every shard's trials go into
// `<log_dir>/<arch>/<bucket>.merged.trials.jsonl`, the two best are the finalists and their
// paired runoff runs on this host's device; the bucket's result is saved beside it as after
// `tuner run`, and the record is written as `tuner run` writes it: under the record's lock,
// verified in memory first, atomically. An interrupted or failed merge leaves the record as it
// was.
//
// Output: per bucket its winner on stderr, on stdout `<kernel>: wrote <record> (<arch>),
// verified` with one line per bucket. Exit codes: 0 records written, 1 shards missing (without
// --partial) or a bucket without a winner, 2 bad usage or input (refused shards, a shard still
// running, a record locked by another tune), 3 a broken environment, 130/143 interrupted.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <fmt/core.h>

#include <tuner/cli/cli_checks.hpp>
#include <tuner/cli/commands.hpp>
#include <tuner/cli/kernel_choice.hpp>
#include <tuner/core/base/bucket_name.hpp>
#include <tuner/core/base/text.hpp>
#include <tuner/core/build/toolchain.hpp>
#include <tuner/core/process/stop_signals.hpp>
#include <tuner/core/record/verify.hpp>
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

std::string shard_list(const std::vector<int>& indices, int count) {
  std::vector<std::string> out;
  for (int k : indices)
    out.push_back(ShardSpec{k, count}.str());
  return join(out, ", ");
}

// Whether any complete shard has a slice of `bucket`.
bool covered(const ShardSet& set, const std::string& bucket) {
  for (const ShardSummary& s : set.complete)
    for (const ShardBucket& b : s.buckets)
      if (b.bucket == bucket) return true;
  return false;
}

// The shards' state for a merge: a refusal's exit code, or exit_ok with the set.
int check_set(const result<ShardSet>& set, const MergeOptions& opt, const Manifest& manifest,
              const std::string& arch) {
  if (!set) {
    fmt::print(stderr, "tuner merge: {}\n", set.error().str());
    return exit_bad_input;
  }
  if (!set->running.empty()) {
    for (const std::string& r : set->running)
      fmt::print(stderr, "tuner merge: error: {}: it is still running; merge when it is done\n", r);
    return exit_bad_input;
  }
  if (set->missing.empty()) return exit_ok;
  fmt::print(stderr, "tuner merge: {} {} ({}): shard{} {} not done (no summary found)\n",
             opt.partial ? "warning:" : "error:", manifest.kernel, arch,
             set->missing.size() == 1 ? "" : "s", shard_list(set->missing, set->count));
  if (opt.partial) return exit_ok;
  fmt::print(stderr,
             "tuner merge: nothing written; run the missing shards ('tuner run --manifest {} "
             "--shard K/{}'), or merge what there is with --partial\n",
             manifest.path.string(), set->count);
  return exit_negative;
}

int merge_arch(const KernelBuild& build, const MergeOptions& opt, const std::string& arch,
               const std::vector<fs::path>& dirs) {
  const Manifest& manifest = build.manifest;
  const fs::path record_path = manifest.record_path(arch).value();
  fs::create_directories(record_path.parent_path());
  result<FileLock> lock = FileLock::try_lock(record_path, "record");
  if (!lock) {
    fmt::print(stderr, "tuner merge: error: {} ({}): {}; wait for that tune to finish\n",
               display_path(manifest, record_path), arch, lock.error().message);
    return exit_bad_input;
  }
  ShardExpectation expected = expect_shards(build);
  result<ShardSet> set = find_shards(build, arch, expected, dirs);
  if (int rc = check_set(set, opt, manifest, arch); rc != exit_ok) return rc;
  fmt::print(stderr, "tuner merge: {} {}: {} of {} shards\n", manifest.kernel, arch,
             set->complete.size(), set->count);
  const fs::path dir = manifest.log_dir / arch;
  fs::create_directories(dir);
  std::vector<std::string> without_winner;
  std::vector<BucketResult> results;
  for (const Bucket& bucket : build.space.buckets()) {
    if (!covered(*set, bucket.name)) {
      fmt::print(stderr, "{}: error: no shard found measured it\n", bucket.name);
      without_winner.push_back(bucket.name);
      continue;
    }
    const BucketMerge job{build,
                          bucket,
                          arch,
                          *set,
                          dir / bucket_file_name(bucket.name, ".merged.trials.jsonl"),
                          opt.timeout_s,
                          process_launcher(worker_command(manifest, bucket.name, arch, opt.device)),
                          say};
    result<BucketResult> r = merge_bucket(job);
    if (!r) {
      fmt::print(stderr, "tuner merge: {}\n", r.error().str());
      return exit_bad_input;
    }
    fmt::print(stderr, "{}: {}\n", bucket.name, describe_outcome(*r));
    r->save(dir / bucket_file_name(bucket.name, ".result.json"));
    if (r->best)
      results.push_back(std::move(*r));
    else
      without_winner.push_back(bucket.name);
  }
  if (!without_winner.empty()) {
    fmt::print(stderr,
               "tuner merge: error: no record written for {} ({}): no winner for bucket{} {}; "
               "the old record is left as it was\n",
               manifest.kernel, arch, without_winner.size() == 1 ? "" : "s",
               quoted_list(without_winner));
    return exit_negative;
  }
  result<Workspace> ws = current_workspace(manifest, build.space, arch, expected.toolchain);
  if (!ws) {
    fmt::print(stderr, "{}\n", ws.error().str());
    return exit_bad_input;
  }
  return write_record(build, arch, assemble_record(*ws, results), record_path, "tuner merge");
}

}  // namespace

int merge_kernel(const MergeOptions& opt) {
  std::optional<ChosenKernel> chosen = load_chosen_kernel(opt.manifest, opt.arch);
  if (!chosen) return exit_bad_input;
  const KernelBuild& build = chosen->build;
  const std::vector<std::string>& archs = chosen->archs;
  std::vector<fs::path> dirs;
  for (const std::string& d : opt.from)
    dirs.push_back(fs::absolute(d));
  if (dirs.empty()) dirs.push_back(build.manifest.log_dir / "shards");
  StopSignals stop_signals;  // SIGINT/SIGTERM: the runoff's worker is killed, no record written
  int status = exit_ok;
  for (const std::string& arch : archs) {
    int rc = exit_ok;
    try {
      rc = merge_arch(build, opt, arch, dirs);
    } catch (const Interrupted& stop) {
      fmt::print(stderr, "tuner merge: interrupted; no record written\n");
      return exit_interrupted(stop.signal);
    } catch (const std::exception& e) {
      fmt::print(stderr, "tuner merge: error: {}\n", e.what());
      return exit_environment;
    }
    if (rc == exit_negative) {
      status = rc;
      continue;
    }
    if (rc != exit_ok) return rc;
  }
  return status;
}

void add_merge_command(CLI::App& app, Run& run) {
  auto opt = std::make_shared<MergeOptions>();
  auto* sub = app.add_subcommand(
      "merge",
      "combine the shards of a tune (tuner run --shard K/N), run the final runoff on this "
      "host's GPU and write the record");
  sub->add_option("--manifest", opt->manifest, "the kernel's manifest.json")->required();
  sub->add_option("--arch", opt->arch, "one architecture (default: every one the manifest lists)");
  sub->add_option("--from", opt->from,
                  "a folder holding shard summaries and logs, searched recursively; repeatable "
                  "(default: <log_dir>/shards)");
  sub->add_flag("--partial", opt->partial,
                "merge the shards that are done even when some are missing");
  sub->add_option("--device", opt->device,
                  "the device the runoff runs on (default 0; CUDA_VISIBLE_DEVICES applies)")
      ->check(whole_number(0, 1023));
  sub->add_option("--timeout", opt->timeout_s, "per-candidate timeout in seconds")
      ->check(seconds(/*zero_allowed=*/false));
  sub->footer(
      "Exit status: 0 records written and verified, 1 shards missing (without --partial) or a "
      "bucket without a winner, 2 bad usage or input (shards that disagree, one still running), 3 "
      "a broken environment, 130/143 interrupted.");
  sub->callback([&run, opt] { run = [opt] { return merge_kernel(*opt); }; });
}

}  // namespace tune::cli
