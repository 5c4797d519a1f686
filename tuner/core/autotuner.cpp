#include <tuner/core/autotuner.hpp>

#include <algorithm>
#include <chrono>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <tuner/core/space.hpp>

namespace tune {

Autotuner::Autotuner(std::string name) : name_(std::move(name)) {}

Autotuner& Autotuner::prune(std::function<bool(const Config&)> keep) {
  prune_ = std::move(keep);
  return *this;
}
Autotuner& Autotuner::require(std::vector<Config> incumbents) {
  require_ = std::move(incumbents);
  return *this;
}
Autotuner& Autotuner::soft_incumbent(Config config) {
  soft_incumbent_ = std::move(config);
  return *this;
}
Autotuner& Autotuner::runoff_policy(RunoffPolicy policy) {
  runoff_policy_ = policy;
  return *this;
}
Autotuner& Autotuner::budget(double seconds) {
  budget_s_ = seconds;
  return *this;
}
Autotuner& Autotuner::arch(std::string arch) {
  arch_ = std::move(arch);
  return *this;
}
Autotuner& Autotuner::log(std::filesystem::path path) {
  log_path_ = std::move(path);
  return *this;
}
Autotuner& Autotuner::space_hash(std::string hash) {
  space_hash_ = std::move(hash);
  return *this;
}
Autotuner& Autotuner::source_hash(std::string hash) {
  source_hash_ = std::move(hash);
  return *this;
}
Autotuner& Autotuner::toolchain(std::string fingerprint) {
  toolchain_ = std::move(fingerprint);
  return *this;
}
Autotuner& Autotuner::maximize(bool on) {
  maximize_ = on;
  return *this;
}
Autotuner& Autotuner::on_progress(std::function<void(const Progress&)> fn) {
  on_progress_ = std::move(fn);
  return *this;
}
Autotuner& Autotuner::on_warning(std::function<void(const std::string&)> fn) {
  on_warning_ = std::move(fn);
  return *this;
}

result<Output> Autotuner::run_objective(Objective& objective) {
  const auto start = std::chrono::steady_clock::now();
  Output out;
  auto warn = [&](const std::string& w) {
    if (on_warning_) on_warning_(w);
    out.warnings.push_back(w);
  };

  // 1. Prune. `space[k]` is the objective's index of the k-th kept config.
  const std::vector<Config>& all = objective.configs();
  std::vector<std::size_t> space;
  std::vector<Config> pruned;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (prune_ && !prune_(all[i])) continue;
    space.push_back(i);
    pruned.push_back(all[i]);
  }

  // 2. Open the log first, so that a later error still leaves a headed log.
  std::optional<TrialLog> log;
  if (log_path_) {
    LogHeader header;
    header.tuner = name_;
    header.space_hash = space_hash_ ? *space_hash_ : Space::pruned_space_hash(pruned);
    header.arch = arch_;
    header.source_hash = source_hash_;
    header.toolchain = toolchain_;
    header.objective = maximize_ ? "maximize" : "minimize";
    result<TrialLog> opened = TrialLog::open(*log_path_, header);
    if (!opened) return fail(opened.error());
    log.emplace(std::move(*opened));
    for (const std::string& w : log->warnings())
      warn(w);
  }

  // 3. Resume state: measured trials still in the space, with the current cache key.
  std::vector<std::optional<std::string>> keys(pruned.size());
  for (std::size_t k = 0; k < pruned.size(); ++k)
    keys[k] = objective.cache_key(space[k]);
  std::map<std::string, Trial> adopt;
  if (log) adopt = adoptable_trials(log->trials(), pruned, &keys);

  // 4. Required configs, matched by id; all checked before anything is measured.
  std::unordered_map<std::string, std::size_t> position;
  for (std::size_t k = 0; k < pruned.size(); ++k)
    position.emplace(pruned[k].id(), k);
  std::vector<std::size_t> incumbents;
  std::unordered_set<std::string> seen;
  for (const Config& c : require_) {
    std::string id = c.id();
    if (!seen.insert(id).second) continue;
    auto it = position.find(id);
    if (it == position.end())
      return fail("", 0, 0,
                  fmt::format("required config '{}' is not in the space{}", id,
                              prune_ ? " after pruning" : ""));
    incumbents.push_back(it->second);
  }

