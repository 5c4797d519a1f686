#include <tuner/core/tune/kernel_tune.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>

#include <fmt/core.h>

#include <tuner/core/base/atomic_file.hpp>
#include <tuner/core/base/bucket_name.hpp>
#include <tuner/core/base/safe_file.hpp>
#include <tuner/core/base/text.hpp>
#include <tuner/core/build/cache_key.hpp>
#include <tuner/core/build/compiler_launcher.hpp>
#include <tuner/core/build/kernel_cache.hpp>
#include <tuner/core/build/toolchain.hpp>
#include <tuner/core/record/record.hpp>
#include <tuner/core/search/autotuner.hpp>
#include <tuner/core/search/compile_ahead.hpp>
#include <tuner/core/search/compile_cap.hpp>
#include <tuner/core/search/overhead.hpp>
#include <tuner/core/store/candidate_store.hpp>
#include <tuner/core/store/shared_trials.hpp>
#include <tuner/core/tune/objective_layers.hpp>

namespace tune {

namespace fs = std::filesystem;

namespace {

// The committed winner of the bucket, when the record loads and has one: the soft incumbent.
std::optional<Config> committed_winner(const Manifest& manifest, const std::string& arch,
                                       const std::string& bucket) {
  result<fs::path> path = manifest.record_path(arch);
  std::error_code ec;
  if (!path || !fs::exists(*path, ec)) return std::nullopt;
  result<Record> record = Record::load(*path);
  if (!record) return std::nullopt;
  const RecordEntry* e = record->get(bucket);
  return e ? std::optional<Config>(e->config) : std::nullopt;
}

// Why candidate `key` cannot be measured without a worker (neither the local cache nor the
// remote store has it, or the compiler or the limits refused it), or nullopt: these cost no GPU
// time.
std::optional<std::string> not_loadable(const CandidateStore& store, const Manifest& manifest,
                                        const CompileRequest& request) {
  std::optional<CacheEntry> entry = store.find(request);
  if (!entry)
    return fmt::format("not compiled: run the warm target (cmake --build {} --target warm.{})",
                       manifest.build_dir.string(), manifest.kernel);
  if (!entry->valid())
    return entry->reason.empty() ? std::string(to_string(entry->status)) : entry->reason;
  return std::nullopt;
}

// Gets candidate `config` from the candidate store (a compile-ahead thread): nullopt when it can
// be measured, else why not.
std::optional<std::string> compile_candidate(const CandidateStore& store, const CacheKeyer& keyer,
                                             const Manifest& manifest, const Config& config,
                                             const std::string& arch, CompileCap& cap,
                                             double full_timeout_s) {
  CompileRequest request = compile_request(manifest, keyer, config, arch);
  const std::optional<double> limit = cap.cap();
  if (limit && *limit < full_timeout_s) request.timeout_s = limit;
  const CompileOutcome outcome = store.get(request);
  if (outcome.entry.valid()) {
    if (outcome.compiled && outcome.entry.compile_s) cap.add(*outcome.entry.compile_s);
    return std::nullopt;
  }
  // Stopped short of the compile timeout: by this tune's cap, or an earlier one's whose entry
  // serves a cap as short (a tune without a cap compiles it again).
  if (outcome.entry.status == CacheStatus::timed_out && outcome.entry.compile_s &&
      *outcome.entry.compile_s < full_timeout_s)
    return compile_slow_reason(*outcome.entry.compile_s, cap.explain());
  return outcome.entry.reason.empty() ? std::string(to_string(outcome.entry.status))
                                      : outcome.entry.reason;
}

// What the shared trials of this bucket are keyed by, and which configs are measured here
// whatever the store holds: the required ones and the committed winner.
SharedTrials::Context shared_context(const BucketTune& job, const std::vector<Config>& configs) {
  SharedTrials::Context c;
  c.bucket = job.bucket;
  c.bench = job.build.space.bench();
  c.host = host_name();
  c.adopt = job.remote_trials;
  const std::vector<Config> here = bucket_incumbents(job.build, job.bucket, job.arch);
  for (std::size_t i = 0; i < configs.size(); ++i)
    if (std::find(here.begin(), here.end(), configs[i]) != here.end()) c.incumbents.push_back(i);
  return c;
}

// What every bucket's result says, measured or not: which bucket, space and device.
BucketResult bucket_result(const BucketTune& job, const std::string& pruned_hash,
                           const Supervisor& objective) {
  BucketResult r;
  r.kernel = job.build.manifest.kernel;
  r.bucket = job.bucket.name;
  r.arch = job.arch;
  r.pruned_space_hash = pruned_hash;
  if (!objective.device().empty()) r.device = objective.device();
  if (!objective.driver().empty()) r.driver = objective.driver();
  r.workers_started = objective.workers_started();
  return r;
}

BucketResult summarize(const BucketTune& job, const std::string& pruned_hash, const Output& out,
                       const Supervisor& objective) {
  BucketResult r = bucket_result(job, pruned_hash, objective);
  r.trials = out.trials.size();
  r.resumed = out.resumed;
  for (const Trial& t : out.trials)
    r.invalid += t.is_measured() ? 0 : 1;
  r.budget_exhausted = out.budget_exhausted;
  r.incumbent_failure = out.incumbent_failure;
  r.runoff = out.runoff;
  if (out.prior) r.prior = to_json(*out.prior);
  r.runoff_skipped = out.runoff_skipped;
  r.strategy_s = out.strategy_s;
  // The incumbent: the first config of the required phase, when it was measured.
  for (const Trial& t : out.trials)
    if (t.phase == Phase::required) {
      if (const MeasuredState* m = t.state.measured())
        r.incumbent = IncumbentTiming{t.config.id(), m->median_ms};
      break;
    }
  if (out.best_index) {
    const Trial& t = out.trials[*out.best_index];
    const MeasuredState& m = *t.state.measured();
    MeasuredWinner w{t.config, m.median_ms, m.min_ms, m.reps, std::nullopt, t.adopted_from()};
    if (t.cache_key) w.cache_key = L2Key{std::string(cache_key_schema), *t.cache_key};
    r.best = std::move(w);
  }
  return r;
}

// The result of a bucket whose fixture failed: no trials, no winner, the fixture's message.
BucketResult fixture_failed(const BucketTune& job, const std::string& pruned_hash,
                            const Supervisor& objective, const std::string& message) {
  BucketResult r = bucket_result(job, pruned_hash, objective);
  r.fixture_failure = message;
  return r;
}

}  // namespace

std::vector<Config> bucket_incumbents(const KernelBuild& build, const Bucket& bucket,
                                      const std::string& arch) {
  std::vector<Config> out = build.space.require();
  if (std::optional<Config> w = committed_winner(build.manifest, arch, bucket.name))
    out.push_back(*w);
  return out;
}

result<BucketResult> tune_bucket(const BucketTune& job) {
  const Manifest& manifest = job.build.manifest;
  const Space& space = job.build.space;
  result<std::vector<Config>> configs = space.configs(job.bucket);
  if (!configs) return fail(configs.error());
  const Toolchain toolchain = manifest_toolchain(manifest);
  std::vector<std::string> keys;
  CacheKeyer keyer(manifest, space, toolchain.fingerprint());
  for (const Config& c : *configs)
    keys.push_back(keyer.key(c, job.arch).digest);
  const std::string pruned_hash = Space::pruned_space_hash(*configs);

  SupervisorOptions options;
  options.timeout_s = job.timeout_s.value_or(space.search().timeout_s.value_or(30.0));
  options.rebuild_hint = fmt::format("cmake --build {} --target {}.runner",
                                     manifest.build_dir.string(), manifest.kernel);
  Supervisor objective(*configs, keys, job.launch, options);
  const SearchSettings& search = space.search();
  const double full_timeout_s = search.compile_timeout_s.value_or(default_compile_timeout_s);
  const CandidateStore store(KernelCache(effective_cache_dir(manifest.cache_dir)), job.remote,
                             manifest.compile_log, full_timeout_s, compiler_launcher(manifest));
  const KernelCache& cache = store.cache();
  // The adaptive compile cap (compile_cap.hpp) applies to a search that a budget, max_evals or
  // patience ends; one that measures every candidate compiles every candidate in full.
  const bool ends_early = job.budget_s || search.budget_s || search.max_evals || search.patience;
  CompileCap cap({search.compile_cap_floor_s.value_or(CompileCap::Rule{}.floor_s),
                  ends_early ? search.compile_cap_factor.value_or(CompileCap::Rule{}.factor) : 0});
  std::optional<CompileAhead> ahead;
  if (job.compile_ahead > 0) {
    ahead.emplace(
        configs->size(),
        [&](std::size_t i) {
          return compile_candidate(store, keyer, manifest, (*configs)[i], job.arch, cap,
                                   full_timeout_s);
        },
        job.compile_ahead);
  }
  objective.skip_when([&](std::size_t i) -> std::optional<std::string> {
    if (!ahead)
      return not_loadable(store, manifest,
                          compile_request(manifest, keyer, (*configs)[i], job.arch));
    // Compile-ahead: a candidate still missing here is waited for (its thread fetches it from
    // the store or compiles it; a compile it could not finish says why itself). One the cache
    // has is judged as its thread would: a compile an earlier, shorter cap stopped is compiled
    // again, here.
    if (!cache.lookup(keys[i])) return ahead->wait(i);
    return compile_candidate(store, keyer, manifest, (*configs)[i], job.arch, cap, full_timeout_s);
  });
  auto say = [&](const std::string& line) {
    if (job.say) job.say(fmt::format("{}: {}", job.bucket.name, line));
  };
  objective.on_note([&](const std::string& n) { say("note: " + n); });

  const LogHeader header = bucket_log_header(job.build, job.bucket, job.arch, keyer);
  Autotuner tuner(header.tuner);
  tuner.arch(job.arch)
      .log(job.log)
      .space_hash(header.space_hash)
      .source_hash(*header.source_hash)
      .toolchain(*header.toolchain)
      .identity(keyer.identity(job.arch))
      .require(space.require());
  tuner.search(space.search());  // the strategy, its seed and stop rules, the space's budget
  if (space.bench().early_reject) tuner.early_reject(space.bench().reject_margin_pct);
  if (job.budget_s) tuner.budget(*job.budget_s);
  std::optional<Config> winner = committed_winner(manifest, job.arch, job.bucket.name);
  if (winner) tuner.soft_incumbent(*winner);
  if (job.only) {
    std::set<std::string> keep(job.only->begin(), job.only->end());
    for (const Config& c : space.require())
      keep.insert(c.id());
    if (winner) keep.insert(winner->id());
    tuner.prune([keep = std::move(keep)](const Config& c) { return keep.contains(c.id()); });
  }
  if (job.prior_log) {
    tuner.prior_log(*job.prior_log);
    tuner.prior_fallbacks(prior_fallbacks(job.build, job.bucket, job.arch));
  }
  // Compile-bound (docs/search.md "Compile cost"): with compile-ahead, when fewer than half of
  // the bucket's candidates are in the kernel cache (the remote store is not asked: a request
  // per candidate would cost more than the decision is worth), the strategy weighs each
  // proposal's predicted compile seconds.
  if (ahead) {
    std::size_t in_cache = 0;
    for (const std::string& key : keys)
      in_cache += cache.lookup(key) ? 1 : 0;
    const bool off = search.compile_costs_off();  // the strategy then ignores `bound`
    const bool bound = 2 * in_cache < keys.size();
    tuner.compile_bound(bound);
    say(fmt::format("compile cost: {} ({} of {} candidates in the kernel cache{})",
                    off     ? "not weighed, the space sets cost_weight = 0"
                    : bound ? "weighed, the tune is compile-bound"
                            : "not weighed",
                    in_cache, keys.size(),
                    job.remote != nullptr ? "; the remote store is not counted" : ""));
  }
  tuner.on_progress([&](const Progress& p) { say(describe_trial(p)); });
  tuner.on_warning([&](const std::string& w) { say(warning_line(w)); });

  detail::WithCompileCost costed(objective, cache, keys);
  detail::OnePerBinary once(costed, cache, keys);
  auto cached = [&](std::size_t i) { return cache.lookup(keys[i]).has_value(); };
  std::optional<CompilePipeline> pipeline;
  if (ahead) {
    // The incumbents first, all at once: they are measured before the search.
    std::vector<std::size_t> first;
    for (std::size_t i = 0; i < configs->size(); ++i)
      if ((std::find(space.require().begin(), space.require().end(), (*configs)[i]) !=
               space.require().end() ||
           (winner && *winner == (*configs)[i])) &&
          !cached(i))
        first.push_back(i);
    ahead->queue(first);
    pipeline.emplace(once, *ahead, pipeline_window(job.compile_ahead), cached);
  }
  Objective& compiled = pipeline ? static_cast<Objective&>(*pipeline) : once;
  std::optional<SharedTrials> shared;
  if (job.remote != nullptr) {
    SharedTrials::Context context = shared_context(job, *configs);
    context.device = [&objective] { return std::pair{objective.device(), objective.driver()}; };
    shared.emplace(compiled, *job.remote, std::move(context));
  }
  Objective& measuring = shared ? static_cast<Objective&>(*shared) : compiled;
  detail::WithoutRunoff shard_objective(measuring);
  std::optional<result<Output>> ran;
  try {
    ran = job.runoff ? tuner.run_objective(measuring) : tuner.run_objective(shard_objective);
  } catch (const FixtureFailure& e) {
    // One line for the bucket, not one per candidate: every candidate would fail the same way.
    return fixture_failed(job, pruned_hash, objective, e.what());
  } catch (const HarnessFailure& e) {
    BucketResult r = bucket_result(job, pruned_hash, objective);
    r.harness_failure = e.what();
    return r;
  }
  result<Output>& out = *ran;
  if (!out) return fail(out.error());
  if (std::optional<OverheadSummary> o = summarize_overhead(out->trials)) {
    for (std::string line = describe_overhead(*o); !line.empty();) {
      const std::size_t nl = line.find('\n');
      say(line.substr(0, nl));
      line = nl == std::string::npos ? "" : line.substr(nl + 1);
    }
  }
  if (ahead && ahead->finished() > 0) {
    std::set<std::string> measured;
    for (const Trial& t : out->trials)
      measured.insert(t.id());
    std::size_t never = 0;
    for (std::size_t i : ahead->compiled())
      never += measured.contains((*configs)[i].id()) ? 0 : 1;
    say(fmt::format(
        "compile-ahead: {} candidates compiled ({} never measured), the search waited {:.1f} s "
        "for the compiler",
        ahead->finished(), never, ahead->waited_ms() / 1000));
  }
  const auto slow = std::count_if(out->trials.begin(), out->trials.end(), [](const Trial& t) {
    return t.state.invalid() && is_compile_slow(t.state.invalid()->reason);
  });
  if (slow > 0)
    say(fmt::format("compile cap: {} compiles stopped at {} (logged compile_slow)", slow,
                    cap.explain()));
  say(fmt::format("strategy: {}{}, {:.2f} s in propose/tell, the search waited {:.2f} s of it",
                  out->strategy,
                  out->strategy_auto ? fmt::format(" (auto: {} for {} configs, grid up to {})",
                                                   out->strategy, configs->size(), auto_grid_max)
                                     : "",
                  out->strategy_s, out->strategy_wait_s));
  if (once.shared() > 0)
    say(
        fmt::format("{} trials shared the measurement of a byte-identical binary (a param that "
                    "never changes the cubin: `tuner warm` names it)",
                    once.shared()));
  if (shared && (shared->adopted() > 0 || shared->uploaded() > 0))
    say(fmt::format("{} trials adopted from the remote store, {} shared", shared->adopted(),
                    shared->uploaded()));
  return summarize(job, pruned_hash, *out, objective);
}

std::vector<std::string> worker_command(const Manifest& manifest, const std::string& bucket,
                                        const std::string& arch, std::optional<int> device) {
  std::vector<std::string> args = {
      "--manifest", manifest.path.string(), "--bucket", bucket, "--arch", arch};
  if (device) args.insert(args.end(), {"--device", std::to_string(*device)});
  std::vector<std::string> argv;
  if (const char* cmd = std::getenv("TUNE_RUNNER_WORKER_CMD"); cmd != nullptr && *cmd) {
    argv = {"/bin/sh", "-c", "exec " + std::string(cmd) + " \"$@\"", "tune-worker"};
  } else {
    argv = {manifest.runner ? manifest.runner->string() : std::string()};
  }
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

std::string describe_duration(double seconds) {
  if (seconds < 90) return fmt::format("about {:.0f} s", seconds);
  if (seconds < 90 * 60) return fmt::format("about {:.0f} min", seconds / 60);
  return fmt::format("about {:.1f} h", seconds / 3600);
}

std::string describe_trial(const Progress& p) {
  const Trial& t = p.trial;
  std::string what;
  if (const auto* m = t.state.measured()) {
    what = fmt::format("{:.4f} ms ({} reps{}{})", m->median_ms, m->reps,
                       t.batched ? ", batched" : "", t.rejected_early ? ", stopped early" : "");
  } else {
    what = "invalid: " + printable(one_line(t.state.invalid()->reason));
  }
  std::string from = p.resumed ? " (from the log)" : "";
  // A merge's trials come from the shards' logs: say which shard measured each.
  if (t.shard) from = fmt::format(" (shard {})", printable(one_line(*t.shard)));
  // Another machine's words (the store's shared trial): escaped, as `tuner show` does.
  if (t.remote)
    from = fmt::format(" (remote, measured on {}{})", printable(one_line(*t.remote)),
                       t.device ? ", " + printable(one_line(*t.device)) : "");
  if (t.same_binary)
    from = fmt::format(" (the same binary as {}: not measured again)", *t.same_binary);
  if (t.checks)
    from =
        fmt::format(" (measured here to check {:.4g} ms from {}: {})", t.checks->median_ms,
                    printable(one_line(t.checks->from)), t.checks->agreed ? "agrees" : "discarded");
  std::string progress;
  if (p.best) progress = fmt::format("; best {:.4f} ms", *p.best);
  if (p.remaining_s && p.done < p.total)
    progress += "; " + describe_duration(*p.remaining_s) + " left";
  // A check of an adopted trial comes after the search: numbered apart, not as its last trial.
  const std::string count =
      t.checks ? std::string("[check]") : fmt::format("[{}/{}]", p.done, p.total);
  return fmt::format("{} {} {}{}{}", count, t.id(), what, from, progress);
}

std::string describe_outcome(const BucketResult& r) {
  if (r.fixture_failure)
    return fmt::format("error: the bucket's fixture failed, so every candidate is invalid: {}",
                       *r.fixture_failure);
  if (r.harness_failure)
    return fmt::format(
        "error: the harness fails the same way for every candidate, so the bucket stops at the "
        "first: {}; fix the harness and run again",
        *r.harness_failure);
  if (r.incumbent_failure) return "error: " + *r.incumbent_failure;
  if (!r.best) return fmt::format("error: no valid config ({} trials, all invalid)", r.trials);
  std::string decided = "sequential medians";
  if (r.runoff_skipped) decided += " (" + *r.runoff_skipped + ")";
  if (r.runoff)
    decided = fmt::format("runoff {} ({} pairs, {:+.2f}%, p={:.3g})", to_string(r.runoff->outcome),
                          r.runoff->pairs, r.runoff->median_diff_pct, r.runoff->p_value);
  std::string versus;
  if (r.incumbent)
    versus = "; " + describe_speedup(*r.incumbent, r.best->config.id(), r.best->median_ms);
  return fmt::format("winner {} at {:.4f} ms, by {}{}", r.best->config.id(), r.best->median_ms,
                     decided, versus);
}

}  // namespace tune
