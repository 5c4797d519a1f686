#include <tuner/core/autotuner.hpp>

#include <chrono>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include <fmt/core.h>

#include <tuner/core/space.hpp>

namespace tune {

Autotuner::Autotuner(std::string name) : name_(std::move(name)) {}

Autotuner& Autotuner::configs(std::vector<Config> configs) {
  configs_ = std::move(configs);
  return *this;
}
Autotuner& Autotuner::prune(std::function<bool(const Config&)> keep) {
  prune_ = std::move(keep);
  return *this;
}
Autotuner& Autotuner::require(std::vector<Config> incumbents) {
  require_ = std::move(incumbents);
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
  if (configs_)
    throw error(
        fmt::format("autotuner '{}': run_objective takes its space from the objective; "
                    "configs() is for the closure path",
                    name_));
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

  // 5. Grid: the rest in enumeration order; the budget is checked before each measurement
  // (adopting a logged trial costs nothing, so those are taken whatever the budget).
  auto budget_left = [&] {
    if (budget_s_) {
      std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
      if (elapsed.count() >= *budget_s_) return false;
    }
    std::optional<double> remaining = objective.budget_remaining();
    return !(remaining && *remaining <= 0);
  };
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
  return out;
}

}  // namespace tune