  std::vector<bool> visited(pruned.size(), false);
  // Adopts or measures the k-th config; returns whether it was measured now.
  auto take = [&](std::size_t k, Phase phase) {
    visited[k] = true;
    bool resumed = false;
    if (auto it = adopt.find(pruned[k].id()); it != adopt.end()) {
      out.trials.push_back(it->second);
      ++out.resumed;
      resumed = true;
    } else {
      Trial t = objective.measure(space[k]);
      t.config = pruned[k];
      t.phase = phase;
      if (t.time.empty()) t.time = utc_now_iso8601();
      if (!t.cache_key) t.cache_key = keys[k];
      if (log) log->append(t);
      out.trials.push_back(std::move(t));
    }
    if (on_progress_)
      on_progress_(Progress{out.trials.size(), pruned.size(), out.trials.back(), resumed});
    return !resumed;
  };

  for (std::size_t k : incumbents) {
    bool fresh = take(k, Phase::required);
    const Trial& t = out.trials.back();
    if (fresh && !t.is_measured()) {
      out.incumbent_failure =
          fmt::format("incumbent {} failed: {}; cannot guarantee the winner beat it", t.id(),
                      t.state.invalid()->reason);
      return out;
    }
  }

  auto budget_left = [&] {
    if (budget_s_) {
      std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
      if (elapsed.count() >= *budget_s_) return false;
    }
    std::optional<double> remaining = objective.budget_remaining();
    return !(remaining && *remaining <= 0);
  };

  // 4b. The soft incumbent (the committed winner): measured next, so that it wins ties of the
  // sequential medians; dropped with a warning when it left the space or fails.
  std::optional<std::size_t> soft;
  if (soft_incumbent_) {
    const std::string id = soft_incumbent_->id();
    auto it = position.find(id);
    if (it == position.end()) {
      warn(fmt::format("committed winner {} is no longer in the space{}; dropped", id,
                       prune_ ? " after pruning" : ""));
    } else if (visited[it->second]) {
      soft = it->second;  // also required: measured already
    } else {
      take(it->second, Phase::search);
      const Trial& t = out.trials.back();
      if (t.is_measured()) {
        soft = it->second;
      } else {
        warn(fmt::format("committed winner {} failed: {}; dropped", id, t.state.invalid()->reason));
      }
    }
  }

  // 5. Grid: the rest in enumeration order; the budget is checked before each measurement
  // (adopting a logged trial costs nothing, so those are taken whatever the budget).
  for (std::size_t k = 0; k < pruned.size(); ++k) {
    if (visited[k]) continue;
    if (!adopt.contains(pruned[k].id()) && !budget_left()) {
      out.budget_exhausted = true;
      continue;
    }
    take(k, Phase::search);
  }

  // 6. Best sequential median (no runoff on the objective path); the earlier trial wins ties.
  for (std::size_t i = 0; i < out.trials.size(); ++i) {
    const auto* m = out.trials[i].state.measured();
    if (m == nullptr) continue;
    if (out.best_index) {
      double best = out.trials[*out.best_index].state.measured()->median_ms;
      if (maximize_ ? !(m->median_ms > best) : !(m->median_ms < best)) continue;
    }
    out.best_index = i;
  }
  if (out.best_index) out.best = out.trials[*out.best_index].config;
  if (!out.best_index || maximize_) return out;

