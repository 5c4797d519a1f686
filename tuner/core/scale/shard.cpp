#include <tuner/core/scale/shard.hpp>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <tuner/core/base/atomic_file.hpp>
#include <tuner/core/base/bucket_name.hpp>
#include <tuner/core/base/input_limits.hpp>
#include <tuner/core/base/json_position.hpp>
#include <tuner/core/base/json_whole.hpp>
#include <tuner/core/base/safe_file.hpp>
#include <tuner/core/base/text.hpp>

namespace tune {

namespace fs = std::filesystem;
using nlohmann::json;

std::string ShardSpec::str() const {
  return fmt::format("{}/{}", index, count);
}

namespace {

std::optional<int> parse_int(std::string_view text) {
  int v = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || p != end) return std::nullopt;
  return v;
}

}  // namespace

result<ShardSpec> parse_shard(std::string_view text) {
  auto bad = [&](std::string why) {
    return fail("", 0, 0, fmt::format("bad shard '{}': {}", text, why));
  };
  const std::size_t slash = text.find('/');
  if (slash == std::string_view::npos) return bad("expected K/N, e.g. '2/4'");
  std::optional<int> k = parse_int(text.substr(0, slash));
  std::optional<int> n = parse_int(text.substr(slash + 1));
  if (!k || !n) return bad("expected K/N with whole numbers, e.g. '2/4'");
  if (*n < 1) return bad("the shard count must be at least 1");
  if (*k < 1 || *k > *n) return bad(fmt::format("the index must be between 1 and {}", *n));
  return ShardSpec{*k, *n};
}

ShardPlan plan_shards(const std::vector<std::size_t>& sizes, int count) {
  if (count < 1) throw error(fmt::format("plan_shards: shard count {} < 1", count));
  const auto n = static_cast<std::size_t>(count);
  std::vector<std::size_t> edges{0};  // bucket edges in the end-to-end order
  for (std::size_t s : sizes)
    edges.push_back(edges.back() + s);
  const std::size_t total = edges.back();
  const std::size_t tolerance = total / (8 * n);
  std::vector<std::size_t> cuts{0};
  for (std::size_t k = 1; k < n; ++k) {
    // More shards than candidates: one candidate each for the first shards, the empty ones
    // last (rounding spread them between, so that a listing began with empty shards).
    std::size_t cut = total < n ? std::min(k, total) : (k * total + n / 2) / n;
    // The nearest bucket edge (the earlier on a tie), when close enough and not before the
    // previous cut: small buckets stay whole.
    std::size_t best = cut;
    std::size_t best_distance = tolerance + 1;
    for (std::size_t e : edges) {
      const std::size_t d = e > cut ? e - cut : cut - e;
      if (d < best_distance && e >= cuts.back()) {
        best = e;
        best_distance = d;
      }
    }
    cuts.push_back(std::max(best, cuts.back()));
  }
  cuts.push_back(total);
  ShardPlan plan;
  plan.shards.resize(n);
  for (std::size_t k = 0; k < n; ++k) {
    for (std::size_t b = 0; b < sizes.size(); ++b) {
      const std::size_t lo = std::max(cuts[k], edges[b]);
      const std::size_t hi = std::min(cuts[k + 1], edges[b + 1]);
      if (lo < hi) plan.shards[k].push_back({b, lo - edges[b], hi - edges[b]});
    }
  }
  return plan;
}

result<ShardPlan> plan_space(const Space& space, int count) {
  std::vector<std::size_t> sizes;
  for (const Bucket& b : space.buckets()) {
    result<std::vector<Config>> configs = space.configs(b);
    if (!configs) return fail(configs.error());
    sizes.push_back(configs->size());
  }
  return plan_shards(sizes, count);
}

std::string shard_stem(const ShardSpec& shard) {
  return fmt::format("shard-{}-of-{}", shard.index, shard.count);
}

fs::path shard_summary_path(const fs::path& dir, const std::string& arch, const ShardSpec& shard) {
  return dir / arch / (shard_stem(shard) + ".json");
}

