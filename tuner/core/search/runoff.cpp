#include <tuner/core/search/runoff.hpp>

#include <algorithm>
#include <cmath>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <tuner/core/base/json_whole.hpp>
#include <tuner/core/base/result.hpp>

namespace tune {

std::string to_string(RunoffOutcome o) {
  switch (o) {
    case RunoffOutcome::challenger_wins:
      return "challenger_wins";
    case RunoffOutcome::incumbent_wins:
      return "incumbent_wins";
    case RunoffOutcome::tie:
      return "tie";
    case RunoffOutcome::forfeit:
      return "forfeit";
  }
  return "tie";
}

static RunoffOutcome outcome_from_string(const std::string& s) {
  for (auto o : {RunoffOutcome::challenger_wins, RunoffOutcome::incumbent_wins, RunoffOutcome::tie,
                 RunoffOutcome::forfeit})
    if (to_string(o) == s) return o;
  throw nlohmann::json::other_error::create(501, "unknown runoff outcome '" + s + "'", nullptr);
}

void to_json(nlohmann::json& j, const RunoffStats& s) {
  j = nlohmann::json{{"pairs", s.pairs},
                     {"incumbent", s.incumbent},
                     {"challenger", s.challenger},
                     {"winner", s.winner},
                     {"incumbent_median_ms", s.incumbent_median_ms},
                     {"challenger_median_ms", s.challenger_median_ms},
                     {"median_diff_pct", s.median_diff_pct},
                     {"challenger_faster", s.challenger_faster},
                     {"p_value", s.p_value},
                     {"margin_pct", s.margin_pct},
                     {"alpha", s.alpha},
                     {"outcome", to_string(s.outcome)}};
  if (!s.warnings.empty()) j["warnings"] = s.warnings;
  if (s.incumbent_alone_ms > 0) j["incumbent_alone_ms"] = s.incumbent_alone_ms;
  if (s.challenger_alone_ms > 0) j["challenger_alone_ms"] = s.challenger_alone_ms;
}

void from_json(const nlohmann::json& j, RunoffStats& s) {
  constexpr std::int64_t most = std::numeric_limits<int>::max();
  s.pairs = static_cast<int>(json_whole(j, "pairs", 0, most));
  s.incumbent = j.at("incumbent").get<std::string>();
  s.challenger = j.at("challenger").get<std::string>();
  s.winner = j.at("winner").get<std::string>();
  s.incumbent_median_ms = j.at("incumbent_median_ms").get<double>();
  s.challenger_median_ms = j.at("challenger_median_ms").get<double>();
  s.median_diff_pct = j.at("median_diff_pct").get<double>();
  s.challenger_faster = static_cast<int>(json_whole(j, "challenger_faster", 0, most));
  s.p_value = j.at("p_value").get<double>();
  s.margin_pct = j.at("margin_pct").get<double>();
  s.alpha = j.at("alpha").get<double>();
  s.outcome = outcome_from_string(j.at("outcome").get<std::string>());
  s.warnings = j.value("warnings", std::vector<std::string>{});
  s.incumbent_alone_ms = j.value("incumbent_alone_ms", 0.0);
  s.challenger_alone_ms = j.value("challenger_alone_ms", 0.0);
}

std::string describe_runoff(const RunoffStats& s) {
  if (s.outcome == RunoffOutcome::forfeit) {
    if (s.winner.empty())
      return fmt::format("both finalists ({} and {}) failed their setup in the runoff: no winner",
                         s.incumbent, s.challenger);
    const std::string& loser = s.winner == s.incumbent ? s.challenger : s.incumbent;
    return fmt::format("{} failed its setup in the runoff: {} wins by forfeit", loser, s.winner);
  }
  std::string out = fmt::format(
      "{} of {} pairs favoured the challenger {} ({:.4g} ms against {:.4g} ms for the incumbent "
      "{}), a paired median difference of {:+.2f}% (p = {:.2g}): ",
      s.challenger_faster, s.pairs, s.challenger, s.challenger_median_ms, s.incumbent_median_ms,
      s.incumbent, s.median_diff_pct, s.p_value);
  switch (s.outcome) {
    case RunoffOutcome::challenger_wins:
      return out + fmt::format("past the {:g}% margin and significant at {:g}: the challenger wins",
                               s.margin_pct, s.alpha);
    case RunoffOutcome::incumbent_wins:
      return out + fmt::format("past the {:g}% margin and significant at {:g}: the incumbent wins",
                               s.margin_pct, s.alpha);
    default:
      break;
  }
  const std::string why =
      std::fabs(s.median_diff_pct) <= s.margin_pct
          ? fmt::format("within the {:g}% margin", s.margin_pct)
          : fmt::format("past the {:g}% margin but not significant at {:g}", s.margin_pct, s.alpha);
  return out + why + fmt::format(", a tie: the incumbent {} is kept", s.incumbent);
}

std::vector<std::string> agreement_warnings(const RunoffStats& stats, double incumbent_search_ms,
                                            double challenger_search_ms,
                                            const RunoffPolicy& policy) {
  std::vector<std::string> out;
  auto departure = [&](double ms, double reference) {
    return ms > 0 && reference > 0 && std::fabs(ms / reference - 1) * 100 > policy.agreement_pct
               ? std::optional<double>(100 * (ms / reference - 1))
               : std::nullopt;
  };
  const struct {
    const std::string& id;
    double runoff_ms;
    double alone_ms;
    double search_ms;
  } finalists[] = {
      {stats.incumbent, stats.incumbent_median_ms, stats.incumbent_alone_ms, incumbent_search_ms},
      {stats.challenger, stats.challenger_median_ms, stats.challenger_alone_ms,
       challenger_search_ms}};
  for (const auto& f : finalists) {
    if (f.alone_ms > 0) {
      if (auto d = departure(f.runoff_ms, f.alone_ms)) {
        out.push_back(fmt::format(
            "the runoff timed {} at {:.4g} ms paired, {:+.1f}% from {:.4g} ms timed alone just "
            "before (more than {:g}%): the two timing modes disagree about it, so this verdict "
            "may rest on a measurement artefact",
            f.id, f.runoff_ms, *d, f.alone_ms, policy.agreement_pct));
      }
      if (auto d = departure(f.alone_ms, f.search_ms)) {
        out.push_back(fmt::format(
            "{} timed {:.4g} ms alone before the runoff, {:+.1f}% from its search median {:.4g} "
            "ms (more than {:g}%): its time moved between the search and the runoff, and the "
            "runoff decided on the later times",
            f.id, f.alone_ms, *d, f.search_ms, policy.agreement_pct));
      }
    } else if (auto d = departure(f.runoff_ms, f.search_ms)) {
      out.push_back(fmt::format(
          "the runoff timed {} at {:.4g} ms, {:+.1f}% from its sequential median {:.4g} ms (more "
          "than {:g}%): the two timing modes disagree about it, so this verdict may rest on a "
          "measurement artefact",
          f.id, f.runoff_ms, *d, f.search_ms, policy.agreement_pct));
    }
  }
  return out;
}

double sign_test_upper_tail(int k, int n) {
  if (k <= 0) return 1.0;
  if (k > n) return 0.0;
  // Sum C(n, i) / 2^n for i >= k in log space (n can be in the thousands).
  double total = 0;
  for (int i = k; i <= n; ++i) {
    double log_term =
        std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) - n * std::log(2.0);
    total += std::exp(log_term);
  }
  return std::min(1.0, total);
}

