// The record: its entries, its writing, and its verification against the running build. Its
// reading (Record::parse, Record::load) is in record_reader.cpp.
#include <tuner/core/record/record.hpp>

#include <algorithm>
#include <ctime>
#include <map>

#include <unistd.h>

#include <fmt/core.h>

#include <tuner/core/base/atomic_file.hpp>
#include <tuner/core/base/json_text.hpp>
#include <tuner/core/base/text.hpp>

namespace tune {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

json optional_string(const std::optional<std::string>& s) {
  return s ? json(*s) : json(nullptr);
}

std::string squote(std::string_view s) {
  return "'" + std::string(s) + "'";
}

std::string drift_text(std::string_view field, std::string_view recorded,
                       std::string_view current) {
  return std::string(field) + ": record has " + squote(recorded) + ", current is " +
         squote(current);
}

}  // namespace

const Workspace::Bucket* Workspace::bucket(std::string_view name) const {
  for (const auto& b : buckets)
    if (b.name == name) return &b;
  return nullptr;
}

Record::Record(const Workspace& w)
    : kernel(w.kernel),
      arch(w.arch),
      source_hash(w.source_hash),
      space_hash(w.space_hash),
      toolchain(w.toolchain),
      identity(w.identity),
      tuner_version(w.tuner_version),
      context(w.context) {}

void Record::insert(RecordEntry entry) {
  if (entry.config_id.empty()) entry.config_id = entry.config.id();
  entries_.erase(std::remove_if(entries_.begin(), entries_.end(),
                                [&](const RecordEntry& e) { return e.bucket == entry.bucket; }),
                 entries_.end());
  auto at = std::upper_bound(
      entries_.begin(), entries_.end(), entry,
      [](const RecordEntry& a, const RecordEntry& b) { return a.bucket < b.bucket; });
  entries_.insert(at, std::move(entry));
}

const RecordEntry* Record::get(std::string_view bucket) const {
  for (const auto& e : entries_)
    if (e.bucket == bucket) return &e;
  return nullptr;
}

json Record::to_json() const {
  json j;
  j["schema_version"] = schema_version;
  j["kernel"] = kernel;
  j["arch"] = arch;
  j["source_hash"] = source_hash;
  j["space_hash"] = space_hash;
  j["toolchain"] = toolchain;
  if (identity) {
    j["identity"] = identity->digest();
    j["inputs"] = tune::to_json(*identity);
  }
  j["tuner_version"] = tuner_version;
  j["context"] = {{"device", optional_string(context.device)},
                  {"driver", optional_string(context.driver)},
                  {"host_compiler", optional_string(context.host_compiler)},
                  {"machine", optional_string(context.machine)},
                  {"date", optional_string(context.date)}};
  j["entries"] = json::array();
  for (const auto& e : entries_) {
    json je;
    je["bucket"] = e.bucket;
    je["pruned_space_hash"] = e.pruned_space_hash;
    je["config"] = {{"id", e.config_id.empty() ? e.config.id() : e.config_id},
                    {"params", e.config}};
    je["median_ms"] = e.median_ms ? json(*e.median_ms) : json(nullptr);
    je["samples"] = e.samples;
    je["cache_key"] = e.cache_key
                          ? json{{"schema", e.cache_key->schema}, {"digest", e.cache_key->digest}}
                          : json(nullptr);
    je["source"] = e.source;
    if (e.origin) je["origin"] = *e.origin;
    if (e.forced) je["forced"] = {{"status", e.forced->status}, {"reason", e.forced->reason}};
    je["runoff"] = e.runoff;
    if (!e.prior.is_null()) je["prior"] = e.prior;
    if (e.incumbent)
      je["incumbent"] = {{"config_id", e.incumbent->config_id},
                         {"median_ms", e.incumbent->median_ms}};
    j["entries"].push_back(std::move(je));
  }
  return j;
}

std::string describe_speedup(const IncumbentTiming& incumbent, const std::string& winner_id,
                             double winner_value, bool maximize) {
  if (incumbent.config_id == winner_id) return "the incumbent itself";
  if (maximize)
    return fmt::format("{:.2f}x the score of the incumbent {} ({:.4g})",
                       incumbent.median_ms > 0 ? winner_value / incumbent.median_ms : 0.0,
                       incumbent.config_id, incumbent.median_ms);
  return fmt::format("speed-up {:.2f}x over the incumbent {} ({:.4f} ms)",
                     winner_value > 0 ? incumbent.median_ms / winner_value : 0.0,
                     incumbent.config_id, incumbent.median_ms);
}

std::string Record::dump() const {
  return dump_json(to_json(), 2) + "\n";
}

void RecordContext::stamp_here_and_now() {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) == 0 && host[0] != '\0') machine = host;
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  ::gmtime_r(&now, &tm);
  char day[16];
  std::strftime(day, sizeof day, "%Y-%m-%d", &tm);
  date = day;
}

