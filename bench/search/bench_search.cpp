// The search benchmark (bench/search/README.md): a complete measured table (a trial log that
// holds every config of a bucket's pruned space, measured or invalid) replayed as the objective,
// each strategy run with several seeds, and per strategy the median and 90th percentile number
// of evaluations (as a fraction of the valid configs) to reach 1.05x, 1.02x and 1.00x of the
// table's optimum. CPU-only and deterministic: the same table and seeds give the same output.
//
// With `--batch N` the strategy keeps N configs pending, as a tune that compiles ahead of its
// measurements does: an outcome is told (the oldest pending, or with `--order shuffled` one
// drawn at random, as compiles finish out of order), then the strategy proposes again. Several
// (`--batch 1,16`) replay each strategy with each side by side; a batch's row then says its
// 1.02x median over batch 1's and the evaluations it adds, and the report's head how many configs
// lie within 1.02x and how likely the batch's first proposals, made before any outcome, would
// include one if drawn at random: where one at a time needs few evaluations, the batch adds
// about its size whatever the strategy does.
// `--speed` times the strategies themselves instead (speed.hpp), `--cost` compares bayes's
// `cost_weight` settings on a synthetic space (cost.hpp), `--overlap` times a search whose
// strategy runs beside the measurements against one whose calls come between them
// (overlap.hpp). `--early-reject` replays every
// run twice, measuring every candidate in full and with early rejection (the reps of each
// candidate drawn around its table median), and compares the winners.
//
// With `--prior P` (a trial log of an earlier version of the kernel, plain JSON Lines with its
// header) each strategy is replayed twice per seed, without and with P as the re-tune's prior
// (docs/search.md "Re-tunes start from what was measured": its best `prior_top_k` measured
// first, the strategy guided by it; the warm stop left out so that every run goes on to the
// optimum), and the table says per strategy the evaluations to reach 1.02x and 1.00x of the
// table's optimum both ways, and the ratio of the medians; the warm stop's own point (the
// evaluations it takes and how far from the optimum it stops) is a last pair of columns.
//
// `--set NAME=VALUE` gives a strategy setting (bayes's `initial`, anneal's `cooling`, ...) to
// every strategy replayed that has it, in every mode that replays the table; the space's own
// strategy settings are not used (they belong to its one strategy).
//
// Usage: bench_search --space S.toml --table T.jsonl [--bucket B] [--seeds 20]
//                     [--strategies random,anneal,bayes] [--max-fraction 1] [--batch 1]
//                     [--order fifo|shuffled] [--prior P] [--html F] [--json F]
//                     [--early-reject [--reject-margin 10]] [--set NAME=VALUE ...]
//        bench_search --speed [--strategies ...] [--speed-at 100,1000,3000,5000] [--speed-sample
//        100]
//                     [--no-before]
//        bench_search --space S.toml --table T.jsonl --compile-cap [--seeds 20]
//        bench_search --cost [--seeds 20]
//        bench_search --overlap [--strategies ...] [--overlap-gpu-ms 5,20] [--overlap-evals 600]
// Exit codes: 0 done, 2 bad input (a table that does not match the space, a space that does not
// read), 3 an unexpected error.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <tuner/core/base/text.hpp>
#include <tuner/core/record/html_plot.hpp>
#include <tuner/core/search/autotuner.hpp>
#include <tuner/core/search/compile_cap.hpp>
#include <tuner/core/search/early_reject.hpp>
#include <tuner/core/search/strategy.hpp>
#include <tuner/core/search/trial.hpp>
#include <tuner/core/space/space.hpp>

#include "cost.hpp"
#include "overlap.hpp"
#include "speed.hpp"

namespace {

using nlohmann::json;

// A complete table: for each config of the pruned space (enumeration order) its trial.
struct Table {
  std::vector<tune::Config> configs;
  std::vector<tune::Trial> trials;  // index k: configs[k]'s trial
  std::size_t valid = 0;
  double optimum_ms = std::numeric_limits<double>::infinity();
};

// Reads the trial log `path` and matches it against `pruned`: every config of the space must
// have exactly one trial (runoff trials aside) and every trial a config of the space. The
// first mismatch is the error.
tune::result<Table> read_table(const std::string& path, const std::vector<tune::Config>& pruned,
                               const std::string& space_label) {
  auto fail = [&](int line, const std::string& message) -> tune::result<Table> {
    return tune::fail(path, line, 0, message);
  };
  std::ifstream in(path);
  if (!in) return fail(0, "cannot read the table");
  std::map<std::string, std::size_t> index;
  for (std::size_t k = 0; k < pruned.size(); ++k)
    index.emplace(pruned[k].id(), k);
  Table table;
  table.configs = pruned;
  table.trials.resize(pruned.size());
  std::vector<int> seen_at(pruned.size(), 0);
  std::string text;
  int line = 0;
  while (std::getline(in, text)) {
    ++line;
    if (tune::trim(text).empty()) continue;
    json j = json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.is_object()) return fail(line, "not a JSON object");
    if (line == 1 && j.contains("log_schema")) continue;  // the log's header
    tune::result<tune::Trial> trial = tune::trial_from_json(j);
    if (!trial) return fail(line, trial.error().message);
    if (trial->phase == tune::Phase::runoff) continue;
    const std::string id = trial->id();
    auto it = index.find(id);
    if (it == index.end()) {
      return fail(line, fmt::format("config '{}' is not in {} (a table of another space or "
                                    "bucket?)",
                                    id, space_label));
    }
    if (seen_at[it->second] != 0) {
      return fail(line, fmt::format("config '{}' again (first on line {}): a table holds one "
                                    "trial per config",
                                    id, seen_at[it->second]));
    }
    seen_at[it->second] = line;
    table.trials[it->second] = std::move(*trial);
  }
  for (std::size_t k = 0; k < pruned.size(); ++k) {
    if (seen_at[k] == 0) {
      return fail(0, fmt::format("no trial for config '{}' of {}: a table must hold every config "
                                 "of the space ({} of {} missing)",
                                 pruned[k].id(), space_label,
                                 std::count(seen_at.begin(), seen_at.end(), 0), pruned.size()));
    }
    if (const auto* m = table.trials[k].state.measured()) {
      ++table.valid;
      table.optimum_ms = std::min(table.optimum_ms, m->median_ms);
    }
  }
  if (table.valid == 0) return fail(0, "no config of the table was measured");
  return table;
}