static double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

RunoffStats decide_runoff(const std::vector<double>& incumbent_ms,
                          const std::vector<double>& challenger_ms, const RunoffPolicy& policy,
                          std::string incumbent_id, std::string challenger_id) {
  if (incumbent_ms.size() != challenger_ms.size() || incumbent_ms.empty())
    throw error("decide_runoff: need the same, non-zero number of timings on both arms");
  RunoffStats s;
  s.pairs = static_cast<int>(incumbent_ms.size());
  s.incumbent = std::move(incumbent_id);
  s.challenger = std::move(challenger_id);
  s.margin_pct = policy.margin_pct;
  s.alpha = policy.alpha;
  s.incumbent_median_ms = median_of(incumbent_ms);
  s.challenger_median_ms = median_of(challenger_ms);

  std::vector<double> diff_pct;
  diff_pct.reserve(incumbent_ms.size());
  int faster = 0;
  int slower = 0;
  for (std::size_t i = 0; i < incumbent_ms.size(); ++i) {
    double d = (challenger_ms[i] - incumbent_ms[i]) / incumbent_ms[i] * 100.0;
    diff_pct.push_back(d);
    if (d < 0) ++faster;
    if (d > 0) ++slower;
  }
  s.challenger_faster = faster;
  s.median_diff_pct = median_of(diff_pct);
  // Exact ties carry no sign; the sign test runs over the pairs that differ.
  int n = faster + slower;
  double p_faster = sign_test_upper_tail(faster, n);
  double p_slower = sign_test_upper_tail(slower, n);

  if (s.median_diff_pct < -policy.margin_pct && p_faster < policy.alpha) {
    s.outcome = RunoffOutcome::challenger_wins;
    s.p_value = p_faster;
  } else if (s.median_diff_pct > policy.margin_pct && p_slower < policy.alpha) {
    s.outcome = RunoffOutcome::incumbent_wins;
    s.p_value = p_slower;
  } else {
    s.outcome = RunoffOutcome::tie;
    s.p_value = s.median_diff_pct < 0 ? p_faster : p_slower;
  }
  s.winner = s.outcome == RunoffOutcome::challenger_wins ? s.challenger : s.incumbent;
  return s;
}

}  // namespace tune
