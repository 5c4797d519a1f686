// Reading a record: Record::parse and Record::load, and the RecordReader behind them, which
// checks every field's type and names the first wrong one with its line and column (a record
// is committed, reviewed and sometimes edited by hand, and may be hostile).
#include <tuner/core/record/record.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <sstream>

#include <fmt/core.h>

#include <tuner/core/base/input_limits.hpp>
#include <tuner/core/base/json_position.hpp>
#include <tuner/core/base/json_text.hpp>
#include <tuner/core/base/safe_file.hpp>
#include <tuner/core/base/text.hpp>

namespace tune {

namespace fs = std::filesystem;
using nlohmann::json;

// Reads the fields of a record's JSON, reporting the first field of the wrong type.
struct RecordReader {
  std::string path;

  // The value as JSON for a message, cut to 100 bytes (a hostile value may be megabytes).
  static std::string shown(const json& got) {
    if (got.is_number_float() && !std::isfinite(got.get<double>()))
      return "a number out of range";  // dump() would print null
    std::string text = dump_json(got);
    if (text.size() > 100)
      text = text.substr(0, 100) + "... (" + std::to_string(text.size()) + " bytes)";
    return text;
  }

  [[noreturn]] void bad(const std::string& field, const std::string& expected, const json& got) {
    throw input_error(diagnostic{
        path, 0, 0, "field '" + field + "' must be " + expected + ", got " + shown(got)});
  }
  const json* find(const json& obj, const char* name, const std::string& where, bool required) {
    auto it = obj.find(name);
    if (it == obj.end()) {
      if (required)
        throw input_error(diagnostic{path, 0, 0, "missing required field '" + where + name + "'"});
      return nullptr;
    }
    return &*it;
  }
  std::string string(const json& obj, const char* name, const std::string& where) {
    const json* v = find(obj, name, where, true);
    if (!v->is_string()) bad(where + name, "a string", *v);
    return v->get<std::string>();
  }
  std::optional<std::string> optional_string_field(const json& obj, const char* name,
                                                   const std::string& where) {
    const json* v = find(obj, name, where, false);
    if (v == nullptr || v->is_null()) return std::nullopt;
    if (!v->is_string()) bad(where + name, "a string or null", *v);
    return v->get<std::string>();
  }

  RecordEntry entry(const json& e, const std::string& where) {
    if (!e.is_object()) bad(where.substr(0, where.size() - 1), "an object", e);
    RecordEntry out;
    out.bucket = string(e, "bucket", where);
    out.pruned_space_hash = string(e, "pruned_space_hash", where);
    const json* config = find(e, "config", where, true);
    if (!config->is_object()) bad(where + "config", "an object with 'id' and 'params'", *config);
    out.config_id = string(*config, "id", where + "config.");
    const json* params = find(*config, "params", where + "config.", true);
    if (params->is_object())
      for (auto it = params->begin(); it != params->end(); ++it)
        if (it->is_number_unsigned() &&
            it->get<std::uint64_t>() > std::uint64_t{std::numeric_limits<std::int64_t>::max()})
          bad(where + "config.params." + it.key(), "an integer that fits in 64 bits", *it);
    try {
      out.config = params->get<Config>();
    } catch (const json::exception&) {
      bad(where + "config.params", "an object of integer or string values", *params);
    }
    const json* median = find(e, "median_ms", where, false);
    if (median != nullptr && !median->is_null()) {
      if (!median->is_number() || !std::isfinite(median->get<double>()) ||
          median->get<double>() < 0)
        bad(where + "median_ms", "a finite number >= 0 or null", *median);
      out.median_ms = median->get<double>();
    }
    const json* samples = find(e, "samples", where, false);
    if (samples != nullptr) {
      if (!samples->is_number_integer()) bad(where + "samples", "an integer", *samples);
      if (samples->is_number_unsigned()
              ? samples->get<std::uint64_t>() >
                    std::uint64_t{std::numeric_limits<std::int64_t>::max()}
              : samples->get<std::int64_t>() < 0)
        bad(where + "samples", "an integer >= 0", *samples);
      out.samples = samples->get<std::int64_t>();
    }
    const json* key = find(e, "cache_key", where, false);
    if (key != nullptr && !key->is_null()) {
      if (!key->is_object()) bad(where + "cache_key", "an object or null", *key);
      out.cache_key = L2Key{string(*key, "schema", where + "cache_key."),
                            string(*key, "digest", where + "cache_key.")};
    }
    const json* source = find(e, "source", where, false);
    if (source != nullptr) {
      if (!source->is_string() ||
          (*source != "measured" && *source != "pinned" && *source != "adopted"))
        bad(where + "source", "'measured', 'adopted' or 'pinned'", *source);
      out.source = source->get<std::string>();
    }
    const json* origin = find(e, "origin", where, false);
    if (origin != nullptr && !origin->is_null()) {
      if (!origin->is_string()) bad(where + "origin", "a string", *origin);
      out.origin = origin->get<std::string>();
    }
    if (out.source == "adopted" && !out.origin)
      bad(where + "origin", "where the adopted median came from", origin ? *origin : json());
    const json* forced = find(e, "forced", where, false);
    if (forced != nullptr && !forced->is_null()) {
      if (!forced->is_object()) bad(where + "forced", "an object or null", *forced);
      if (out.source != "pinned")
        bad(where + "forced", "null in an entry whose source is not 'pinned'", *forced);
      out.forced = RecordEntry::Forced{string(*forced, "status", where + "forced."),
                                       string(*forced, "reason", where + "forced.")};
    }
    const json* runoff = find(e, "runoff", where, false);
    if (runoff != nullptr) out.runoff = *runoff;
    const json* prior = find(e, "prior", where, false);
    if (prior != nullptr && !prior->is_null()) {
      if (!prior->is_object()) bad(where + "prior", "an object or null", *prior);
      out.prior = *prior;
    }
    const json* incumbent = find(e, "incumbent", where, false);
    if (incumbent != nullptr && !incumbent->is_null()) {
      if (!incumbent->is_object()) bad(where + "incumbent", "an object or null", *incumbent);
      const json* m = find(*incumbent, "median_ms", where + "incumbent.", true);
      if (!m->is_number() || !std::isfinite(m->get<double>()) || m->get<double>() <= 0)
        bad(where + "incumbent.median_ms", "a finite number > 0", *m);
      out.incumbent =
          IncumbentTiming{string(*incumbent, "config_id", where + "incumbent."), m->get<double>()};
    }
    return out;
  }

