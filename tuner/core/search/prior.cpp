#include <tuner/core/search/prior.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>

#include <fmt/core.h>

#include <tuner/core/search/trial_log.hpp>

namespace tune {

namespace {

std::string kernel_of(const std::string& tuner) {
  return tuner.substr(0, tuner.find('/'));
}

}  // namespace

result<Prior> read_prior(const std::filesystem::path& path, const std::string& tuner,
                         bool any_bucket, bool maximize) {
  const std::string where = path.string();
  result<LogContents> log = read_log(path);
  if (!log) return fail(log.error());
  const LogHeader& h = log->header;
  if (kernel_of(h.tuner) != kernel_of(tuner))
    return fail(where, 1, 0,
                fmt::format("a log of kernel '{}', not '{}': not a prior of this search",
                            kernel_of(h.tuner), kernel_of(tuner)));
  if (!any_bucket && h.tuner != tuner)
    return fail(where, 1, 0,
                fmt::format("a log of '{}', not '{}': not a prior of this search", h.tuner, tuner));
  const std::string objective = maximize ? "maximize" : "minimize";
  if (h.objective != objective)
    return fail(
        where, 1, 0,
        fmt::format("a log that {}s, this search {}s: not a prior of it", h.objective, objective));
  Prior p;
  p.from = path;
  p.tuner = h.tuner;
  p.warnings = std::move(log->warnings);
  std::map<std::string, std::size_t> at;  // config id -> index into ranked
  // An adopted trial that a measurement here checked is replaced by it (docs/search.md
  // "Adopted trials are checked here"): a discarded one must not lead the prior.
  std::set<std::string> checked;
  for (const Trial& t : log->trials)
    if (t.checks) checked.insert(t.id());
  for (const Trial& t : log->trials) {
    const MeasuredState* m = t.state.measured();
    if (m == nullptr || t.phase == Phase::runoff) continue;
    if (t.adopted() && checked.contains(t.id())) continue;
    auto [it, added] = at.emplace(t.id(), p.ranked.size());
    if (added) {
      p.ranked.emplace_back(t.config, m->median_ms);
    } else {
      double& best = p.ranked[it->second].second;
      if (maximize ? m->median_ms > best : m->median_ms < best) best = m->median_ms;
    }
  }
  if (p.ranked.empty())
    return fail(where, 0, 0, "the log holds no measured trial: not a prior of this search");
  std::stable_sort(p.ranked.begin(), p.ranked.end(), [&](const auto& a, const auto& b) {
    return maximize ? a.second > b.second : a.second < b.second;
  });
  return p;
}

PriorValues prior_values(const Prior& prior, const std::vector<Config>& configs, bool maximize) {
  std::unordered_map<std::string, double> by_id;
  for (const auto& [config, value] : prior.ranked)
    by_id.emplace(config.id(), value);
  PriorValues out(configs.size());
  for (std::size_t k = 0; k < configs.size(); ++k)
    if (auto it = by_id.find(configs[k].id()); it != by_id.end() && it->second > 0)
      out[k] = maximize ? -std::log(it->second) : std::log(it->second);
  return out;
}

}  // namespace tune
