// The one way tune writes JSON text. A JSON string holds only UTF-8, but much of what tune
// writes comes from outside: a child's output (the reason of an invalid trial), compiler output
// (a kernel cache entry), file names and the environment (a record's paths, a lock's host).
// nlohmann::json's dump throws on the first invalid byte, which once aborted a whole run on
// every resume; dump_json writes each invalid byte as U+FFFD instead (as valid_utf8 in text.hpp
// does: it is that function), so every writer of outside text goes through here.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include <tuner/core/base/text.hpp>

namespace tune {

/// `j` with every string, keys included, passed through valid_utf8 (for nlohmann::json and
/// nlohmann::ordered_json alike, keeping the order of the latter).
template <class Json>
Json valid_utf8_json(const Json& j) {
  switch (j.type()) {
    case Json::value_t::string:
      return valid_utf8(j.template get_ref<const std::string&>());
    case Json::value_t::array: {
      Json out = Json::array();
      for (const auto& item : j)
        out.push_back(valid_utf8_json(item));
      return out;
    }
    case Json::value_t::object: {
      Json out = Json::object();
      for (auto it = j.begin(); it != j.end(); ++it)
        out[valid_utf8(it.key())] = valid_utf8_json(it.value());
      return out;
    }
    default:
      return j;
  }
}

/// `j` as JSON text (compact for indent -1, else pretty with `indent` spaces), every string
/// written as valid_utf8 of itself. Never throws for invalid text.
template <class Json>
std::string dump_json(const Json& j, int indent = -1) {
  return valid_utf8_json(j).dump(indent);
}

}  // namespace tune