std::string shard_log_name(const std::string& bucket, const ShardSpec& shard) {
  return bucket_file_name(bucket, "." + shard_stem(shard) + ".trials.jsonl");
}

fs::path shard_log_path(const fs::path& dir, const std::string& arch, const std::string& bucket,
                        const ShardSpec& shard) {
  return dir / arch / shard_log_name(bucket, shard);
}

json bench_json(const BenchSettings& b) {
  json j{{"clear_l2", b.clear_l2},
         {"max_reps", b.max_reps},
         {"min_reps", b.min_reps},
         {"rep_ms", b.rep_ms},
         {"warmup_ms", b.warmup_ms}};
  if (!b.preset.empty()) j["preset"] = b.preset;  // only when given: older summaries match
  return j;
}

std::string ShardSummary::dump() const {
  json buckets_j = json::array();
  for (const ShardBucket& b : buckets)
    buckets_j.push_back(json{{"bucket", b.bucket},
                             {"first", b.first},
                             {"end", b.end},
                             {"log", b.log},
                             {"log_sha256", b.log_sha256 ? json(*b.log_sha256) : json()},
                             {"result", b.result}});
  auto opt = [](const std::optional<std::string>& s) { return s ? json(*s) : json(); };
  const json j{{"schema_version", shard_summary_schema_version},
               {"kernel", kernel},
               {"arch", arch},
               {"shard", shard.index},
               {"shards", shard.count},
               {"space_hash", space_hash},
               {"source_hash", source_hash},
               {"toolchain", toolchain},
               {"bench", bench},
               {"device", opt(device)},
               {"driver", opt(driver)},
               {"host", host},
               {"buckets", buckets_j}};
  return j.dump(2) + "\n";
}

void ShardSummary::save(const fs::path& to) const {
  write_file_atomic(to, dump(), "shard-save");
}

