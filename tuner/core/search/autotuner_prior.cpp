// A re-tune's prior in the search (docs/search.md "Re-tunes start from what was measured"): a
// stale log set aside as the bucket's prior, the prior read (the bucket's own or a fallback) and
// its best configs measured right after the incumbents.
#include <filesystem>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <tuner/core/base/text.hpp>
#include <tuner/core/search/autotuner.hpp>
#include <tuner/core/search/file_lock.hpp>
#include <tuner/core/search/prior.hpp>
#include <tuner/core/search/search_run.hpp>

namespace tune {

nlohmann::json to_json(const PriorUse& p) {
  return {{"from", p.from}, {"tuner", p.tuner}, {"configs", p.configs}, {"top_k", p.top_k}};
}

namespace detail {

// A log of this search measured for another build (judge_log: its identity, source, toolchain
// or pruned space) is moved to the prior's place, so that a new log starts; a header-only one is
// removed. Anything else about the log (unreadable, another search, locked by a writer) is left
// for open_log, which refuses it as before.
void SearchRun::set_aside_stale_log() {
  if (!s_.log_path || !s_.prior_log) return;
  std::error_code ec;
  if (!std::filesystem::is_regular_file(*s_.log_path, ec)) return;
  result<LogContents> logged = read_log(*s_.log_path);
  if (!logged) return;
  const LogJudgement judged = judge_log(logged->header, expected_header());
  if (judged.fate != LogFate::prior) return;  // resumed, or refused by open_log
  result<FileLock> lock = FileLock::try_lock(*s_.log_path, "log");
  if (!lock) return;  // a writer holds it: refused later, naming it
  const std::string what = join(judged.changes, "; ");
  // Something that is not a file where the prior goes (a directory, a FIFO): the log stays where
  // it is, and open_log refuses it; nothing is removed to make room.
  if (std::filesystem::exists(std::filesystem::symlink_status(*s_.prior_log, ec)) &&
      !std::filesystem::is_regular_file(std::filesystem::symlink_status(*s_.prior_log, ec))) {
    warn(
        fmt::format("{} was measured for another build ({}), but it cannot be set aside as the "
                    "prior: {} is not a regular file; move that away and run again",
                    s_.log_path->string(), what, s_.prior_log->string()));
    return;
  }
  if (logged->trials.empty()) {
    std::filesystem::remove(*s_.log_path);
    warn(fmt::format("{} held no trial of this build ({}); removed", s_.log_path->string(), what));
    return;
  }
  std::filesystem::rename(*s_.log_path, *s_.prior_log, ec);
  if (ec)
    throw error(fmt::format("cannot move '{}' to '{}': {}", s_.log_path->string(),
                            s_.prior_log->string(), ec.message()));
  warn(fmt::format("{} was measured for another build ({}; {} trials); kept as the prior {}",
                   s_.log_path->string(), what, logged->trials.size(), s_.prior_log->string()));
}

// The prior: the bucket's own (prior_log), else the first usable fallback. Nothing at a path is
// passed over in silence; anything else that cannot be used (not a regular file, over the size
// limit, the log this run writes, not a prior of this search) is skipped with a warning.
void SearchRun::load_prior() {
  std::vector<std::pair<std::filesystem::path, bool>> candidates;  // path, any bucket
  if (s_.prior_log) candidates.emplace_back(*s_.prior_log, false);
  for (const std::filesystem::path& p : s_.prior_fallbacks)
    candidates.emplace_back(p, true);
  for (const auto& [path, any_bucket] : candidates) {
    if (prior_absent(path)) continue;
    result<Prior> p = read_prior(path, s_.name, any_bucket, s_.maximize, s_.log_path);
    if (!p) {
      warn(fmt::format("prior not used: {}", p.error().str()));
      continue;
    }
    PriorValues values = prior_values(*p, pruned_, s_.maximize);
    if (std::none_of(values.begin(), values.end(), [](const auto& v) { return v.has_value(); })) {
      warn(fmt::format("prior not used: {}: none of its configs is in the space now",
                       path.string()));
      continue;
    }
    for (const std::string& w : p->warnings)
      warn(w);
    PriorUse use{path.string(), p->tuner, 0, 0};
    int rank = 0;
    for (const auto& [config, value] : p->ranked) {
      ++rank;
      auto it = position_.find(config.id());
      if (it == position_.end()) continue;  // no longer in the space
      ++use.configs;
      if (prior_top_.size() < static_cast<std::size_t>(s_.search.prior_top_k))
        prior_top_.emplace_back(it->second, rank);
    }
    use.top_k = prior_top_.size();
    out_.prior = use;
    prior_values_ = std::move(values);
    prior_.emplace(std::move(*p));
    return;
  }
}

// The prior's best configs in the space, right after the incumbents (one measured already is
// not measured again); the budget is checked before each measurement, as in the search.
void SearchRun::measure_prior() {
  for (const auto& [k, rank] : prior_top_) {
    if (visited_[k]) continue;
    if (!adopt_.contains(pruned_[k].id()) && !budget_left()) return;
    take(k, Phase::search, /*may_reject=*/true, rank);
  }
}

}  // namespace detail
}  // namespace tune