// The table as an objective: measuring config k returns its trial; the order of the calls is the
// strategy's sequence.
class Replay : public tune::Objective {
 public:
  explicit Replay(const Table& table) : table_(table) {}
  const std::vector<tune::Config>& configs() override { return table_.configs; }
  tune::Trial measure(std::size_t k) override {
    sequence.push_back(k);
    tune::Trial t = table_.trials[k];
    t.config = {};
    return t;
  }
  std::vector<std::size_t> sequence;

 private:
  const Table& table_;
};

// The table as a measurer that stops early (docs/measurement.md "Early rejection"): config k's
// reps are drawn around its table median, log-normal with the spread its min implies (the
// smallest of its reps about 2.5 sigma under the median, at least 0.2%), the same draws for a
// seed with and without a rule, and read at the real looks under the rule the search gives. A
// trial reports the median and min of the reps it took, all the table's reps when it was not
// stopped, so the strategy is told what a tune would tell it.
class RejectingReplay : public tune::Objective {
 public:
  RejectingReplay(const Table& table, std::uint64_t seed) : table_(table), seed_(seed) {}
  const std::vector<tune::Config>& configs() override { return table_.configs; }
  void reject_above(std::optional<tune::EarlyReject> rule) override { rule_ = rule; }
  tune::Trial measure(std::size_t k) override {
    tune::Trial t = table_.trials[k];
    t.config = {};
    const auto* m = t.state.measured();
    if (m == nullptr) return t;
    const int planned = static_cast<int>(m->reps);
    planned_ms += planned * m->median_ms;
    // Config k's reps: the same draws in the full and in the rejecting replay of a seed.
    std::mt19937_64 rng(seed_ * 0x9e3779b97f4a7c15ULL + k);
    const double sigma = std::max(0.002, std::log(m->median_ms / m->min_ms) / 2.5);
    std::normal_distribution<double> z(0, sigma);
    std::vector<double> samples;
    auto draw_to = [&](int n) {
      while (static_cast<int>(samples.size()) < n)
        samples.push_back(m->median_ms * std::exp(z(rng)));
    };
    // What the worker reports: the median and min of the reps it took.
    auto report = [&] {
      std::vector<double> sorted = samples;
      std::sort(sorted.begin(), sorted.end());
      const double median = (sorted[sorted.size() / 2] + sorted[(sorted.size() - 1) / 2]) / 2;
      t.state.value =
          tune::MeasuredState{median, sorted.front(), static_cast<std::int64_t>(samples.size())};
    };
    if (rule_) {
      const std::vector<int> looks = tune::early_reject_looks(planned);
      for (int look : looks) {
        draw_to(look);
        if (tune::clearly_slower(samples, *rule_, static_cast<int>(looks.size()))) {
          t.rejected_early = true;
          saved_ms += (planned - look) * m->median_ms;
          report();
          return t;
        }
      }
    }
    draw_to(planned);
    report();
    return t;
  }
  double planned_ms = 0;  // the timed reps the bench would take, every candidate in full
  double saved_ms = 0;    // the reps the rejected candidates skipped

 private:
  const Table& table_;
  std::uint64_t seed_;
  std::optional<tune::EarlyReject> rule_;
};

// Strategy settings from --set (name: value), each given to the strategies that have it.
using Settings = std::map<std::string, double>;

// How a replay feeds the strategy: `batch` configs pending (1: one at a time, through the
// Autotuner as a tune does), their outcomes told oldest first or in a shuffled order, with the
// --set settings.
struct Feed {
  std::size_t batch = 1;
  bool shuffled = false;
  Settings settings;
};

// The search settings of one replay: the space's, with `strategy`, `seed` and `max_evals`, no
// other stop rule, and of `settings` those that `strategy` has (the space's own options belong
// to its own strategy and are left out).
tune::SearchSettings replay_settings(const tune::Space& space, const std::string& strategy,
                                     std::uint64_t seed, std::int64_t max_evals,
                                     const Settings& settings) {
  tune::SearchSettings out = space.search();
  out.strategy = strategy;
  out.seed = seed;
  out.options.clear();
  if (const tune::StrategyInfo* info = tune::find_strategy(strategy))
    for (const tune::StrategyOption& o : info->options)
      if (auto it = settings.find(o.name); it != settings.end()) out.options[o.name] = it->second;
  out.max_evals = max_evals;
  out.budget_s.reset();
  out.patience.reset();
  return out;
}

// One run searched twice, in full and with early rejection: the winners' table medians, and
// the share of the timed reps the rejecting one skipped.
struct RejectRun {
  double full_ms = 0;
  double rejecting_ms = 0;
  double saved_share = 0;
  std::size_t rejected = 0;
  std::size_t trials = 0;
};