  // 7. The runoff between the two best distinct configs (each config has one trial here).
  std::optional<std::size_t> second;
  for (std::size_t i = 0; i < out.trials.size(); ++i) {
    const auto* m = out.trials[i].state.measured();
    if (m == nullptr || i == *out.best_index) continue;
    if (second && !(m->median_ms < out.trials[*second].state.measured()->median_ms)) continue;
    second = i;
  }
  if (!second) return out;
  if (!budget_left()) {
    warn(fmt::format("no runoff: the budget is exhausted; {} wins on its sequential median",
                     out.trials[*out.best_index].id()));
    return out;
  }
  auto k_of = [&](std::size_t trial) { return position.at(out.trials[trial].id()); };
  auto is_required = [&](std::size_t k) {
    return std::find(incumbents.begin(), incumbents.end(), k) != incumbents.end();
  };
  std::size_t inc = *out.best_index;  // trial indices
  std::size_t chal = *second;
  if (soft && k_of(chal) == *soft) {
    std::swap(inc, chal);
  } else if (!(soft && k_of(inc) == *soft) && !is_required(k_of(inc)) && is_required(k_of(chal))) {
    std::swap(inc, chal);
  }
  const std::size_t inc_k = k_of(inc);
  const std::size_t chal_k = k_of(chal);
  std::optional<RunoffPairs> pairs = objective.runoff(space[inc_k], space[chal_k]);
  if (!pairs) return out;

  auto log_runoff = [&](Trial t, std::size_t k) {
    t.config = pruned[k];
    t.phase = Phase::runoff;
    if (t.time.empty()) t.time = utc_now_iso8601();
    if (!t.cache_key) t.cache_key = keys[k];
    if (!t.device) t.device = pairs->device;
    if (log) log->append(t);
    out.runoff_trials.push_back(std::move(t));
  };
  const std::string inc_id = pruned[inc_k].id();
  const std::string chal_id = pruned[chal_k].id();
  auto set_best = [&](std::optional<std::size_t> trial) {
    out.best_index = trial;
    out.best = trial ? std::optional<Config>(out.trials[*trial].config) : std::nullopt;
  };

  if (pairs->incumbent_failure || pairs->challenger_failure) {
    RunoffStats stats;
    stats.outcome = RunoffOutcome::forfeit;
    stats.margin_pct = runoff_policy_.margin_pct;
    stats.alpha = runoff_policy_.alpha;
    stats.incumbent = inc_id;
    stats.challenger = chal_id;
    for (auto [failure, k] : {std::pair{&pairs->incumbent_failure, inc_k},
                              std::pair{&pairs->challenger_failure, chal_k}}) {
      if (!*failure) continue;
      Trial t = Trial::invalid("runoff setup failed: " + **failure);
      t.runoff = stats;
      log_runoff(std::move(t), k);
    }
    if (pairs->incumbent_failure && pairs->challenger_failure) {
      warn(fmt::format("both finalists failed their runoff setup ({} and {}); no winner", inc_id,
                       chal_id));
      set_best(std::nullopt);
    } else {
      const bool inc_wins = !pairs->incumbent_failure;
      stats.winner = inc_wins ? inc_id : chal_id;
      set_best(inc_wins ? inc : chal);
    }
    out.runoff = stats;
    return out;
  }
  if (pairs->failure) {
    warn(fmt::format("runoff of {} against {} failed: {}; {} keeps its place", chal_id, inc_id,
                     *pairs->failure, inc_id));
    set_best(inc);
    return out;
  }

  RunoffStats stats =
      decide_runoff(pairs->incumbent_ms, pairs->challenger_ms, runoff_policy_, inc_id, chal_id);
  for (auto [samples, k] :
       {std::pair{&pairs->incumbent_ms, inc_k}, std::pair{&pairs->challenger_ms, chal_k}}) {
    std::vector<double> sorted = *samples;
    std::sort(sorted.begin(), sorted.end());
    const std::size_t n = sorted.size();
    const double median = n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
    Trial t = Trial::measured(median, sorted.front(), static_cast<std::int64_t>(n));
    t.runoff = stats;
    t.warnings = pairs->warnings;
    t.batched = pairs->batched;
    log_runoff(std::move(t), k);
  }
  set_best(stats.outcome == RunoffOutcome::challenger_wins ? chal : inc);
  out.runoff = stats;
  return out;
}

}  // namespace tune