result<ShardSummary> ShardSummary::load(const fs::path& from) {
  const std::string label = from.string();
  if (auto d = not_regular_problem(from)) return fail(*d);
  std::error_code ec;
  const std::uintmax_t size = fs::file_size(from, ec);
  if (ec) return fail(label, 0, 0, "cannot read the file: " + ec.message());
  if (auto d = size_problem(label, size, max_record_bytes, "a shard summary")) return fail(*d);
  std::ifstream in(from, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  // A copy or a dump of a deeper tree would recurse that deep (the fuzz target's crash).
  if (auto d = json_nesting_problem(text.str(), label)) return fail(*d);
  // `"shard": 1, "shard": 2` was read as shard 2: a key said twice is refused, as in a record.
  if (auto dup = duplicate_key_problem(text.str())) return fail(label, 0, 0, dup->second);
  try {
    const json j = json::parse(text.str());
    const auto schema = json_whole(j, "schema_version", 0);
    if (schema != shard_summary_schema_version)
      return fail(label, 0, 0,
                  fmt::format("shard summary schema {} is not {}, the one this tuner reads", schema,
                              shard_summary_schema_version));
    ShardSummary s;
    s.kernel = j.at("kernel").get<std::string>();
    s.arch = j.at("arch").get<std::string>();
    constexpr std::int64_t most = std::numeric_limits<int>::max();
    s.shard = {static_cast<int>(json_whole(j, "shard", 0, most)),
               static_cast<int>(json_whole(j, "shards", 0, most))};
    if (s.shard.count < 1 || s.shard.index < 1 || s.shard.index > s.shard.count)
      return fail(label, 0, 0, fmt::format("bad shard {} in a shard summary", s.shard.str()));
    s.space_hash = j.at("space_hash").get<std::string>();
    s.source_hash = j.at("source_hash").get<std::string>();
    s.toolchain = j.at("toolchain").get<std::string>();
    s.bench = j.at("bench");
    if (!j.at("device").is_null()) s.device = j.at("device").get<std::string>();
    if (!j.at("driver").is_null()) s.driver = j.at("driver").get<std::string>();
    s.host = j.at("host").get<std::string>();
    for (const json& b : j.at("buckets")) {
      ShardBucket sb;
      sb.bucket = b.at("bucket").get<std::string>();
      sb.first = static_cast<std::size_t>(json_whole(b, "first", 0));
      sb.end = static_cast<std::size_t>(json_whole(b, "end", 0));
      sb.log = b.at("log").get<std::string>();
      if (sb.log.empty() || fs::path(sb.log).filename() != sb.log)
        return fail(label, 0, 0, fmt::format("bad log name '{}' in a shard summary", sb.log));
      sb.result = b.at("result").get<BucketResult>();
      if (auto it = b.find("log_sha256"); it != b.end() && !it->is_null()) {
        const std::string digest = it->get<std::string>();
        if (digest.size() != 64 ||
            digest.find_first_not_of("0123456789abcdef") != std::string::npos)
          return fail(label, 0, 0,
                      fmt::format("bad log_sha256 '{}' in a shard summary (64 lowercase hex "
                                  "digits expected)",
                                  printable(digest.substr(0, 80))));
        sb.log_sha256 = digest;
      }
      s.buckets.push_back(std::move(sb));
    }
    s.path = from;
    return s;
  } catch (const json::exception& e) {
    return fail(label, 0, 0, fmt::format("not a shard summary: {}", e.what()));
  }
}

result<std::vector<int>> parse_device_list(std::string_view text) {
  std::vector<int> out;
  const std::string all = trim(text);
  if (all.empty()) return fail("", 0, 0, "empty device list: expected e.g. '0,1' or 'all'");
  std::size_t start = 0;
  while (start <= all.size()) {
    std::size_t comma = all.find(',', start);
    if (comma == std::string_view::npos) comma = all.size();
    const std::string item = trim(std::string_view(all).substr(start, comma - start));
    std::optional<int> d = parse_int(item);
    if (!d || *d < 0)
      return fail("", 0, 0,
                  fmt::format("bad device '{}' in '{}': expected device numbers such as '0,1', "
                              "or 'all'",
                              item, all));
    if (std::find(out.begin(), out.end(), *d) != out.end())
      return fail("", 0, 0, fmt::format("device {} is listed twice in '{}'", *d, all));
    out.push_back(*d);
    start = comma + 1;
  }
  return out;
}

namespace {

// An entry of CUDA_VISIBLE_DEVICES the driver accepts, as a key that tells devices apart (the
// index, or the UUID in lowercase), or "" for one it stops at.
std::string visible_device_key(std::string_view entry) {
  const auto all_of = [](std::string_view s, auto pred) {
    return !s.empty() && std::all_of(s.begin(), s.end(),
                                     [&](char c) { return pred(static_cast<unsigned char>(c)); });
  };
  if (all_of(entry, [](unsigned char c) { return std::isdigit(c) != 0; })) {
    const std::size_t nonzero = entry.find_first_not_of('0');
    std::string key = "#";
    key += nonzero == std::string_view::npos ? std::string_view("0") : entry.substr(nonzero);
    return key;
  }
  std::string lower;
  for (char c : entry)
    lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  const auto uuid_text = [&](std::string_view s, bool slashes) {
    return all_of(s, [slashes](unsigned char c) {
      return std::isxdigit(c) != 0 || c == '-' || (slashes && (c == '/' || std::isdigit(c)));
    });
  };
  const std::string_view l = lower;
  if (l.starts_with("gpu-") && uuid_text(l.substr(4), false)) return lower;
  if (l.starts_with("mig-gpu-") && uuid_text(l.substr(8), true)) return lower;
  if (l.starts_with("mig-") && uuid_text(l.substr(4), false)) return lower;
  return "";
}

}  // namespace

std::size_t visible_device_count(std::string_view text) {
  std::vector<std::string> seen;
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t comma = text.find(',', start);
    if (comma == std::string_view::npos) comma = text.size();
    const std::string key = visible_device_key(trim(text.substr(start, comma - start)));
    if (key.empty() || std::find(seen.begin(), seen.end(), key) != seen.end()) break;
    seen.push_back(key);
    start = comma + 1;
  }
  return seen.size();
}

}  // namespace tune
