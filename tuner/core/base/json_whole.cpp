#include <tuner/core/base/json_whole.hpp>

#include <fmt/core.h>

namespace tune {

std::int64_t json_whole(const nlohmann::json& object, const char* name, std::int64_t lo,
                        std::int64_t hi) {
  const nlohmann::json& v = object.at(name);
  bool ok = false;
  if (v.is_number_unsigned()) {
    const std::uint64_t u = v.get<std::uint64_t>();
    ok = hi >= 0 && u <= static_cast<std::uint64_t>(hi) &&
         (lo <= 0 || u >= static_cast<std::uint64_t>(lo));
  } else if (v.is_number_integer())
    ok = v.get<std::int64_t>() >= lo && v.get<std::int64_t>() <= hi;
  if (!ok)
    throw nlohmann::json::other_error::create(
        501, fmt::format("'{}' must be a whole number from {} to {}", name, lo, hi), &object);
  return v.get<std::int64_t>();
}

}  // namespace tune
