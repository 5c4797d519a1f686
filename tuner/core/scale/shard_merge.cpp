#include <tuner/core/scale/shard_merge.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <regex>
#include <set>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <tuner/core/base/atomic_file.hpp>
#include <tuner/core/base/hash.hpp>
#include <tuner/core/base/safe_file.hpp>
#include <tuner/core/base/text.hpp>
#include <tuner/core/build/cache_key.hpp>
#include <tuner/core/build/toolchain.hpp>
#include <tuner/core/search/file_lock.hpp>
#include <tuner/core/search/runoff.hpp>
#include <tuner/core/tune/kernel_tune.hpp>

namespace tune {

namespace fs = std::filesystem;
using nlohmann::json;

ShardExpectation expect_shards(const KernelBuild& build) {
  return {build.space.space_hash(), source_hash(build.manifest),
          manifest_toolchain(build.manifest).fingerprint(), bench_json(build.space.bench())};
}

namespace {

std::string label(const ShardSummary& s) {
  return fmt::format("'{}' (shard {})", s.path.string(), s.shard.str());
}

// Every summary of `kernel` on `arch` under `dirs`.
result<std::vector<ShardSummary>> read_summaries(const std::string& kernel, const std::string& arch,
                                                 const std::vector<fs::path>& dirs) {
  static const std::regex name(R"(shard-[0-9]+-of-[0-9]+\.json)");
  std::vector<ShardSummary> out;
  // A folder given twice, or inside another given folder, is one place: each file counts once.
  std::set<fs::path> seen;
  for (const fs::path& dir : dirs) {
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) return fail(dir.string(), 0, 0, "no such folder of shard logs");
    std::vector<fs::path> found;
    for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
         it.increment(ec))
      if (it->is_regular_file() && std::regex_match(it->path().filename().string(), name))
        found.push_back(it->path());
    if (ec) throw error(fmt::format("cannot list '{}': {}", dir.string(), ec.message()));
    std::sort(found.begin(), found.end());
    for (const fs::path& p : found) {
      std::error_code cec;
      const fs::path canonical = fs::weakly_canonical(p, cec);
      if (!seen.insert(cec ? p : canonical).second) continue;
      result<ShardSummary> s = ShardSummary::load(p);
      if (!s) return fail(s.error());
      if (s->kernel == kernel && s->arch == arch) out.push_back(std::move(*s));
    }
  }
  return out;
}

// The first field in which `s` differs from this build, as a message; nullopt when none does.
std::optional<std::string> difference(const ShardSummary& s, const ShardExpectation& e) {
  if (s.bench != e.bench) {
    std::vector<std::string> keys;
    for (auto& [k, v] : e.bench.items())
      if (!s.bench.contains(k) || s.bench[k] != v)
        keys.push_back(fmt::format("{} {} (shard) vs {} (this build)", k,
                                   s.bench.contains(k) ? s.bench[k].dump() : "none", v.dump()));
    return fmt::format("{} was measured with other bench settings: {}", label(s), join(keys, ", "));
  }
  const std::pair<const char*, std::pair<const std::string*, const std::string*>> fields[] = {
      {"space_hash", {&s.space_hash, &e.space_hash}},
      {"source_hash", {&s.source_hash, &e.source_hash}},
      {"toolchain", {&s.toolchain, &e.toolchain}}};
  for (const auto& [field, values] : fields)
    if (*values.first != *values.second)
      return fmt::format("{} is of another {}: {} '{}' (shard) vs '{}' (this build)", label(s),
                         field == std::string("space_hash")
                             ? "space"
                             : (field == std::string("source_hash") ? "source" : "toolchain"),
                         field, *values.first, *values.second);
  return std::nullopt;
}

