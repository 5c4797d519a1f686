// The one reader of a kernel cache entry's text (kernel_cache.hpp, read_cache_entry): the
// local cache and the remote store read entries alike.
#include <tuner/core/build/kernel_cache.hpp>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <tuner/core/base/json_position.hpp>
#include <tuner/core/base/text.hpp>

namespace tune {

CacheEntryText read_cache_entry(std::string_view text) {
  using nlohmann::json;
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