RejectRun replay_rejecting(const Table& table, const tune::Space& space,
                           const std::string& strategy, std::uint64_t seed, std::int64_t max_evals,
                           double margin_pct, const Settings& with) {
  const tune::SearchSettings settings = replay_settings(space, strategy, seed, max_evals, with);
  auto winner_ms = [&](const tune::result<tune::Output>& out) {
    if (!out) throw tune::error(out.error().str());
    if (!out->best) return std::numeric_limits<double>::quiet_NaN();
    // The winner's table median: both replays are judged by the table, not by their draws.
    const auto k = static_cast<std::size_t>(
        std::find(table.configs.begin(), table.configs.end(), *out->best) - table.configs.begin());
    return table.trials.at(k).state.measured()->median_ms;
  };
  RejectingReplay full(table, seed);
  RejectRun r;
  r.full_ms = winner_ms(tune::Autotuner(space.kernel())
                            .require(space.require())
                            .search(settings)
                            .run_objective(full));
  RejectingReplay rejecting(table, seed);
  const tune::result<tune::Output> out = tune::Autotuner(space.kernel())
                                             .require(space.require())
                                             .search(settings)
                                             .early_reject(margin_pct)
                                             .run_objective(rejecting);
  r.rejecting_ms = winner_ms(out);
  r.rejected = out->rejected_early;
  r.trials = out->trials.size();
  r.saved_share = rejecting.planned_ms > 0 ? rejecting.saved_ms / rejecting.planned_ms : 0;
  return r;
}

// What the strategy is told of config k: log(median), nullopt when invalid.
std::optional<double> told_value(const Table& table, std::size_t k) {
  const auto* m = table.trials[k].state.measured();
  if (m == nullptr || !(m->median_ms > 0)) return std::nullopt;
  return std::log(m->median_ms);
}

// The order of evaluations with `feed.batch` configs pending: the space's required configs
// first (told as measured, in declaration order), then the strategy keeps the batch full and is
// told one outcome at a time, the oldest pending or, shuffled, one drawn at random (the draws
// seeded by the run's seed), until `max_evals` outcomes.
std::vector<std::size_t> pipelined(const Table& table, const tune::Space& space,
                                   const tune::SearchSettings& settings, const Feed& feed) {
  const tune::SpaceIndex index(table.configs);
  std::unique_ptr<tune::Strategy> strategy = tune::make_strategy(settings, index);
  std::map<std::string, std::size_t> position;
  for (std::size_t k = 0; k < table.configs.size(); ++k)
    position.emplace(table.configs[k].id(), k);
  const auto max_evals = static_cast<std::size_t>(settings.max_evals.value_or(INT64_MAX));
  std::vector<std::size_t> sequence;
  std::vector<bool> seen(table.configs.size(), false);
  for (const tune::Config& c : space.require()) {
    auto it = position.find(c.id());
    if (it == position.end() || seen[it->second]) continue;
    seen[it->second] = true;
    strategy->tell(it->second, told_value(table, it->second));
    sequence.push_back(it->second);
  }
  tune::Random order(settings.seed ^ 0x5851f42d4c957f2dULL);
  std::vector<std::size_t> pending;
  while (sequence.size() < max_evals) {
    const std::vector<std::size_t> more = strategy->propose(feed.batch - pending.size());
    pending.insert(pending.end(), more.begin(), more.end());
    if (pending.empty()) break;
    const std::size_t i = feed.shuffled ? order.below(pending.size()) : 0;
    const std::size_t k = pending[i];
    pending.erase(pending.begin() + static_cast<std::ptrdiff_t>(i));
    // As the search does: the compile seconds right before the outcome.
    if (const auto& c = table.trials[k].compile_s; c && *c > 0) strategy->tell_cost(k, *c);
    strategy->tell(k, told_value(table, k));
    sequence.push_back(k);
  }
  return sequence;
}

// One run: the configs evaluated, in order, and best-so-far / optimum after each evaluation
// (infinity before the first valid one).
struct Run {
  std::vector<std::size_t> sequence;
  std::vector<double> curve;
};

// One run of `strategy` with `seed`. `prior`: the log a re-tune starts from (empty: none);
// `warm_stop`: whether its stop applies.
Run run_once(const Table& table, const tune::Space& space, const std::string& strategy,
             std::uint64_t seed, std::int64_t max_evals, const Feed& feed,
             const std::string& prior = "", bool warm_stop = false) {
  tune::SearchSettings settings = replay_settings(space, strategy, seed, max_evals, feed.settings);
  std::vector<std::size_t> sequence;
  if (!warm_stop) settings.retune_min_new = INT64_MAX;
  if (feed.batch == 1) {
    Replay objective(table);
    tune::Autotuner tuner(space.kernel());
    tuner.require(space.require()).search(settings);
    if (!prior.empty()) tuner.prior_fallbacks({prior});
    std::string unused;
    tuner.on_warning([&](const std::string& w) {
      if (w.starts_with("prior not used")) unused = w;
    });
    tune::result<tune::Output> out = tuner.run_objective(objective);
    if (!unused.empty()) throw tune::error(unused);
    if (!out) throw tune::error(out.error().str());
    sequence = std::move(objective.sequence);
  } else {
    sequence = pipelined(table, space, settings, feed);
  }
  Run run;
  double best = std::numeric_limits<double>::infinity();
  for (std::size_t k : sequence) {
    if (const auto* m = table.trials[k].state.measured()) best = std::min(best, m->median_ms);
    run.curve.push_back(best / table.optimum_ms);
  }
  run.sequence = std::move(sequence);
  return run;
}