void Record::save(const fs::path& path) const {
  write_file_atomic(path, dump(), "record-save");
  remove_stale_temporaries(path);  // of a save that was killed before its rename
}

std::string_view to_string(RecordState s) {
  switch (s) {
    case RecordState::fresh:
      return "fresh";
    case RecordState::stale:
      return "stale";
    case RecordState::missing:
      return "missing";
    case RecordState::unreadable:
      return "unreadable";
  }
  return "unknown";
}

std::string Verification::report(const std::string& path_label) const {
  std::string out;
  for (const auto& w : warnings)
    out += path_label + ": warning: " + w + "\n";
  for (const auto& e : errors)
    out += path_label + ": error: " + e + "\n";
  if (ok()) return out;
  for (const auto& c : changes)
    out += path_label + ": note: " + c + "\n";
  if (!retune_command.empty()) out += path_label + ": note: re-tune with: " + retune_command + "\n";
  for (const auto& p : pin_commands)
    out += path_label + ": note: or, without a GPU, pin a config instead: " + p + "\n";
  return out;
}

namespace {

// Step 1 after the schema: the record must be of this kernel, arch, source and space.
void check_identity(const Record& record, const Workspace& w, std::vector<std::string>& errors) {
  if (record.kernel != w.kernel) errors.push_back(drift_text("kernel", record.kernel, w.kernel));
  if (record.arch != w.arch) errors.push_back(drift_text("arch", record.arch, w.arch));
  if (record.source_hash != w.source_hash)
    errors.push_back(drift_text("source_hash", record.source_hash, w.source_hash));
  if (record.space_hash != w.space_hash)
    errors.push_back(drift_text("space_hash", record.space_hash, w.space_hash));
}

// Step 2, for an entry whose bucket appears once: its config id, bucket, pruned space and
// config against the current space. Returns whether its key can be recomputed (its bucket
// and config are in the current space).
bool check_entry(const RecordEntry& e, const Workspace& w, std::vector<std::string>& errors) {
  bool checkable = true;
  std::string entry = "entry " + squote(e.bucket);
  std::string params_id = e.config.id();
  if (e.config_id != params_id) {
    checkable = false;
    errors.push_back(entry + " config.id: record has " + squote(e.config_id) +
                     ", its params give " + squote(params_id));
  }
  const Workspace::Bucket* b = w.bucket(e.bucket);
  if (b == nullptr) {
    std::vector<std::string> names;
    for (const auto& wb : w.buckets)
      names.push_back(wb.name);
    errors.push_back("entries: record has bucket " + squote(e.bucket) +
                     ", which the current space lacks" + did_you_mean(e.bucket, names) +
                     " (it has " + quoted_list(names) + ")");
    return false;
  }
  if (e.pruned_space_hash != b->pruned_space_hash)
    errors.push_back(
        drift_text(entry + " pruned_space_hash", e.pruned_space_hash, b->pruned_space_hash));
  if (checkable &&
      std::find(b->config_ids.begin(), b->config_ids.end(), params_id) == b->config_ids.end()) {
    checkable = false;
    errors.push_back(entry + " config: record has " + squote(params_id) +
                     ", current pruned space of the bucket does not contain it");
  }
  return checkable;
}

// Step 2: one entry per bucket of the current space, each checked. `checkable[i]`: entry i's
// bucket and config are in the current space, so its key can be recomputed.
std::vector<bool> check_entries(const std::vector<RecordEntry>& entries, const Workspace& w,
                                std::vector<std::string>& errors) {
  std::vector<bool> checkable(entries.size(), true);
  std::map<std::string, int> count;
  for (const auto& e : entries)
    ++count[e.bucket];
  std::map<std::string, bool> duplicate_reported;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const RecordEntry& e = entries[i];
    if (count[e.bucket] > 1) {
      checkable[i] = false;
      if (!duplicate_reported[e.bucket]) {
        duplicate_reported[e.bucket] = true;
        errors.push_back("entries: record has bucket " + squote(e.bucket) + " " +
                         std::to_string(count[e.bucket]) +
                         " times, current is one entry per bucket");
      }
      continue;
    }
    checkable[i] = check_entry(e, w, errors);
  }
  for (const auto& b : w.buckets)
    if (count.find(b.name) == count.end())
      errors.push_back("entries: record has no entry for bucket " + squote(b.name) +
                       ", current space declares it");
  return checkable;
}

// Step 2b: an entry whose median another machine measured was never confirmed here (the
// budget ran out before its check): not fresh until a tune measures it (docs/trust.md).
void check_sources(const std::vector<RecordEntry>& entries, const VerifyOptions& options,
                   std::vector<std::string>& errors, std::vector<std::string>& warnings) {
  for (const RecordEntry& e : entries) {
    if (e.source != "adopted") continue;
    const std::string text = "entry " + squote(e.bucket) + " source: " + squote(e.config_id) +
                             " was adopted from " + e.origin.value_or("another machine") +
                             " and never measured here";
    if (options.allow_unverified)
      warnings.push_back(text);
    else
      errors.push_back(text + ": a tune measures it (the record is not fresh until then)");
  }
}

