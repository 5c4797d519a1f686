#include <tuner/core/record/bucket_result.hpp>

#include <fstream>
#include <sstream>
#include <system_error>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <tuner/core/base/atomic_file.hpp>
#include <tuner/core/base/input_limits.hpp>
#include <tuner/core/base/json_position.hpp>
#include <tuner/core/base/json_text.hpp>
#include <tuner/core/base/json_whole.hpp>
#include <tuner/core/base/safe_file.hpp>
#include <tuner/core/base/text.hpp>

namespace tune {

namespace {

using nlohmann::json;

template <class T>
json optional_json(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

template <class T>
std::optional<T> optional_from(const json& j, const char* name) {
  auto it = j.find(name);
  if (it == j.end() || it->is_null()) return std::nullopt;
  return it->get<T>();
}

}  // namespace

void to_json(json& j, const BucketResult& r) {
  j = {{"schema_version", bucket_result_schema_version},
       {"kernel", r.kernel},
       {"bucket", r.bucket},
       {"arch", r.arch},
       {"pruned_space_hash", r.pruned_space_hash},
       {"device", optional_json(r.device)},
       {"driver", optional_json(r.driver)},
       {"trials", r.trials},
       {"resumed", r.resumed},
       {"invalid", r.invalid},
       {"budget_exhausted", r.budget_exhausted},
       {"incumbent_failure", optional_json(r.incumbent_failure)},
       {"runoff", r.runoff ? json(*r.runoff) : json(nullptr)},
       {"workers_started", r.workers_started},
       {"best", nullptr}};
  if (r.fixture_failure) j["fixture_failure"] = *r.fixture_failure;
  if (r.runoff_skipped) j["runoff_skipped"] = *r.runoff_skipped;
  if (r.strategy_s > 0) j["strategy_s"] = r.strategy_s;
  if (r.harness_failure) j["harness_failure"] = *r.harness_failure;
  if (!r.prior.is_null()) j["prior"] = r.prior;
  if (r.incumbent)
    j["incumbent"] = {{"config_id", r.incumbent->config_id}, {"median_ms", r.incumbent->median_ms}};
  if (r.best) {
    const MeasuredWinner& b = *r.best;
    j["best"] = {{"config_id", b.config.id()},
                 {"params", b.config},
                 {"median_ms", b.median_ms},
                 {"min_ms", b.min_ms},
                 {"reps", b.reps},
                 {"cache_key", b.cache_key ? json(b.cache_key->digest) : json(nullptr)},
                 {"key_schema", b.cache_key ? json(b.cache_key->schema) : json(nullptr)}};
    if (b.adopted_from) j["best"]["adopted_from"] = *b.adopted_from;
  }
}

void from_json(const json& j, BucketResult& r) {
  if (json_whole(j, "schema_version", 0) != bucket_result_schema_version)
    throw json::other_error::create(501, "another result schema", &j);
  r.kernel = j.at("kernel").get<std::string>();
  r.bucket = j.at("bucket").get<std::string>();
  r.arch = j.at("arch").get<std::string>();
  r.pruned_space_hash = j.at("pruned_space_hash").get<std::string>();
  r.device = optional_from<std::string>(j, "device");
  r.driver = optional_from<std::string>(j, "driver");
  r.trials = j.value("trials", std::size_t{0});
  r.resumed = j.value("resumed", std::size_t{0});
  r.invalid = j.value("invalid", std::size_t{0});
  r.budget_exhausted = j.value("budget_exhausted", false);
  r.incumbent_failure = optional_from<std::string>(j, "incumbent_failure");
  r.fixture_failure = optional_from<std::string>(j, "fixture_failure");
  r.harness_failure = optional_from<std::string>(j, "harness_failure");
  r.runoff = optional_from<RunoffStats>(j, "runoff");
  r.runoff_skipped = optional_from<std::string>(j, "runoff_skipped");
  r.strategy_s = j.value("strategy_s", 0.0);
  r.workers_started = j.value("workers_started", 0);
  r.prior = j.value("prior", json());
  r.incumbent.reset();
  if (auto i = j.find("incumbent"); i != j.end() && i->is_object())
    r.incumbent =
        IncumbentTiming{i->at("config_id").get<std::string>(), i->at("median_ms").get<double>()};
  r.best.reset();
  if (const json& b = j.at("best"); !b.is_null()) {
    MeasuredWinner w;
    w.config = b.at("params").get<Config>();
    w.median_ms = b.at("median_ms").get<double>();
    w.min_ms = b.at("min_ms").get<double>();
    w.reps = json_whole(b, "reps", 0);
    if (auto digest = optional_from<std::string>(b, "cache_key"))
      w.cache_key = L2Key{b.at("key_schema").get<std::string>(), *digest};
    w.adopted_from = optional_from<std::string>(b, "adopted_from");
    r.best = std::move(w);
  }
}

std::string BucketResult::dump() const {
  return dump_json(json(*this), 2) + "\n";
}

void BucketResult::save(const std::filesystem::path& path) const {
  write_file_atomic(path, dump(), "result-save");
}

result<BucketResult> BucketResult::load(const std::filesystem::path& path) {
  const std::string label = path.string();
  if (auto d = not_regular_problem(path)) return fail(*d);
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (ec) return fail(label, 0, 0, "cannot read the file: " + ec.message());
  if (auto d = size_problem(label, size, max_record_bytes, "a result file")) return fail(*d);
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  // The limits and the duplicate-key rule of the other readers (records, summaries, logs).
  if (auto d = json_nesting_problem(text.str(), label)) return fail(*d);
  if (auto dup = duplicate_key_problem(text.str()))
    return fail(label, 0, 0, "not a bucket result: " + dup->second);
  try {
    return json::parse(text.str()).get<BucketResult>();
  } catch (const json::exception& e) {
    return fail(label, 0, 0, fmt::format("not a bucket result: {}", e.what()));
  }
}

Record assemble_record(const Workspace& workspace, const std::vector<BucketResult>& results) {
  Record record(workspace);
  record.context.stamp_here_and_now();
  for (const BucketResult& r : results) {
    if (!r.best) throw error(fmt::format("assemble_record: bucket '{}' has no winner", r.bucket));
    if (r.device) record.context.device = r.device;
    if (r.driver) record.context.driver = r.driver;
    RecordEntry e;
    e.bucket = r.bucket;
    e.pruned_space_hash = r.pruned_space_hash;
    e.config = r.best->config;
    e.median_ms = r.best->median_ms;
    e.samples = r.best->reps;
    e.cache_key = r.best->cache_key;
    // A median this tune's worker did not measure says so, and where it came from.
    e.source = r.best->adopted_from ? "adopted" : "measured";
    e.origin = r.best->adopted_from;
    e.runoff = r.runoff ? nlohmann::json(*r.runoff) : nlohmann::json();
    e.prior = r.prior;
    e.incumbent = r.incumbent;
    if (!r.runoff && r.runoff_skipped)
      e.runoff = {{"outcome", "skipped"}, {"reason", *r.runoff_skipped}};
    record.insert(std::move(e));
  }
  return record;
}

}  // namespace tune
