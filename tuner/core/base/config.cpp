#include <tuner/core/base/config.hpp>

#include <cstdint>
#include <limits>

#include <nlohmann/json.hpp>

namespace tune {

std::string ParamValue::canonical() const {
  if (is_int()) return std::to_string(as_int());
  return nlohmann::json(as_string()).dump();
}

std::string ParamValue::plain() const {
  return is_int() ? std::to_string(as_int()) : as_string();
}

void to_json(nlohmann::json& j, const ParamValue& v) {
  if (v.is_int())
    j = v.as_int();
  else
    j = v.as_string();
}

void from_json(const nlohmann::json& j, ParamValue& v) {
  // nlohmann keeps integers above int64's range as unsigned: those do not fit a param value.
  if (j.is_number_unsigned() &&
      j.get<std::uint64_t>() > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
    throw nlohmann::json::out_of_range::create(406, "param value is beyond the 64-bit range", &j);
  if (j.is_number_integer())
    v = ParamValue(j.get<std::int64_t>());
  else if (j.is_string())
    v = ParamValue(j.get<std::string>());
  else
    throw nlohmann::json::type_error::create(302, "param value must be an integer or a string", &j);
}

std::string Config::id() const {
  std::string out;
  for (const auto& [name, value] : params_) {
    if (!out.empty()) out += ',';
    out += name;
    out += '=';
    out += value.canonical();
  }
  return out;
}

const ParamValue* Config::find(std::string_view name) const {
  auto it = params_.find(name);
  return it == params_.end() ? nullptr : &it->second;
}

std::optional<std::int64_t> Config::int_param(std::string_view name) const {
  const ParamValue* v = find(name);
  if (v == nullptr || !v->is_int()) return std::nullopt;
  return v->as_int();
}

std::optional<std::string> Config::string_param(std::string_view name) const {
  const ParamValue* v = find(name);
  if (v == nullptr || !v->is_string()) return std::nullopt;
  return v->as_string();
}

void to_json(nlohmann::json& j, const Config& c) {
  j = nlohmann::json::object();
  for (const auto& [name, value] : c.params())
    j[name] = value;
}

void from_json(const nlohmann::json& j, Config& c) {
  if (!j.is_object())
    throw nlohmann::json::type_error::create(302, "config params must be an object", &j);
  Config::Map m;
  for (auto it = j.begin(); it != j.end(); ++it)
    m.emplace(it.key(), it.value().get<ParamValue>());
  c = Config(std::move(m));
}

}  // namespace tune
