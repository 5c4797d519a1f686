// Whole numbers out of JSON that came from outside (a store's cache entry, a trial log, a shard
// summary, a worker's answer). nlohmann's get<int>() and get<std::int64_t>() cast whatever number
// is there: a float past the type's range (`"shared_bytes": 2.2e20`) is undefined behaviour, a
// negative count wraps. Every such field is read through json_whole instead.
#pragma once

#include <cstdint>
#include <limits>

#include <nlohmann/json.hpp>

namespace tune {

/// The member `name` of the JSON object `object`: a JSON integer from `lo` to `hi`. Throws
/// nlohmann::json::out_of_range when it is missing, and nlohmann::json::other_error naming the
/// member and the range for a float, a string or a number outside it, so the readers' catch of
/// nlohmann's exceptions words it like their other refusals.
std::int64_t json_whole(const nlohmann::json& object, const char* name, std::int64_t lo,
                        std::int64_t hi = std::numeric_limits<std::int64_t>::max());

}  // namespace tune