  Record record(const json& j) {
    if (!j.is_object()) throw input_error(diagnostic{path, 0, 0, "a record must be a JSON object"});
    Record r;
    const json* schema = find(j, "schema_version", "", true);
    if (!schema->is_number_integer() || *schema > std::numeric_limits<int>::max() ||
        *schema < std::numeric_limits<int>::min())
      bad("schema_version", "an integer", *schema);
    r.schema_version = schema->get<int>();
    if (r.schema_version != record_schema_version) {
      // Another schema: keep what can be named, leave the rest to verification.
      auto text = [&](const char* name) {
        auto it = j.find(name);
        return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
      };
      r.kernel = text("kernel");
      r.arch = text("arch");
      return r;
    }
    r.kernel = string(j, "kernel", "");
    r.arch = string(j, "arch", "");
    r.source_hash = string(j, "source_hash", "");
    r.space_hash = string(j, "space_hash", "");
    r.toolchain = string(j, "toolchain", "");
    r.tuner_version = string(j, "tuner_version", "");
    // The identity explains a stale record; inputs that do not read, or do not give the digest
    // beside them, are dropped (the entries' cache keys decide freshness either way).
    if (auto id = j.find("identity"), in = j.find("inputs");
        id != j.end() && id->is_string() && in != j.end())
      if (result<BuildIdentity> inputs = identity_from_json(*in);
          inputs && inputs->digest() == id->get<std::string>())
        r.identity = std::move(*inputs);
    const json* context = find(j, "context", "", false);
    if (context != nullptr && !context->is_null()) {
      if (!context->is_object()) bad("context", "an object", *context);
      r.context.device = optional_string_field(*context, "device", "context.");
      r.context.driver = optional_string_field(*context, "driver", "context.");
      r.context.host_compiler = optional_string_field(*context, "host_compiler", "context.");
      r.context.machine = optional_string_field(*context, "machine", "context.");
      r.context.date = optional_string_field(*context, "date", "context.");
    }
    const json* entries = find(j, "entries", "", true);
    if (!entries->is_array()) bad("entries", "an array", *entries);
    for (std::size_t i = 0; i < entries->size(); ++i)
      r.entries_.push_back(entry((*entries)[i], "entries[" + std::to_string(i) + "]."));
    std::stable_sort(
        r.entries_.begin(), r.entries_.end(),
        [](const RecordEntry& a, const RecordEntry& b) { return a.bucket < b.bucket; });
    return r;
  }
};

namespace {

// `d`, a RecordReader diagnostic naming a `field '<path>'`, with the line and column of that
// field's value in `text` (of the object that lacks it, for a missing field): a hand-edited
// record is fixed in an editor, which wants a place, not a path.
diagnostic with_field_position(diagnostic d, std::string_view text) {
  const std::string marker = "field '";
  const std::size_t start = d.message.find(marker);
  if (start == std::string::npos) return d;
  const std::size_t from = start + marker.size();
  const std::size_t end = d.message.find('\'', from);
  if (end == std::string::npos) return d;
  if (auto offset = json_value_offset(text, std::string_view(d.message).substr(from, end - from))) {
    const TextPosition at = text_position(text, *offset);
    d.line = at.line;
    d.column = at.column;
  }
  return d;
}

}  // namespace

result<Record> Record::parse(std::string_view json_text, const std::string& path) {
  if (auto d = size_problem(path, json_text.size(), max_record_bytes, "a record")) return fail(*d);
  if (auto d = json_nesting_problem(json_text, path)) return fail(*d);
  json j;
  try {
    j = json::parse(json_text);
  } catch (const json::parse_error& e) {  // `byte` counts the bytes read, the bad one included
    const TextPosition at = text_position(json_text, e.byte > 0 ? e.byte - 1 : 0);
    return fail(path, at.line, at.column, std::string("not valid JSON: ") + e.what());
  } catch (const json::exception& e) {  // out_of_range for 1e999
    return fail(path, 0, 0, std::string("not valid JSON: ") + e.what());
  }
  if (auto dup = duplicate_key_problem(json_text)) {
    const TextPosition at = text_position(json_text, dup->first);
    return fail(path, at.line, at.column, dup->second);
  }
  try {
    return RecordReader{path}.record(j);
  } catch (const input_error& e) {
    return fail(with_field_position(e.diag(), json_text));
  }
}

result<Record> Record::load(const fs::path& path) {
  if (auto d = not_regular_problem(path)) return fail(*d);  // /dev/zero would never end
  std::error_code ec;
  const std::uintmax_t size = fs::file_size(path, ec);
  if (!ec)
    if (auto d = size_problem(path.string(), size, max_record_bytes, "a record")) return fail(*d);
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail(path.string(), 0, 0, "cannot read the record");
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse(ss.str(), path.string());
}

}  // namespace tune
