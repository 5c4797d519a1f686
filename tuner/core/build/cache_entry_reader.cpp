// The one reader of a kernel cache entry's text (kernel_cache.hpp, read_cache_entry): the
// local cache and the remote store read entries alike. Every count is read by json_whole: an
// entry may come from another host.
#include <tuner/core/build/kernel_cache.hpp>

#include <cmath>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <tuner/core/base/json_position.hpp>
#include <tuner/core/base/json_whole.hpp>
#include <tuner/core/base/text.hpp>

namespace tune {

using nlohmann::json;

void from_json(const json& j, KernelResources& r) {
  constexpr std::int64_t most_registers = 1 << 16;
  constexpr std::int64_t most_bytes = std::int64_t{1} << 48;
  r.registers = static_cast<int>(json_whole(j, "registers", 0, most_registers));
  r.shared_bytes = json_whole(j, "shared_bytes", 0, most_bytes);
  r.local_bytes = json_whole(j, "local_bytes", 0, most_bytes);
  r.const_bytes = json_whole(j, "const_bytes", 0, most_bytes);
}

void from_json(const json& j, CacheEntry& e) {
  e.key = j.at("key").get<std::string>();
  e.key_schema = j.at("key_schema").get<std::string>();
  const auto status = parse_cache_status(j.at("status").get<std::string>());
  if (!status)
    throw json::other_error::create(
        501, "unknown status '" + j.at("status").get<std::string>() + "'", &j);
  e.status = *status;
  e.reason = j.at("reason").get<std::string>();
  e.compiler_output = j.at("compiler_output").get<std::string>();
  if (j.at("resources").is_null())
    e.resources.reset();
  else
    e.resources = j.at("resources").get<KernelResources>();
  e.cubin_sha256 = j.at("cubin_sha256").get<std::string>();
  e.arch = j.at("arch").get<std::string>();
  e.config_id = j.at("config_id").get<std::string>();
  e.argv = j.at("argv").get<std::vector<std::string>>();
  e.dependencies = j.at("dependencies").get<std::vector<std::string>>();
  e.entry_symbol = j.value("entry_symbol", std::string());
  // Seconds out of range (a forged or corrupt entry) read as unknown: the entry still serves,
  // and no trial copies a time the trial log would refuse.
  e.compile_s.reset();
  if (auto it = j.find("compile_s"); it != j.end() && !it->is_null()) {
    const double s = it->get<double>();
    if (std::isfinite(s) && s >= 0 && s <= max_compile_s) e.compile_s = s;
  }
}

CacheEntryText read_cache_entry(std::string_view text) {
  CacheEntryText out;
  if (json_nesting_problem(text, "")) {
    out.kind = CacheEntryText::Kind::not_json;
    return out;
  }
  const json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    out.kind = CacheEntryText::Kind::not_json;
    return out;
  }
  if (!j.is_object() || !j.contains("schema_version")) {
    out.kind = CacheEntryText::Kind::not_an_entry;
    out.why = j.is_object() ? "no schema_version" : j.type_name();
    return out;
  }
  if (auto dup = duplicate_key_problem(text)) {
    out.why = "not a cache entry: " + dup->second;
    return out;
  }
  const json& version = j["schema_version"];
  if (!version.is_number_integer() || version.get<std::int64_t>() != kernel_cache_schema_version) {
    out.why = fmt::format("not a cache entry of schema {}", kernel_cache_schema_version);
    return out;
  }
  try {
    out.entry = j.get<CacheEntry>();
  } catch (const std::exception& e) {
    out.why = fmt::format("not a cache entry ({})", shorten(one_line(e.what())));
    return out;
  }
  out.kind = CacheEntryText::Kind::entry;
  return out;
}

}  // namespace tune