// The curve of one run (run_once).
std::vector<double> replay(const Table& table, const tune::Space& space,
                           const std::string& strategy, std::uint64_t seed, std::int64_t max_evals,
                           const Feed& feed, const std::string& prior = "",
                           bool warm_stop = false) {
  return run_once(table, space, strategy, seed, max_evals, feed, prior, warm_stop).curve;
}

// The evaluations until the curve is within `factor` of the optimum; nullopt when it never was.
std::optional<std::size_t> evaluations_to(const std::vector<double>& curve, double factor) {
  for (std::size_t i = 0; i < curve.size(); ++i)
    if (curve[i] <= factor * (1 + 1e-12)) return i + 1;
  return std::nullopt;
}

// The valid configs of `table` within `factor` of its optimum.
std::size_t configs_within(const Table& table, double factor) {
  std::size_t n = 0;
  for (const tune::Trial& t : table.trials)
    if (const auto* m = t.state.measured();
        m != nullptr && m->median_ms <= factor * table.optimum_ms * (1 + 1e-12))
      ++n;
  return n;
}

// Evaluations until the curve is within `factor` of the optimum, as a fraction of the valid
// configs; nullopt when it never was.
std::optional<double> reach(const std::vector<double>& curve, double factor, std::size_t valid) {
  const std::optional<std::size_t> n = evaluations_to(curve, factor);
  if (!n) return std::nullopt;
  return static_cast<double>(*n) / static_cast<double>(valid);
}

// The compile seconds a run spent until it was within `factor` of the optimum (the table's
// `compile_s` of every config it evaluated until then, the one that got there included);
// nullopt when it never got there or the table lacks a config's compile seconds.
std::optional<double> compile_s_to(const Table& table, const Run& run, double factor) {
  const std::optional<std::size_t> n = evaluations_to(run.curve, factor);
  if (!n) return std::nullopt;
  double total = 0;
  for (std::size_t i = 0; i < *n; ++i) {
    const std::optional<double>& c = table.trials[run.sequence[i]].compile_s;
    if (!c) return std::nullopt;
    total += *c;
  }
  return total;
}

// Whether every trial of the table carries its compile seconds.
bool has_compile_s(const Table& table) {
  return std::all_of(table.trials.begin(), table.trials.end(),
                     [](const tune::Trial& t) { return t.compile_s.has_value(); });
}

// The q quantile of values where a missing one (never reached) counts as infinite.
std::optional<double> quantile_of(std::vector<std::optional<double>> values, double q) {
  std::vector<double> v;
  for (const auto& x : values)
    v.push_back(x.value_or(std::numeric_limits<double>::infinity()));
  std::sort(v.begin(), v.end());
  const double x = v[static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size())) - 1)];
  return std::isfinite(x) ? std::optional<double>(x) : std::nullopt;
}

std::string percent(std::optional<double> f) {
  return f ? fmt::format("{:.1f}%", 100 * *f) : std::string("never");
}

// --prior: per strategy, the evaluations to reach 1.02x and 1.00x without and with the prior,
// and where the warm stop ends.
int compare_prior(const Table& table, const tune::Space& space,
                  const std::vector<std::string>& names, int seeds, const std::string& prior,
                  const std::string& table_path, const std::string& json_out,
                  const Settings& settings) {
  const auto all = static_cast<std::int64_t>(table.configs.size());
  const Feed one{1, false, settings};
  std::printf(
      "table %s: %zu configs, %zu valid, optimum %.6g ms; prior %s; %d seeds per "
      "strategy\n",
      table_path.c_str(), table.configs.size(), table.valid, table.optimum_ms, prior.c_str(),
      seeds);
  std::printf(
      "evaluations to reach the optimum x factor, as a fraction of the valid configs "
      "(median over seeds), without and with the prior; the warm stop's evaluations "
      "and best / optimum (median):\n");
  std::printf("%-8s %9s %9s %7s %9s %9s %7s %9s %9s\n", "strategy", "1.02x", "prior", "gain",
              "1.00x", "prior", "gain", "stop", "at");
  json out = {{"table", table_path},  {"prior", prior}, {"configs", all},
              {"valid", table.valid}, {"seeds", seeds}, {"strategies", json::object()}};
  for (const std::string& name : names) {
    std::map<std::string, std::vector<std::optional<double>>> reached;
    std::vector<std::optional<double>> stop_at;
    std::vector<std::optional<double>> stop_ratio;
    for (int seed = 1; seed <= (name == "grid" ? 1 : seeds); ++seed) {
      const auto s = static_cast<std::uint64_t>(seed);
      const std::vector<double> cold = replay(table, space, name, s, all, one);
      const std::vector<double> warm = replay(table, space, name, s, all, one, prior);
      const std::vector<double> stop = replay(table, space, name, s, all, one, prior, true);
      for (double f : {1.02, 1.00}) {
        reached[fmt::format("{:.2f}x", f)].push_back(reach(cold, f, table.valid));
        reached[fmt::format("{:.2f}x prior", f)].push_back(reach(warm, f, table.valid));
      }
      stop_at.push_back(static_cast<double>(stop.size()) / static_cast<double>(table.valid));
      stop_ratio.push_back(stop.empty() ? std::nullopt : std::optional<double>(stop.back()));
    }
    json row = json::object();
    std::printf("%-8s", name.c_str());
    for (const char* f : {"1.02x", "1.00x"}) {
      const auto without = quantile_of(reached[f], 0.5);
      const auto with = quantile_of(reached[std::string(f) + " prior"], 0.5);
      const std::string gain =
          without && with ? fmt::format("{:.1f}x", *without / *with) : std::string("-");
      std::printf(" %9s %9s %7s", percent(without).c_str(), percent(with).c_str(), gain.c_str());
      row[f] = {{"without", without ? json(*without) : json(nullptr)},
                {"with", with ? json(*with) : json(nullptr)}};
    }
    const auto at = quantile_of(stop_at, 0.5);
    const auto ratio = quantile_of(stop_ratio, 0.5);
    std::printf(" %9s %9s\n", percent(at).c_str(),
                ratio ? fmt::format("{:.3f}x", *ratio).c_str() : "none");
    row["warm_stop"] = {{"at", at ? json(*at) : json(nullptr)},
                        {"best_over_optimum", ratio ? json(*ratio) : json(nullptr)}};
    out["strategies"][name] = row;
  }
  if (!json_out.empty()) std::ofstream(json_out) << out.dump() << "\n";
  return 0;
}

}  // namespace

