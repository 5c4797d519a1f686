// Space's queries: the pruned configs of a bucket, whether a config survives, which bucket a
// runtime shape selects, the bucket lookup and the hashes. The reading and validation of the
// TOML file is in space_parser.hpp and its .cpp files.
#include <tuner/core/space/space.hpp>

#include <algorithm>
#include <optional>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <tuner/core/base/hash.hpp>
#include <tuner/core/base/text.hpp>

namespace tune {

const ParamValue* Bucket::shape_value(std::string_view shape_name) const {
  for (const auto& [n, v] : shape)
    if (n == shape_name) return &v;
  return nullptr;
}

SourcePos detail::PlacedExpr::at(int column) const {
  if (places.empty()) return {};
  const auto i = static_cast<std::size_t>(std::max(column, 1) - 1);
  return places[std::min(i, places.size() - 1)];
}

std::vector<std::string> Space::bucket_names() const {
  std::vector<std::string> names;
  for (const Bucket& b : buckets_)
    names.push_back(b.name);
  return names;
}

namespace {

using json = nlohmann::ordered_json;

json value_json(const ParamValue& v) {
  return v.is_int() ? json(v.as_int()) : json(v.as_string());
}
json config_json(const Config& c) {
  json j = json::object();
  for (const auto& [n, v] : c.params())
    j[n] = value_json(v);
  return j;
}
json optional_json(const std::optional<double>& v) {
  return v ? json(*v) : json();
}

}  // namespace

std::string Space::meaning_hash(bool stop_rules, bool bench) const {
  json j;
  j["schema"] = schema_;
  json params = json::array();
  for (const auto& p : params_) {
    json values = json::array();
    for (const auto& v : p.values)
      values.push_back(value_json(v));
    params.push_back(json::array({p.name, values}));
  }
  j["params"] = params;
  json configs = json::array();
  for (const auto& c : explicit_)
    configs.push_back(config_json(c));
  j["configs"] = configs;
  json prune = json::array();
  for (const auto& pe : prune_exprs_)
    prune.push_back(pe.expr.canonical());
  j["prune"] = prune;
  json require = json::array();
  for (const auto& c : require_)
    require.push_back(c.id());
  j["require"] = require;
  json buckets = json::array();
  for (std::size_t i = 0; i < buckets_.size(); ++i) {
    const Bucket& b = buckets_[i];
    json shape = json::array();
    for (const auto& [n, v] : b.shape)
      shape.push_back(json::array({n, value_json(v)}));
    json bj;
    bj["name"] = b.name;
    bj["when"] = when_exprs_[i] ? json(when_exprs_[i]->expr.canonical()) : json();
    bj["shape"] = shape;
    buckets.push_back(bj);
  }
  j["buckets"] = buckets;
  j["params_as"] = params_as_ == ParamsAs::defines ? "defines" : "constexpr";
  // A space without a strategy hashes as it did when the default was grid (it is `auto` now,
  // which searches a bucket of up to auto_grid_max configs by grid), so that the records of
  // such spaces stay fresh.
  j["search"] = {{"strategy", search_.strategy_given ? search_.strategy : "grid"}};
  if (stop_rules) {
    j["search"]["budget_s"] = optional_json(search_.budget_s);
    j["search"]["timeout_s"] = optional_json(search_.timeout_s);
  }
  // What strategies added is hashed only when given, so that the spaces (and records) of grid
  // searches keep the hash they had before strategies.
  if (search_.seed != 0) j["search"]["seed"] = search_.seed;
  if (stop_rules && search_.max_evals) j["search"]["max_evals"] = *search_.max_evals;
  if (stop_rules && search_.patience) j["search"]["patience"] = *search_.patience;
  for (const auto& [name, value] : search_.options)
    j["search"]["options"][name] = value;
  if (bench) {
    j["bench"] = {{"warmup_ms", bench_.warmup_ms},
                  {"rep_ms", bench_.rep_ms},
                  {"min_reps", bench_.min_reps},
                  {"max_reps", bench_.max_reps},
                  {"clear_l2", bench_.clear_l2}};
    if (!bench_.preset.empty()) j["bench"]["preset"] = bench_.preset;  // hashed only when given
  }
  // Hashed only when declared, so that spaces without a template entry keep their hash.
  if (entry_template_) j["entry"]["template"] = *entry_template_;
  for (const auto& [param, map] : entry_maps_)
    j["entry"]["map"][param] = map;
  return sha256_hex("tune-space/1\n" + j.dump());
}

diagnostic Space::at(SourcePos pos, std::string message) const {
  return diagnostic{path_, pos.line, pos.column, std::move(message)};
}

const Bucket* Space::bucket(std::string_view name) const {
  for (const auto& b : buckets_)
    if (b.name == name) return &b;
  return nullptr;
}

result<const Bucket*> Space::find_bucket(std::string_view name) const {
  if (const Bucket* b = bucket(name)) return b;
  const std::vector<std::string> names = bucket_names();
  return fail(path_, 0, 0,
              fmt::format("no bucket '{}' in the space of '{}'{} (it has {})", name, kernel_,
                          did_you_mean(name, names), quoted_list(names)));
}

std::size_t Space::bucket_index(const Bucket& bucket) const {
  for (std::size_t i = 0; i < buckets_.size(); ++i)
    if (&buckets_[i] == &bucket || buckets_[i].name == bucket.name) return i;
  throw error(fmt::format("bucket '{}' is not a bucket of {}", bucket.name, path_));
}

result<int> Space::first_rejecting(const Config& config, std::size_t b) const {
  const Bucket& bucket = buckets_[b];
  std::vector<const ParamValue*> values;
  for (std::size_t i = 0; i < prune_exprs_.size(); ++i) {
    const Expr& e = prune_exprs_[i].expr;
    values.clear();
    for (const auto& name : e.names()) {
      const ParamValue* v = config.find(name);
      values.push_back(v != nullptr ? v : bucket.shape_value(name));
    }
    auto kept = e.test_bound(values);
    if (!kept)
      return fail(at(prune_exprs_[i].at(kept.error().column),
                     fmt::format("{}, for config {} in bucket '{}'", one_line(kept.error().message),
                                 config.id(), bucket.name)));
    if (!*kept) return static_cast<int>(i);
  }
  return -1;
}

result<bool> Space::keeps(const Config& config, const Bucket& bucket) const {
  auto r = first_rejecting(config, bucket_index(bucket));
  if (!r) return fail(r.error());
  return *r < 0;
}

result<std::vector<Config>> Space::configs(const Bucket& bucket) const {
  const std::size_t b = bucket_index(bucket);
  const Bucket& bk = buckets_[b];
  // Bind each expression's names once: a shape name to the bucket's value (fixed), a param to
  // its position among the config's sorted params (the same for every config of the space).
  struct Bound {
    const Expr* expr;
    std::vector<const ParamValue*> values;
    std::vector<std::pair<std::size_t, std::size_t>> from_config;  // (slot, rank in the map)
  };
  std::vector<std::string> sorted;
  for (const auto& p : params_)
    sorted.push_back(p.name);
  std::sort(sorted.begin(), sorted.end());
  std::vector<Bound> bound;
  for (const auto& pe : prune_exprs_) {
    Bound bd{&pe.expr, {}, {}};
    for (std::size_t i = 0; i < pe.expr.names().size(); ++i) {
      const std::string& name = pe.expr.names()[i];
      auto it = std::lower_bound(sorted.begin(), sorted.end(), name);
      if (it != sorted.end() && *it == name) {
        bd.values.push_back(nullptr);
        bd.from_config.emplace_back(i, static_cast<std::size_t>(it - sorted.begin()));
      } else {
        bd.values.push_back(bk.shape_value(name));
      }
    }
    bound.push_back(std::move(bd));
  }
  std::vector<Config> out;
  std::vector<const ParamValue*> by_rank(sorted.size());
  for (const Config& c : configs_) {
    std::size_t r = 0;
    for (const auto& [name, value] : c.params())
      by_rank[r++] = &value;
    bool keep = true;
    for (std::size_t i = 0; keep && i < bound.size(); ++i) {
      Bound& bd = bound[i];
      for (const auto& [slot, rank] : bd.from_config)
        bd.values[slot] = by_rank[rank];
      auto kept = bd.expr->test_bound(bd.values);
      if (!kept)
        return fail(at(prune_exprs_[i].at(kept.error().column),
                       fmt::format("{}, for config {} in bucket '{}'",
                                   one_line(kept.error().message), c.id(), bk.name)));
      keep = *kept;
    }
    if (keep) out.push_back(c);
  }
  return out;
}

std::string Space::pruned_space_hash(const std::vector<Config>& pruned) {
  std::vector<std::string> ids;
  ids.reserve(pruned.size());
  for (const auto& c : pruned)
    ids.push_back(c.id());
  std::sort(ids.begin(), ids.end());
  std::uint64_t h = fnv1a64_offset;
  for (const auto& id : ids) {
    h = fnv1a64(id, h);
    h = fnv1a64(std::string_view("\0", 1), h);
  }
  return hex16(h);
}

result<const Bucket*> Space::select(const Shape& runtime_shape) const {
  auto lookup = [&](std::string_view name) -> const ParamValue* {
    for (const auto& [n, v] : runtime_shape)
      if (n == name) return &v;
    return nullptr;
  };
  std::vector<std::string> shape_text;
  for (const auto& [n, v] : runtime_shape)
    shape_text.push_back(n + "=" + v.canonical());
  for (std::size_t i = 0; i < buckets_.size(); ++i) {
    if (!when_exprs_[i]) return &buckets_[i];
    const auto& w = *when_exprs_[i];
    for (const auto& name : w.expr.names())
      if (lookup(name) == nullptr)
        return fail(at(
            w.at(w.expr.name_column(name)),
            fmt::format("the runtime shape ({}) has no value for '{}', which the when "
                        "of bucket '{}' reads",
                        shape_text.empty() ? "empty" : join(shape_text), name, buckets_[i].name)));
    auto holds = w.expr.test(lookup);
    if (!holds)
      return fail(at(w.at(holds.error().column),
                     fmt::format("{}, for the runtime shape ({}) in the when of bucket '{}'",
                                 holds.error().message, join(shape_text), buckets_[i].name)));
    if (*holds) return &buckets_[i];
  }
  return static_cast<const Bucket*>(nullptr);
}

BenchSettings search_bench(const BenchSettings& bench) {
  if (bench.preset != "quick") return bench;
  BenchSettings quick = bench;
  quick.warmup_ms = std::min(bench.warmup_ms, 10.0);
  quick.rep_ms = std::min(bench.rep_ms, 20.0);
  return quick;
}

}  // namespace tune
