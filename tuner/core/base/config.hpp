// A config is one point of a search space: named int or string params. Its id is canonical
// (sorted keys, ints in decimal, strings JSON-quoted) so no two configs alias:
// `A=1` and `A="1"` differ, and a string holding `,` or `=` cannot pose as two params.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include <nlohmann/json_fwd.hpp>

namespace tune {

/// An int or a string param value (the only two kinds a space may declare).
class ParamValue {
 public:
  ParamValue() : v_(std::int64_t{0}) {}
  ParamValue(std::int64_t i) : v_(i) {}
  ParamValue(int i) : v_(std::int64_t{i}) {}
  ParamValue(std::string s) : v_(std::move(s)) {}
  ParamValue(const char* s) : v_(std::string(s)) {}

  bool is_int() const noexcept { return v_.index() == 0; }
  bool is_string() const noexcept { return v_.index() == 1; }
  /// Precondition: is_int() / is_string().
  std::int64_t as_int() const { return std::get<0>(v_); }
  const std::string& as_string() const { return std::get<1>(v_); }

  /// Canonical text: ints in decimal, strings JSON-quoted (`"row"`).
  std::string canonical() const;
  /// Plain text: ints in decimal, strings as they are (`row`), as passed to `-D`.
  std::string plain() const;

  friend bool operator==(const ParamValue&, const ParamValue&) = default;
  friend auto operator<=>(const ParamValue&, const ParamValue&) = default;

 private:
  std::variant<std::int64_t, std::string> v_;
};

void to_json(nlohmann::json& j, const ParamValue& v);
void from_json(const nlohmann::json& j, ParamValue& v);

/// One point of a space: a sorted map from param name to value.
class Config {
 public:
  using Map = std::map<std::string, ParamValue, std::less<>>;

  Config() = default;
  explicit Config(Map params) : params_(std::move(params)) {}
  Config(std::initializer_list<std::pair<const std::string, ParamValue>> init) : params_(init) {}

  /// `name=value` pairs in sorted key order joined by `,` (values canonical).
  std::string id() const;

  const Map& params() const noexcept { return params_; }
  void set(std::string name, ParamValue value) { params_[std::move(name)] = std::move(value); }
  const ParamValue* find(std::string_view name) const;
  std::optional<std::int64_t> int_param(std::string_view name) const;
  std::optional<std::string> string_param(std::string_view name) const;
  bool empty() const noexcept { return params_.empty(); }
  std::size_t size() const noexcept { return params_.size(); }

  friend bool operator==(const Config&, const Config&) = default;
  friend auto operator<=>(const Config& a, const Config& b) { return a.params_ <=> b.params_; }

 private:
  Map params_;
};

/// `{"A": 1, "B": "row"}`; from_json throws nlohmann::json exceptions on other value kinds.
void to_json(nlohmann::json& j, const Config& c);
void from_json(const nlohmann::json& j, Config& c);

}  // namespace tune