// The --early-reject report: per strategy, over its seeds, how often the rejecting search won
// with the full search's winner, its worst regret, and the share of timed reps it saved.
void report_rejecting(const Table& table, const tune::Space& space,
                      const std::vector<std::string>& names, int seeds, std::int64_t max_evals,
                      double margin_pct, const Settings& with) {
  std::printf("early rejection (margin %.0f%%, alpha %.2g) against the full search, over seeds:\n",
              margin_pct, tune::EarlyReject{}.alpha);
  std::printf("%-10s %12s %14s %16s %18s\n", "strategy", "same winner", "worst regret",
              "stopped early", "timed reps saved");
  for (const std::string& name : names) {
    int same = 0, runs = 0;
    double worst = 0, saved = 0;
    std::size_t rejected = 0, trials = 0;
    for (int seed = 1; seed <= (name == "grid" ? 1 : seeds); ++seed) {
      const RejectRun r = replay_rejecting(table, space, name, static_cast<std::uint64_t>(seed),
                                           max_evals, margin_pct, with);
      ++runs;
      same += r.rejecting_ms == r.full_ms ? 1 : 0;
      worst = std::max(worst, r.rejecting_ms / r.full_ms - 1);
      saved += r.saved_share;
      rejected += r.rejected;
      trials += r.trials;
    }
    std::printf(
        "%-10s %6d of %-3d %13.2f%% %9.1f%% of trials %13.1f%%\n", name.c_str(), same, runs,
        100 * worst,
        100 * static_cast<double>(rejected) / static_cast<double>(std::max<std::size_t>(1, trials)),
        100 * saved / runs);
  }
}

// The --compile-cap report (docs/search.md "Compile cost"): each strategy's runs over a table
// that carries compile seconds, as the adaptive compile cap (compile_cap.hpp) would have seen
// them in the order evaluated, per rule (floor, factor): the share of compiles it stops, the
// compile seconds it saves (a stopped compile still costs the cap), and the worst regret (the
// best config of the run among those not stopped over the run's best, minus one). A replay of
// the sequence without the cap: a stopped config would have been told invalid, which the
// sequence here does not follow. Also the largest ratio of a compile to the cap's percentile of
// the compiles before it, the margin a factor must keep.
void report_compile_cap(const Table& table, const tune::Space& space,
                        const std::vector<std::string>& names, int seeds, std::int64_t max_evals,
                        const Settings& with) {
  struct Rule {
    double floor_s, factor;
  };
  const Rule rules[] = {{0, 1.5}, {0, 2}, {0, 3}, {10, 3}, {30, 3}};
  std::printf(
      "the adaptive compile cap over each strategy's runs (%d seeds), per rule "
      "max(floor, factor x p90 of the compiles so far), after 16 compiles:\n",
      seeds);
  std::printf("%-10s %-12s %10s %12s %14s %16s\n", "strategy", "rule", "stopped", "saved",
              "worst regret", "max / p90 seen");
  for (const std::string& name : names) {
    std::vector<Run> runs;
    for (int seed = 1; seed <= (name == "grid" ? 1 : seeds); ++seed)
      runs.push_back(run_once(table, space, name, static_cast<std::uint64_t>(seed), max_evals,
                              Feed{1, false, with}));
    for (const Rule& rule : rules) {
      std::size_t stopped = 0, compiles = 0;
      double spent = 0, full = 0, worst = 0, ratio = 0;
      for (const Run& run : runs) {
        tune::CompileCap cap({rule.floor_s, rule.factor});
        tune::CompileCap seen({0, 1});  // the percentile alone, for the ratio
        double best = std::numeric_limits<double>::infinity();
        double best_capped = best;
        for (std::size_t k : run.sequence) {
          const double c = *table.trials[k].compile_s;
          const auto* m = table.trials[k].state.measured();
          ++compiles;
          full += c;
          if (const std::optional<double> p = seen.cap()) ratio = std::max(ratio, c / *p);
          const std::optional<double> limit = cap.cap();
          if (limit && c > *limit) {
            ++stopped;
            spent += *limit;
          } else {
            spent += c;
            if (m != nullptr) {
              cap.add(c);
              best_capped = std::min(best_capped, m->median_ms);
            }
          }
          if (m != nullptr) {
            seen.add(c);
            best = std::min(best, m->median_ms);
          }
        }
        if (std::isfinite(best)) worst = std::max(worst, best_capped / best - 1);
      }
      std::printf("%-10s %-12s %9.2f%% %11.1f%% %13.2f%% %15.2fx\n", name.c_str(),
                  fmt::format("{:g} s, {:g}x", rule.floor_s, rule.factor).c_str(),
                  100.0 * static_cast<double>(stopped) / static_cast<double>(compiles),
                  100 * (1 - spent / full), 100 * worst, ratio);
    }
  }
}