// Step 4: each checkable entry's cache key against the one recomputed now.
void check_cache_keys(const std::vector<RecordEntry>& entries, const std::vector<bool>& checkable,
                      const RecomputeKey& recompute_key, std::vector<std::string>& errors,
                      std::vector<std::string>& warnings) {
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const RecordEntry& e = entries[i];
    if (!checkable[i]) continue;
    std::string field = "entry " + squote(e.bucket) + " cache_key";
    L2Key current = recompute_key(e);
    if (!e.cache_key) {
      errors.push_back(field + ": record has none, current is " + squote(current.str()));
    } else if (e.cache_key->schema != current.schema) {
      warnings.push_back(field + ": record has key schema " + squote(e.cache_key->schema) +
                         ", current is " + squote(current.schema) + " (incomparable, not checked)");
    } else if (e.cache_key->digest != current.digest) {
      errors.push_back(drift_text(field, e.cache_key->str(), current.str()));
    }
  }
}

// Step 5: drift that only shifts timings, as warnings.
void warn_context_drift(const Record& record, const Workspace& w,
                        std::vector<std::string>& warnings) {
  auto warn_drift = [&](std::string_view field, const std::optional<std::string>& recorded,
                        const std::optional<std::string>& current) {
    if (recorded && current && !recorded->empty() && !current->empty() && *recorded != *current)
      warnings.push_back(drift_text(field, *recorded, *current));
  };
  warn_drift("context.device", record.context.device, w.context.device);
  warn_drift("context.driver", record.context.driver, w.context.driver);
  warn_drift("context.host_compiler", record.context.host_compiler, w.context.host_compiler);
  if (record.tuner_version != w.tuner_version)
    warnings.push_back(drift_text("tuner_version", record.tuner_version, w.tuner_version));
}

}  // namespace

Verification verify_record(Record record, const Workspace& w, const RecomputeKey& recompute_key,
                           const VerifyOptions& options) {
  Verification v;
  v.retune_command = w.retune_command;
  auto& errors = v.errors;
  auto& warnings = v.warnings;

  // 1. Identity. Another schema cannot be read further.
  if (record.schema_version != record_schema_version) {
    errors.push_back(drift_text("schema_version", std::to_string(record.schema_version),
                                std::to_string(record_schema_version)));
    v.state = RecordState::stale;
    return v;
  }
  check_identity(record, w, errors);

  // 2. Entries, and what measured them.
  const std::vector<bool> checkable = check_entries(record.entries(), w, errors);
  check_sources(record.entries(), options, errors, warnings);

  // 3. Toolchain drift: every key covers the fingerprint, so keys are not compared across it.
  bool toolchain_drift = record.toolchain != w.toolchain;
  if (toolchain_drift) {
    std::string m = drift_text("toolchain", record.toolchain, w.toolchain);
    if (options.allow_toolchain_drift)
      warnings.push_back(m + " (drift allowed: cache keys not compared)");
    else
      errors.push_back(m);
  }

  // 4. Cache keys.
  if (!toolchain_drift)
    check_cache_keys(record.entries(), checkable, recompute_key, errors, warnings);

  // 5. Drift that only shifts timings; and pins that `record set --force` made past an invalid
  // compile, which the record still serves (fresh), flagged.
  warn_context_drift(record, w, warnings);
  for (const RecordEntry& e : record.entries())
    if (e.forced)
      warnings.push_back("entry " + squote(e.bucket) + " config: pinned with --force to " +
                         squote(e.config_id) + ", which is invalid (" + e.forced->status +
                         "): " + e.forced->reason);

  if (errors.empty()) {
    v.state = RecordState::fresh;
    v.record = std::move(record);
  } else {
    v.state = RecordState::stale;
  }
  return v;
}

Verification load_verified(const fs::path& path, const Workspace& workspace,
                           const RecomputeKey& recompute_key, const VerifyOptions& options) {
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    Verification v;
    v.state = RecordState::missing;
    v.retune_command = workspace.retune_command;
    v.errors.push_back("record: missing for kernel " + squote(workspace.kernel) + " arch " +
                       squote(workspace.arch) + ", expected at " + squote(path.string()));
    return v;
  }
  result<Record> r = Record::load(path);
  if (!r) {
    Verification v;
    v.state = RecordState::unreadable;
    v.errors.push_back(r.error().message);
    v.line = r.error().line;
    v.column = r.error().column;
    return v;
  }
  return verify_record(std::move(*r), workspace, recompute_key, options);
}

}  // namespace tune
