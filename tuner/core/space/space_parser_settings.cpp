// The reader of space files, part three: the optional [search] and [bench] tables, each
// refusing unknown keys and values out of range.
#include <tuner/core/space/space_parser.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include <fmt/core.h>

#include <tuner/core/base/input_limits.hpp>
#include <tuner/core/base/text.hpp>
#include <tuner/core/space/search_settings.hpp>

namespace tune::detail {

const toml::table* SpaceParser::settings_table(std::string_view name,
                                               std::span<const std::string_view> keys) {
  const TomlEntry* e = find_top(name);
  if (e == nullptr) return nullptr;
  const toml::table* t = e->node->as_table();
  if (t == nullptr) {
    error(e->key_pos, fmt::format("'{}' must be a table, got {}", name, kind_of(*e->node)));
    return nullptr;
  }
  for (const auto& k : in_order(*t))
    if (std::find(keys.begin(), keys.end(), k.key) == keys.end()) {
      error(k.key_pos, fmt::format("unknown key '{}' in [{}] (expected {}){}", k.key, name,
                                   join(keys), did_you_mean(k.key, keys)));
      return nullptr;
    }
  return t;
}

bool SpaceParser::number(const toml::table& t, std::string_view table, std::string_view key,
                         bool strict, std::string_view unit, std::optional<double>& out) {
  const toml::node* n = t.get(key);
  if (n == nullptr) return true;
  const std::string_view rule = strict ? "a positive" : "a non-negative";
  if (!n->is_number())
    return error_at(*n, fmt::format("'{}' in [{}] must be {} number of {}, got {}", key, table,
                                    rule, unit, kind_of(*n)));
  const double v =
      n->is_integer() ? static_cast<double>(*n->value<std::int64_t>()) : *n->value<double>();
  if (!(strict ? v > 0 : v >= 0) || !std::isfinite(v))
    return error_at(
        *n, fmt::format("'{}' in [{}] must be {} number of {}, got {}", key, table, rule, unit, v));
  out = v;
  return true;
}

bool SpaceParser::time(const toml::table& t, std::string_view table, std::string_view key,
                       bool strict, std::string_view unit, double per_second,
                       std::optional<double>& out) {
  if (!number(t, table, key, strict, unit, out)) return false;
  if (!out) return true;
  // Seconds get the CLI's floor as well; milliseconds of timing keep any positive value.
  const double lo = per_second == 1 ? min_seconds : 0;
  const double hi = max_seconds * per_second;
  if (*out <= hi && (*out == 0 || *out >= lo)) return true;
  const double v = *out;
  out.reset();
  return error_at(*t.get(key),
                  fmt::format("'{}' in [{}] must be a number of {} in {}0, {:g}] (one week at "
                              "most){}, got {:g}; for no practical limit write {:g}",
                              key, table, unit, strict ? "(" : "[", hi,
                              lo > 0 ? fmt::format(", at least {:g} when not 0", lo) : "", v, hi));
}

// The keys [search] takes: the common ones, then every strategy's own.
static std::vector<std::string_view> search_keys() {
  std::vector<std::string_view> keys = {"strategy",
                                        "seed",
                                        "max_evals",
                                        "budget_s",
                                        "timeout_s",
                                        "patience",
                                        "retune",
                                        "prior_top_k",
                                        "retune_min_new",
                                        "prior",
                                        "compile_timeout_s",
                                        "compile_cap_floor_s",
                                        "compile_cap_factor"};
  for (const StrategyInfo& info : strategies())
    for (const StrategyOption& o : info.options)
      if (std::find(keys.begin(), keys.end(), o.name) == keys.end()) keys.push_back(o.name);
  return keys;
}

bool SpaceParser::read_search() {
  const std::vector<std::string_view> keys = search_keys();
  const toml::table* t = settings_table("search", keys);
  if (err) return false;
  if (t == nullptr) return true;
  if (const toml::node* n = t->get("strategy")) {
    if (!n->is_string())
      return error_at(*n,
                      fmt::format("'strategy' in [search] must be a string, got {}", kind_of(*n)));
    const std::string v = *n->value<std::string>();
    if (find_strategy(v) == nullptr) {
      std::vector<std::string> names;
      for (const StrategyInfo& info : strategies())
        names.push_back(info.name);
      return error_at(*n, fmt::format("unknown search strategy '{}' (expected {}){}", v,
                                      quoted_list(names), did_you_mean(v, names)));
    }
    s.search_.strategy = v;
    s.search_.strategy_given = true;
  }
  std::optional<std::int64_t> seed;
  std::optional<std::int64_t> top_k;
  std::optional<std::int64_t> min_new;
  if (!read_count(*t, "seed", 0, seed) || !read_count(*t, "max_evals", 1, s.search_.max_evals) ||
      !read_count(*t, "patience", 1, s.search_.patience) ||
      !read_count(*t, "prior_top_k", 0, top_k) || !read_count(*t, "retune_min_new", 0, min_new) ||
      !read_prior(*t))
    return false;
  if (seed) s.search_.seed = static_cast<std::uint64_t>(*seed);
  if (top_k) s.search_.prior_top_k = *top_k;
  if (min_new) s.search_.retune_min_new = *min_new;
  return time(*t, "search", "budget_s", true, "seconds", 1, s.search_.budget_s) &&
         time(*t, "search", "timeout_s", true, "seconds", 1, s.search_.timeout_s) &&
         time(*t, "search", "compile_timeout_s", true, "seconds", 1, s.search_.compile_timeout_s) &&
         time(*t, "search", "compile_cap_floor_s", false, "seconds", 1,
              s.search_.compile_cap_floor_s) &&
         read_cap_factor(*t) && read_strategy(*t);
}

// `retune` and `prior`: the re-tune's use of what was measured before (docs/search.md
// "Re-tunes start from what was measured").
bool SpaceParser::read_prior(const toml::table& t) {
  if (const toml::node* n = t.get("retune")) {
    const std::optional<std::string> v = n->value<std::string>();
    if (!n->is_string() || (*v != "warm" && *v != "full"))
      return error_at(*n, fmt::format("'retune' in [search] must be \"warm\" or \"full\", got {}",
                                      n->is_string() ? "'" + *v + "'" : kind_of(*n)));
    s.search_.retune = *v;
  }
  if (const toml::node* n = t.get("prior")) {
    const std::optional<std::string> v = n->is_string() ? n->value<std::string>() : std::nullopt;
    auto name_of = [&](std::string_view prefix) {
      return v && v->starts_with(prefix) ? std::optional<std::string>(v->substr(prefix.size()))
                                         : std::nullopt;
    };
    const std::optional<std::string> bucket = name_of("bucket:");
    const std::optional<std::string> arch = name_of("arch:sm_");
    const bool ok =
        v && (*v == "auto" || (bucket && !bucket->empty()) ||
              (arch && !arch->empty() && std::all_of(arch->begin(), arch->end(), [](char c) {
                 return std::isalnum(static_cast<unsigned char>(c)) != 0;
               })));
    std::vector<std::string> names;
    for (const Bucket& b : s.buckets_)
      names.push_back(b.name);
    if (!ok) {
      // The likely fix: a bucket's or an arch's name without its prefix, or an arch without sm_.
      std::string hint;
      if (v && std::find(names.begin(), names.end(), *v) != names.end())
        hint = "bucket:" + *v;
      else if (v && v->starts_with("sm_") && v->size() > 3)
        hint = "arch:" + *v;
      else if (v && v->starts_with("arch:") && v->size() > 5 &&
               std::isdigit(static_cast<unsigned char>((*v)[5])) != 0)
        hint = "arch:sm_" + v->substr(5);
      return error_at(*n, fmt::format("'prior' in [search] must be \"auto\", \"bucket:<name>\" or "
                                      "\"arch:sm_<NN>\", got {}{}",
                                      v ? "'" + printable(shorten(*v, 80)) + "'" : kind_of(*n),
                                      hint.empty() ? "" : ", did you mean '" + hint + "'?"));
    }
    if (bucket) {
      if (std::find(names.begin(), names.end(), *bucket) == names.end())
        return error_at(*n, fmt::format("'prior' in [search] names no bucket of the space: '{}' "
                                        "(the buckets: {}){}",
                                        printable(shorten(*bucket, 80)), quoted_list(names),
                                        did_you_mean(*bucket, names)));
    }
    s.search_.prior = *v;
  }
  return true;
}

bool SpaceParser::read_count(const toml::table& t, std::string_view key, std::int64_t min,
                             std::optional<std::int64_t>& out) {
  const toml::node* n = t.get(key);
  if (n == nullptr) return true;
  const std::string_view rule = min > 0 ? "a positive int" : "a non-negative int";
  if (!n->is_integer())
    return error_at(*n, fmt::format("'{}' in [search] must be {}, got {}", key, rule, kind_of(*n)));
  const std::int64_t v = *n->value<std::int64_t>();
  if (v < min)
    return error_at(*n, fmt::format("'{}' in [search] must be {}, got {}", key, rule, v));
  out = v;
  return true;
}

// `compile_cap_factor`: 0 (no cap) or a factor of at least 1 on the percentile (a cap under
// the typical compile would stop ordinary ones), at most 1000.
bool SpaceParser::read_cap_factor(const toml::table& t) {
  std::optional<double>& f = s.search_.compile_cap_factor;
  if (!number(t, "search", "compile_cap_factor", false, "times the percentile", f)) return false;
  if (!f || *f == 0 || (*f >= 1 && *f <= 1000)) return true;
  const double v = *f;
  f.reset();
  return error_at(*t.get("compile_cap_factor"),
                  fmt::format("'compile_cap_factor' in [search] must be 0 (no cap) or a number "
                              "in [1, 1000], got {:g}",
                              v));
}

// The chosen strategy's own settings: each of the right kind and in its range; a setting of
// another strategy is refused naming the one it belongs to. `auto` takes the settings of the
// strategy it picks for a large bucket (a small one gets grid, which has none).
bool SpaceParser::read_strategy(const toml::table& t) {
  const bool is_auto = s.search_.strategy == "auto";
  const StrategyInfo& chosen =
      *find_strategy(is_auto ? auto_large_strategy : std::string_view(s.search_.strategy));
  for (const StrategyInfo& info : strategies()) {
    for (const StrategyOption& o : info.options) {
      const toml::node* n = t.get(o.name);
      if (n == nullptr || info.name != chosen.name) continue;
      if (!(o.integer ? n->is_integer() : n->is_number()))
        return error_at(
            *n, fmt::format("'{}' in [search] must be {}, got {}", o.name, o.takes(), kind_of(*n)));
      const double v =
          n->is_integer() ? static_cast<double>(*n->value<std::int64_t>()) : *n->value<double>();
      if (!o.accepts(v))
        return error_at(*n,
                        fmt::format("'{}' in [search] must be {}, got {}", o.name, o.takes(), v));
      s.search_.options[o.name] = v;
    }
  }
  for (const auto& k : in_order(t)) {
    if (s.search_.options.contains(k.key)) continue;
    for (const StrategyInfo& info : strategies())
      for (const StrategyOption& o : info.options)
        if (o.name == k.key && info.name != chosen.name)
          return error(
              k.key_pos,
              fmt::format("'{}' in [search] is a setting of strategy '{}', not of '{}'{}", k.key,
                          info.name, s.search_.strategy,
                          is_auto ? fmt::format(" (which takes the settings of {}, the strategy "
                                                "it picks for a bucket of more than {} configs)",
                                                auto_large_strategy, auto_grid_max)
                                  : ""));
  }
  return true;
}

bool SpaceParser::reps(const toml::table& t, std::string_view key, int& out) {
  const toml::node* n = t.get(key);
  if (n == nullptr) return true;
  if (!n->is_integer())
    return error_at(
        *n, fmt::format("'{}' in [bench] must be a positive int, got {}", key, kind_of(*n)));
  const std::int64_t v = *n->value<std::int64_t>();
  if (v < 1 || v > std::numeric_limits<int>::max())
    return error_at(*n, fmt::format("'{}' in [bench] must be a positive int, got {}", key, v));
  out = static_cast<int>(v);
  return true;
}

bool SpaceParser::read_bench() {
  constexpr std::string_view keys[] = {"warmup_ms", "rep_ms", "min_reps",     "max_reps",
                                       "clear_l2",  "preset", "early_reject", "reject_margin_pct"};
  const toml::table* t = settings_table("bench", keys);
  if (err) return false;
  if (t == nullptr) return true;
  std::optional<double> warmup;
  std::optional<double> rep;
  if (!time(*t, "bench", "warmup_ms", false, "milliseconds", 1000, warmup) ||
      !time(*t, "bench", "rep_ms", true, "milliseconds", 1000, rep) ||
      !reps(*t, "min_reps", s.bench_.min_reps) || !reps(*t, "max_reps", s.bench_.max_reps))
    return false;
  if (warmup) s.bench_.warmup_ms = *warmup;
  if (rep) s.bench_.rep_ms = *rep;
  if (s.bench_.min_reps > s.bench_.max_reps) {
    const toml::node* n = t->get("min_reps") != nullptr ? t->get("min_reps") : t->get("max_reps");
    return error_at(*n, fmt::format("'min_reps' ({}) exceeds 'max_reps' ({}) in [bench]",
                                    s.bench_.min_reps, s.bench_.max_reps));
  }
  if (const toml::node* n = t->get("clear_l2")) {
    if (!n->is_boolean())
      return error_at(
          *n, fmt::format("'clear_l2' in [bench] must be true or false, got {}", kind_of(*n)));
    s.bench_.clear_l2 = *n->value<bool>();
  }
  if (const toml::node* n = t->get("preset")) {
    constexpr std::string_view presets[] = {"quick"};
    const std::string v = n->is_string() ? *n->value<std::string>() : std::string();
    if (std::find(std::begin(presets), std::end(presets), v) == std::end(presets))
      return error_at(
          *n, fmt::format("'preset' in [bench] must be one of {}, got {}{}",
                          quoted_list({std::begin(presets), std::end(presets)}),
                          n->is_string() ? "'" + v + "'" : kind_of(*n), did_you_mean(v, presets)));
    s.bench_.preset = v;
  }
  if (const toml::node* n = t->get("early_reject")) {
    if (!n->is_boolean())
      return error_at(
          *n, fmt::format("'early_reject' in [bench] must be true or false, got {}", kind_of(*n)));
    s.bench_.early_reject = *n->value<bool>();
  }
  std::optional<double> margin;
  if (!number(*t, "bench", "reject_margin_pct", false, "percent", margin)) return false;
  if (margin) {
    if (*margin > 1000)
      return error_at(*t->get("reject_margin_pct"),
                      fmt::format("'reject_margin_pct' in [bench] must be at most 1000 (percent "
                                  "above the best so far), got {}",
                                  *margin));
    s.bench_.reject_margin_pct = *margin;
  }
  return true;
}

}  // namespace tune::detail