// One --set NAME=VALUE into `settings`: a number within the range of the setting in every
// strategy of `names` that has it, at least one of which must. False with the `problem`.
bool read_setting(const std::string& set, const std::vector<std::string>& names, Settings& settings,
                  std::string& problem) {
  const std::size_t eq = set.find('=');
  const std::string name = set.substr(0, eq);
  double value = 0;
  std::size_t used = 0;
  try {
    value = eq == std::string::npos ? 0 : std::stod(set.substr(eq + 1), &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (eq == std::string::npos || used == 0 || used != set.size() - eq - 1 ||
      !std::isfinite(value)) {
    problem = "want NAME=VALUE, VALUE a number (--set initial=20)";
    return false;
  }
  std::vector<std::string> theirs;
  bool found = false;
  for (const std::string& n : names) {
    for (const tune::StrategyOption& o : tune::find_strategy(n)->options) {
      theirs.push_back(fmt::format("{} ({})", o.name, n));
      if (o.name != name) continue;
      found = true;
      if (!o.accepts(value)) {
        problem = fmt::format("{} takes {}", n, o.takes());
        return false;
      }
    }
  }
  if (!found) {
    problem = fmt::format("no strategy replayed has that setting (theirs: {})",
                          theirs.empty() ? "none" : fmt::format("{}", fmt::join(theirs, ", ")));
    return false;
  }
  settings[name] = value;
  return true;
}

int main(int argc, char** argv) {
  CLI::App app("Replay a complete measured table through each search strategy");
  std::string space_path, table_path, bucket_name, html_out, json_out;
  int seeds = 20;
  double max_fraction = 1.0;
  std::vector<std::string> names = {"random", "anneal", "bayes"};
  std::string prior_path;
  Feed feed;
  std::string order = "fifo";
  bool speed = false;
  tune::bench::SpeedOptions speed_options;
  app.add_option("--space", space_path, "the space the table was measured from");
  app.add_option("--table", table_path, "the table: a trial log of every config");
  app.add_option("--bucket", bucket_name, "the bucket (default: the space's only one)");
  app.add_option("--seeds", seeds, "runs per strategy, seeds 1..N")->check(CLI::Range(1, 1000));
  app.add_option("--strategies", names, "the strategies to replay")->delimiter(',');
  app.add_option("--max-fraction", max_fraction,
                 "stop each run after this fraction of the space (a model-based run over a "
                 "large space is slow)")
      ->check(CLI::Range(0.0, 1.0));
  std::vector<std::size_t> batches = {1};
  app.add_option("--batch", batches,
                 "configs pending at a time: the strategy proposes again after each outcome; "
                 "several (1,16) replay each strategy with each, side by side")
      ->delimiter(',')
      ->check(CLI::Range(1, 4096));
  app.add_option("--order", order,
                 "with --batch: the outcomes told oldest first (fifo) or in a shuffled order")
      ->check(CLI::IsMember({"fifo", "shuffled"}));
  app.add_option("--prior", prior_path,
                 "a log of an earlier version: replay each strategy without and with it as the "
                 "re-tune's prior");
  app.add_option("--html", html_out, "write the convergence plot here");
  app.add_option("--json", json_out, "write every run's numbers here");
  bool cost = false;
  tune::bench::CostOptions cost_options;
  app.add_flag("--cost", cost,
               "compare bayes's cost_weight settings on a synthetic space of 40x compile times");
  app.add_flag("--speed", speed,
               "time the strategies themselves on a synthetic 10,000-config space instead");
  app.add_option("--speed-sample", speed_options.sample, "--speed: proposals timed per point")
      ->check(CLI::Range(1, 1000));
  app.add_option("--speed-at", speed_options.at,
                 "--speed: the outcomes told before each timed stretch, ascending")
      ->delimiter(',');
  bool no_before = false;
  app.add_flag("--no-before", no_before, "--speed: leave out the old bayes (it is slow)");
  bool overlap = false;
  tune::bench::OverlapOptions overlap_options;
  app.add_flag("--overlap", overlap,
               "time searches whose strategy runs beside the measurements against between them");
  app.add_option("--overlap-gpu-ms", overlap_options.gpu_ms,
                 "--overlap: what one measurement takes, in milliseconds")
      ->delimiter(',')
      ->check(CLI::Range(0.0, 1000.0));
  app.add_option("--overlap-evals", overlap_options.evaluations,
                 "--overlap: evaluations per search")
      ->check(CLI::Range(2, 10000));
  bool compile_cap = false;
  app.add_flag("--compile-cap", compile_cap,
               "replay each strategy and show what the adaptive compile cap would have stopped, "
               "saved and cost (a table with compile_s)");
  bool early_reject = false;
  double reject_margin = 10;
  app.add_flag("--early-reject", early_reject,
               "replay every run in full and with early rejection, and compare the winners");
  app.add_option("--reject-margin", reject_margin, "--early-reject: the margin, in percent")
      ->check(CLI::Range(0.0, 1000.0));
  std::vector<std::string> sets;
  app.add_option("--set", sets,
                 "NAME=VALUE: a strategy setting (docs/search.md \"Strategies\"), given to each "
                 "strategy replayed that has it (repeatable)");
  CLI11_PARSE(app, argc, argv);
  feed.shuffled = order == "shuffled";
  feed.batch = batches.front();
  try {
    for (const std::string& n : names) {
      if (!tune::find_strategy(n)) {
        std::vector<std::string> known;
        for (const auto& s : tune::strategies())
          known.push_back(s.name);
        std::fprintf(stderr, "bench_search: error: no strategy '%s'%s\n", n.c_str(),
                     tune::did_you_mean(n, known).c_str());
        return 2;
      }
    }
    for (const std::string& set : sets) {
      std::string problem;
      if (!read_setting(set, names, feed.settings, problem)) {
        std::fprintf(stderr, "bench_search: error: --set %s: %s\n", set.c_str(), problem.c_str());
        return 2;
      }
    }
    if (!sets.empty() && (overlap || cost || speed)) {
      std::fprintf(stderr,
                   "bench_search: error: --set is for the replays of a table, not for --overlap, "
                   "--cost or --speed\n");
      return 2;
    }
    if (overlap) {
      if (app.count("--strategies") > 0) overlap_options.strategies = names;
      return tune::bench::run_overlap(overlap_options);
    }
    if (cost) {
      if (app.count("--seeds") > 0) cost_options.seeds = static_cast<std::size_t>(seeds);
      return tune::bench::run_cost(cost_options);
    }
    if (speed) {
      if (speed_options.at.empty() ||
          !std::is_sorted(speed_options.at.begin(), speed_options.at.end())) {
        std::fprintf(stderr, "bench_search: error: --speed-at wants counts in ascending order\n");
        return 2;
      }
      speed_options.strategies = names;
      speed_options.before = !no_before;
      return tune::bench::run_speed(speed_options);
    }
    if (space_path.empty() || table_path.empty()) {
      std::fprintf(stderr,
                   "bench_search: error: --space and --table are required (or --speed "
                   "to time the strategies)\n");
      return 2;
    }
    tune::result<tune::Space> space = tune::Space::load(space_path);
    if (!space) {
      std::fprintf(stderr, "%s\n", space.error().str().c_str());
      return 2;
    }
    if (bucket_name.empty()) {
      if (space->buckets().size() != 1) {
        std::fprintf(stderr,
                     "bench_search: error: the space has %zu buckets: pick one with "
                     "--bucket (%s)\n",
                     space->buckets().size(), tune::quoted_list(space->bucket_names()).c_str());
        return 2;
      }
      bucket_name = space->buckets().front().name;
    }
    tune::result<const tune::Bucket*> bucket = space->find_bucket(bucket_name);
    if (!bucket) {
      std::fprintf(stderr, "%s\n", bucket.error().str().c_str());
      return 2;
    }
    tune::result<std::vector<tune::Config>> pruned = space->configs(**bucket);
    if (!pruned) {
      std::fprintf(stderr, "%s\n", pruned.error().str().c_str());
      return 2;
    }
    const std::string label = fmt::format("the space '{}', bucket '{}'", space_path, bucket_name);
    tune::result<Table> table = read_table(table_path, *pruned, label);
    if (!table) {
      std::fprintf(stderr, "%s\n", table.error().str().c_str());
      return 2;
    }
    if (!prior_path.empty())
      return compare_prior(*table, *space, names, seeds, prior_path, table_path, json_out,
                           feed.settings);
    const auto max_evals = std::max<std::int64_t>(
        1,
        static_cast<std::int64_t>(std::ceil(max_fraction * static_cast<double>(pruned->size()))));
    const bool costs = has_compile_s(*table);
    std::vector<std::string> settings;
    for (const auto& [name, value] : feed.settings)
      settings.push_back(fmt::format("{}={:g}", name, value));
    std::printf(
        "table %s: %zu configs, %zu valid, optimum %.6g ms; %d seeds per strategy%s%s\n",
        table_path.c_str(), pruned->size(), table->valid, table->optimum_ms, seeds,
        batches.size() == 1 && batches.front() == 1
            ? ""
            : fmt::format("; batch {}, outcomes told {}", fmt::join(batches, ", "),
                          feed.shuffled ? "in a shuffled order" : "oldest first")
                  .c_str(),
        settings.empty() ? "" : fmt::format("; settings {}", fmt::join(settings, ", ")).c_str());
    if (early_reject) {
      report_rejecting(*table, *space, names, seeds, max_evals, reject_margin, feed.settings);
      return 0;
    }
    if (compile_cap) {
      if (!costs) {
        std::fprintf(stderr,
                     "bench_search: error: --compile-cap needs a table whose trials all "
                     "carry compile_s\n");
        return 2;
      }
      report_compile_cap(*table, *space, names, seeds, max_evals, feed.settings);
      return 0;
    }
    const std::size_t within = configs_within(*table, 1.02);
    const std::size_t largest_batch = *std::max_element(batches.begin(), batches.end());
    if (largest_batch > 1) {
      // A batch's first proposals are made before any outcome: blind, whatever the strategy.
      const double blind =
          1 - std::pow(1 - static_cast<double>(within) / static_cast<double>(table->valid),
                       static_cast<double>(largest_batch));
      std::printf(
          "%zu valid configs within 1.02x of the optimum; the first %zu proposals of a batch of "
          "%zu are made before any outcome, and %zu random configs include one of them with "
          "probability %.0f%%\n",
          within, largest_batch, largest_batch, largest_batch, 100 * blind);
    }
    std::printf(
        "evaluations to reach the optimum x factor, as a fraction of the valid configs "
        "(median / p90 over seeds)%s%s:\n",
        costs ? "; the compile seconds spent until 1.02x and 1.00x (median / p90)" : "",
        batches.size() > 1
            ? "; 'vs 1': the 1.02x median over batch 1's, and the evaluations it adds to them"
            : "");
    std::printf("%-10s %5s %18s %18s %18s", "strategy", "batch", "1.05x", "1.02x", "1.00x");
    if (costs) std::printf(" %17s %17s", "compile s, 1.02x", "compile s, 1.00x");
    if (batches.size() > 1) std::printf(" %12s", "vs 1");
    std::printf("\n");
    json out = {{"table", table_path},
                {"configs", pruned->size()},
                {"valid", table->valid},
                {"optimum_ms", table->optimum_ms},
                {"within_1.02x", within},
                {"seeds", seeds},
                {"batch", batches.size() == 1 ? json(batches.front()) : json(batches)},
                {"order", order},
                {"settings", feed.settings},
                {"strategies", json::object()}};
    std::vector<tune::PlotSeries> series;
    const char* classes[] = {"s0", "s1", "s2", "s3", "s4", "s5"};
    for (std::size_t si = 0; si < names.size(); ++si) {
      const std::string& name = names[si];
      std::optional<double> first_median;  // the first batch's 1.02x median, for 'vs 1'
      for (std::size_t bi = 0; bi < batches.size(); ++bi) {
        Feed each = feed;
        each.batch = batches[bi];
        std::vector<std::vector<double>> curves;
        std::map<double, std::vector<std::optional<double>>> reached;
        std::map<double, std::vector<std::optional<double>>> compile_s;
        for (int seed = 1; seed <= (name == "grid" ? 1 : seeds); ++seed) {
          Run run =
              run_once(*table, *space, name, static_cast<std::uint64_t>(seed), max_evals, each);
          for (double f : {1.05, 1.02, 1.00})
            reached[f].push_back(reach(run.curve, f, table->valid));
          if (costs)
            for (double f : {1.02, 1.00})
              compile_s[f].push_back(compile_s_to(*table, run, f));
          curves.push_back(std::move(run.curve));
        }
        std::printf("%-10s %5zu", name.c_str(), each.batch);
        json row = json::object();
        for (double f : {1.05, 1.02, 1.00}) {
          const auto median = quantile_of(reached[f], 0.5);
          const auto p90 = quantile_of(reached[f], 0.9);
          std::printf(" %8s / %7s", percent(median).c_str(), percent(p90).c_str());
          row[fmt::format("{:.2f}x", f)] = {{"median", median ? json(*median) : json(nullptr)},
                                            {"p90", p90 ? json(*p90) : json(nullptr)}};
        }
        if (costs) {
          for (double f : {1.02, 1.00}) {
            const auto median = quantile_of(compile_s[f], 0.5);
            const auto p90 = quantile_of(compile_s[f], 0.9);
            std::printf(" %7s / %7s", median ? fmt::format("{:.0f}", *median).c_str() : "never",
                        p90 ? fmt::format("{:.0f}", *p90).c_str() : "never");
            row[fmt::format("compile_s_{:.2f}x", f)] = {
                {"median", median ? json(*median) : json(nullptr)},
                {"p90", p90 ? json(*p90) : json(nullptr)}};
          }
        }
        const auto median = quantile_of(reached[1.02], 0.5);
        if (bi == 0) first_median = median;
        if (batches.size() > 1) {
          // The medians in evaluations: the fractions times the valid configs, rounded.
          std::string vs = "-";
          if (bi > 0 && median && first_median) {
            const double more =
                std::round((*median - *first_median) * static_cast<double>(table->valid));
            vs = fmt::format("{:.2f}x {:+.0f}", *median / *first_median, more);
            row["vs_1"] = {{"ratio", *median / *first_median}, {"more_evaluations", more}};
          } else if (bi > 0) {
            vs = "never";
            row["vs_1"] = nullptr;
          }
          std::printf(" %12s", vs.c_str());
        }
        std::printf("\n");
        // The median best-so-far over seeds after each evaluation, for the plot.
        const std::string series_name =
            batches.size() == 1 ? name : fmt::format("{} batch {}", name, each.batch);
        tune::PlotSeries s{series_name, classes[(si * batches.size() + bi) % 6], {}, true};
        std::size_t longest = 0;
        for (const auto& c : curves)
          longest = std::max(longest, c.size());
        for (std::size_t i = 0; i < longest; ++i) {
          std::vector<double> at;
          for (const auto& c : curves)
            at.push_back(c.empty() ? std::numeric_limits<double>::infinity()
                                   : c[std::min(i, c.size() - 1)]);
          std::sort(at.begin(), at.end());
          const double m = at[at.size() / 2];
          if (std::isfinite(m))
            s.points.emplace_back(static_cast<double>(i + 1) / static_cast<double>(pruned->size()),
                                  m);
        }
        series.push_back(std::move(s));
        row["curves"] = curves;
        if (batches.size() == 1)
          out["strategies"][name] = row;
        else
          out["strategies"][name][std::to_string(each.batch)] = row;
      }
    }
    if (!html_out.empty()) {
      tune::PlotAxes axes;
      axes.x_label = "fraction of the space evaluated";
      axes.y_label = "best so far / optimum (median over seeds)";
      axes.y_min = 1.0;
      const std::string body = fmt::format(
          "<h1>Search strategies on {}</h1><p>{} configs, {} valid, optimum {:.6g} ms, {} "
          "seeds</p>{}",
          tune::html_escape(table_path), pruned->size(), table->valid, table->optimum_ms, seeds,
          tune::line_plot(series, axes));
      std::ofstream(html_out) << tune::html_page("tune: search strategies", body);
    }
    if (!json_out.empty()) std::ofstream(json_out) << out.dump() << "\n";
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_search: error: %s\n", e.what());
    return 3;
  }
  return 0;
}