// Whether `s` holds the slices the plan gives its shard, as a message when it does not.
std::optional<std::string> split_difference(const ShardSummary& s, const Space& space,
                                            const ShardPlan& plan) {
  const std::vector<ShardSlice>& want = plan.shards[static_cast<std::size_t>(s.shard.index - 1)];
  auto show = [](const std::string& bucket, std::size_t a, std::size_t b) {
    return fmt::format("'{}' [{}, {})", bucket, a, b);
  };
  std::vector<std::string> planned, found;
  for (const ShardSlice& w : want)
    planned.push_back(show(space.buckets()[w.bucket].name, w.first, w.end));
  for (const ShardBucket& b : s.buckets)
    found.push_back(show(b.bucket, b.first, b.end));
  if (planned == found) return std::nullopt;
  return fmt::format(
      "{} measured another split ({}) than this build plans ({}): the space "
      "changed since it ran",
      label(s), found.empty() ? "nothing" : join(found, ", "),
      planned.empty() ? "nothing" : join(planned, ", "));
}

// Whether every log `s` names is its own shard's log of that bucket, the one name `tuner run
// --shard` gives it: a summary naming another shard's log would have the merge read that log
// twice and its own slice never.
std::optional<diagnostic> log_name_problem(const ShardSummary& s) {
  for (const ShardBucket& b : s.buckets) {
    const std::string own = shard_log_name(b.bucket, s.shard);
    if (b.log == own) continue;
    return diagnostic{
        s.path.string(), 0, 0,
        fmt::format("the \"log\" of bucket '{}' is '{}', and shard {} logs that bucket only "
                    "to '{}': a summary describes its own shard's logs; run the shard again "
                    "(tuner run --shard {})",
                    b.bucket, printable(b.log), s.shard.str(), own, s.shard.str())};
  }
  return std::nullopt;
}

}  // namespace

std::optional<diagnostic> log_problem(const ShardSummary& s, const ShardBucket& b,
                                      const fs::path& log,
                                      const std::function<void(const std::string&)>& say) {
  if (auto d = not_regular_problem(log)) return d;
  if (!b.log_sha256) {
    if (say)
      say(
          fmt::format("{}: warning: the summary '{}' has no digest of this log (an older tuner "
                      "wrote it), so it is merged unchecked; run shard {} again to have it "
                      "checked",
                      log.string(), s.path.string(), s.shard.str()));
    return std::nullopt;
  }
  const std::string digest = sha256_file(log);
  if (digest == *b.log_sha256) return std::nullopt;
  return diagnostic{
      log.string(), 0, 0,
      fmt::format("the trial log of shard {} is not the one its summary '{}' describes (sha256 "
                  "{} here, {} in the summary): it was changed or damaged after the shard "
                  "finished; run the shard again (tuner run --shard {}) or restore its log",
                  s.shard.str(), s.path.string(), digest, *b.log_sha256, s.shard.str())};
}

result<ShardSet> find_shards(const KernelBuild& build, const std::string& arch,
                             const ShardExpectation& expected, const std::vector<fs::path>& dirs) {
  const std::string& kernel = build.manifest.kernel;
  result<std::vector<ShardSummary>> found = read_summaries(kernel, arch, dirs);
  if (!found) return fail(found.error());
  std::vector<std::string> shown;
  for (const fs::path& d : dirs)
    shown.push_back(d.string());
  if (found->empty())
    return fail("", 0, 0,
                fmt::format("no shard of '{}' ({}) under {}: run 'tuner run --manifest {} "
                            "--shard K/N' first",
                            kernel, arch, quoted_list(shown), build.manifest.path.string()));
  ShardSet set;
  set.count = found->front().shard.count;
  for (const ShardSummary& s : *found)
    if (s.shard.count != set.count)
      return fail("", 0, 0,
                  fmt::format("shards of different splits: {} and {}; merge the shards of one "
                              "split",
                              label(found->front()), label(s)));
  std::map<int, const ShardSummary*> by_index;
  for (const ShardSummary& s : *found) {
    auto [it, fresh] = by_index.emplace(s.shard.index, &s);
    if (!fresh)
      return fail("", 0, 0,
                  fmt::format("shard {} found twice: '{}' and '{}'; keep one of them",
                              s.shard.str(), it->second->path.string(), s.path.string()));
  }
  result<ShardPlan> plan = plan_space(build.space, set.count);
  if (!plan) return fail(plan.error());
  std::optional<std::string> device;
  const ShardSummary* device_shard = nullptr;
  for (const ShardSummary& s : *found) {
    if (auto d = difference(s, expected)) return fail("", 0, 0, *d);
    if (auto d = split_difference(s, build.space, *plan)) return fail("", 0, 0, *d);
    if (auto d = log_name_problem(s)) return fail(*d);
    if (!s.device) continue;
    if (device && *device != *s.device)
      return fail("", 0, 0,
                  fmt::format("the shards ran on different kinds of device: '{}' ({}) and '{}' "
                              "({}); a record is for one device kind",
                              *device, label(*device_shard), *s.device, label(s)));
    device = s.device;
    device_shard = &s;
  }
  for (int k = 1; k <= set.count; ++k) {
    auto it = by_index.find(k);
    if (it != by_index.end()) {
      set.complete.push_back(*it->second);
      continue;
    }
    set.missing.push_back(k);
    for (const fs::path& dir : dirs) {
      const fs::path summary = shard_summary_path(dir, arch, {k, set.count});
      std::error_code ec;
      if (!fs::exists(FileLock::lock_path(summary), ec)) continue;
      result<FileLock> lock = FileLock::try_lock(summary, "shard " + ShardSpec{k, set.count}.str());
      if (!lock) set.running.push_back(lock.error().message);
    }
  }
  return set;
}

namespace {

// `BLOCK=3072, BLOCK=4096, ...`: the first few of `ids`, for a line people read.
std::string some_configs(const std::vector<std::string>& ids) {
  constexpr std::size_t shown = 3;
  std::vector<std::string> head(ids.begin(), ids.begin() + std::min(ids.size(), shown));
  return join(head, ", ") + (ids.size() > shown ? ", ..." : "");
}

// The config ids of shard `shard`'s slice of bucket `bucket` (an index into the space's
// buckets), as the plan gives it; empty when the plan gives that shard none of the bucket.
std::vector<std::string> slice_ids(const ShardPlan& plan, const ShardSpec& shard,
                                   std::size_t bucket, const std::vector<Config>& configs) {
  std::vector<std::string> out;
  for (const ShardSlice& sl : plan.shards.at(static_cast<std::size_t>(shard.index - 1)))
    if (sl.bucket == bucket)
      for (std::size_t i = sl.first; i < sl.end && i < configs.size(); ++i)
        out.push_back(configs[i].id());
  return out;
}

}  // namespace

result<BucketResult> merge_bucket(const BucketMerge& job) {
  const Space& space = job.build.space;
  result<std::vector<Config>> configs = space.configs(job.bucket);
  if (!configs) return fail(configs.error());
  const Toolchain toolchain = manifest_toolchain(job.build.manifest);
  CacheKeyer keyer(job.build.manifest, space, toolchain.fingerprint());
  const LogHeader header = bucket_log_header(job.build, job.bucket, job.arch, keyer);
  std::map<std::string, std::string> key_of;
  for (const Config& c : *configs)
    key_of.emplace(c.id(), keyer.key(c, job.arch).digest);
  // Each shard's slice, recomputed here: a shard's log counts for its own slice only.
  result<ShardPlan> plan = plan_space(space, job.shards.count);
  if (!plan) return fail(plan.error());
  std::size_t bucket_index = 0;
  while (bucket_index < space.buckets().size() &&
         space.buckets()[bucket_index].name != job.bucket.name)
    ++bucket_index;
  // Every slice measures the incumbents, so every shard's trials of them count.
  std::set<std::string> incumbents;
  for (const Config& c : bucket_incumbents(job.build, job.bucket, job.arch))
    incumbents.insert(c.id());
  // A search that stops on its own (max_evals, patience) leaves configs of a slice unmeasured
  // by design; one without those stop rules measures every config of it.
  const bool whole_slices = !space.search().max_evals && !space.search().patience;
  const double agreement_pct = RunoffPolicy{}.agreement_pct;  // as the runoff's checks
  auto warn = [&](const std::string& w) {
    if (job.say) job.say(job.bucket.name + ": warning: " + w);
  };

  BucketResult totals;
  totals.kernel = job.build.manifest.kernel;
  totals.bucket = job.bucket.name;
  totals.arch = job.arch;
  totals.pruned_space_hash = header.space_hash;
  std::vector<Trial> trials;
  std::vector<std::string> lacking;  // configs of slices that no shard's log has: measured here
  // The first shard's median of each config measured valid, to compare the others' with.
  std::map<std::string, std::pair<std::string, double>> first_median;
  for (const ShardSummary& s : job.shards.complete) {
    for (const ShardBucket& b : s.buckets) {
      if (b.bucket != job.bucket.name) continue;
      if (b.result.incumbent_failure) {
        totals.incumbent_failure =
            fmt::format("shard {}: {}", s.shard.str(), *b.result.incumbent_failure);
        return totals;
      }
      // The shard's own log of the bucket (find_shards refuses a summary naming another).
      const fs::path path = s.path.parent_path() / shard_log_name(b.bucket, s.shard);
      std::error_code ec;
      if (!fs::exists(path, ec))
        return fail(path.string(), 0, 0,
                    fmt::format("the trial log of shard {} is missing", s.shard.str()));
      if (auto d = log_problem(s, b, path, job.say)) return fail(*d);
      result<TrialLog> log = TrialLog::open(path, header);
      if (!log) return fail(log.error());
      for (const std::string& w : log->warnings())
        if (job.say) job.say(job.bucket.name + ": " + w);
      const std::vector<std::string> slice = slice_ids(*plan, s.shard, bucket_index, *configs);
      const std::set<std::string> in_slice(slice.begin(), slice.end());
      std::set<std::string> logged;             // configs with a trial, valid or invalid
      std::map<std::string, double> median_of;  // the last valid median of each config
      std::vector<std::string> outside;         // configs of trials outside the slice
      for (const Trial& t : log->trials()) {
        if (t.phase == Phase::runoff) continue;
        auto key = key_of.find(t.id());
        if (key == key_of.end())
          return fail(path.string(), 0, 0,
                      fmt::format("config {} is not in the bucket's space", t.id()));
        if (!in_slice.contains(t.id()) && !incumbents.contains(t.id())) {
          if (std::find(outside.begin(), outside.end(), t.id()) == outside.end())
            outside.push_back(t.id());
          continue;
        }
        if (t.is_measured() && t.cache_key && *t.cache_key != key->second)
          return fail(path.string(), 0, 0,
                      fmt::format("{} was measured with cache key '{}' and this build compiles "
                                  "it as '{}': the shards built the kernel differently (flags, "
                                  "include paths or headers)",
                                  t.id(), *t.cache_key, key->second));
        logged.insert(t.id());
        if (const auto* m = t.state.measured()) median_of[t.id()] = m->median_ms;
        trials.push_back(t);
        // Another process's measurement: the merge checks the finalists among them here.
        if (!trials.back().shard) trials.back().shard = s.shard.str();
      }
      if (!outside.empty())
        warn(
            fmt::format("shard {}'s log '{}' has trials of {} config{} outside its slice "
                        "(first {}): dropped, since a shard measures only its slice and the "
                        "incumbents",
                        s.shard.str(), path.string(), outside.size(),
                        outside.size() == 1 ? "" : "s", outside.front()));
      // The incumbents, measured by every slice: two shards' medians far apart say one of them
      // measured badly (or lied). Both stay hints; the finalists are measured here anyway.
      for (const auto& [id, ms] : median_of) {
        auto [it, fresh] = first_median.emplace(id, std::pair{s.shard.str(), ms});
        if (fresh) continue;
        const auto& [other, other_ms] = it->second;
        if (other_ms > 0 && std::fabs(ms / other_ms - 1) * 100 > agreement_pct)
          warn(
              fmt::format("{} measured {:.4g} ms in shard {} and {:.4g} ms in shard {} (more "
                          "than {:g}% apart): both are kept as hints, and the finalists are "
                          "measured here",
                          id, other_ms, other, ms, s.shard.str(), agreement_pct));
      }
      // A config of the slice its log does not have: the shard never measured it (or its log
      // was cut), so it is measured here, unless the shard's search stopped early as it may.
      if (whole_slices && !b.result.budget_exhausted) {
        std::vector<std::string> missing;
        for (const std::string& id : slice)
          if (!logged.contains(id) && !incumbents.contains(id)) missing.push_back(id);
        if (!missing.empty()) {
          if (job.say)
            job.say(
                fmt::format("{}: note: shard {}'s slice lacks {} config{} ({}): measured "
                            "here",
                            job.bucket.name, s.shard.str(), missing.size(),
                            missing.size() == 1 ? "" : "s", some_configs(missing)));
          lacking.insert(lacking.end(), missing.begin(), missing.end());
        }
      }
      totals.trials += b.result.trials;
      totals.invalid += b.result.invalid;
      totals.budget_exhausted = totals.budget_exhausted || b.result.budget_exhausted;
      if (!totals.device) totals.device = b.result.device;
      if (!totals.driver) totals.driver = b.result.driver;
    }
  }
  std::string text = to_json(header).dump() + "\n";
  std::vector<std::string> measured;
  for (const Trial& t : trials) {
    text += to_json_line(t) + "\n";
    if (t.is_measured()) measured.push_back(t.id());
  }
  // Written whole, so that an interrupted merge leaves a log that is either the old or the new.
  write_file_atomic(job.merged_log, text, "merge-log");
  if (measured.empty() && lacking.empty()) return totals;  // nothing valid in any slice

  BucketTune tune{job.build,    job.bucket,    job.arch,   job.merged_log,
                  std::nullopt, job.timeout_s, job.launch, job.say};
  // Nothing is measured again (the merged log holds every shard's trials) but the configs no
  // shard's log has.
  measured.insert(measured.end(), lacking.begin(), lacking.end());
  tune.only = measured;
  tune.runoff = true;
  result<BucketResult> r = tune_bucket(tune);
  if (!r) return fail(r.error());
  // The configs measured here count with the shards' trials.
  std::size_t here = 0, here_invalid = 0;
  if (!lacking.empty()) {
    const std::set<std::string> wanted(lacking.begin(), lacking.end());
    std::set<std::string> seen;
    if (result<LogContents> merged = read_log(job.merged_log))
      for (const Trial& t : merged->trials)
        if (t.phase != Phase::runoff && !t.adopted() && !t.checks && wanted.contains(t.id()) &&
            seen.insert(t.id()).second) {
          ++here;
          here_invalid += t.is_measured() ? 0 : 1;
        }
  }
  r->trials = totals.trials + here;
  r->resumed = totals.trials;
  r->invalid = totals.invalid + here_invalid;
  r->budget_exhausted = totals.budget_exhausted;
  if (r->device && totals.device && *r->device != *totals.device)
    return fail("", 0, 0,
                fmt::format("the runoff of '{}' ran on '{}' and the shards on '{}': a record is "
                            "for one device kind; merge on a device of the shards' kind",
                            job.bucket.name, *r->device, *totals.device));
  if (!r->device) r->device = totals.device;
  if (!r->driver) r->driver = totals.driver;
  return r;
}

WorkerHello worker_hello(const WorkerLauncher& launch, double timeout_s) {
  std::unique_ptr<WorkerConnection> worker = launch();
  std::string line;
  const Subprocess::Read r = worker->read(line, timeout_s);
  auto refuse = [&](const std::string& why) {
    const std::string last = worker->last_words();
    worker->kill();
    throw WorkerStartFailure("the measuring worker did not start: " + why +
                             (last.empty() ? "" : ": " + last));
  };
  if (r == Subprocess::Read::timeout)
    refuse(fmt::format("it did not answer within {} s", timeout_s));
  if (r == Subprocess::Read::eof) refuse(worker->wait().describe());
  result<WorkerHello> hello = decode_hello(line);
  if (!hello) refuse(fmt::format("unreadable answer '{}'", line));
  if (!hello->ready) refuse(hello->error);
  worker->kill();
  return *hello;
}

}  // namespace tune
