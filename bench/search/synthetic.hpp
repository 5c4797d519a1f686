// The synthetic space of bench_search --speed and --overlap (defined in speed.cpp): A, B, C in
// 0..9, D in 0..4, E in {"plain", "ldg"}: 10,000 configs, and its landscape in log time.
#pragma once

#include <optional>
#include <vector>

#include <tuner/core/base/config.hpp>

namespace tune::bench {

/// The 10,000 configs, in enumeration order.
std::vector<Config> synthetic_space();
/// A config's log time: a tilted bowl with an interaction and some roughness; nullopt (invalid)
/// where A + B + C > 22 (3.5% of the space).
std::optional<double> synthetic_value(const Config& config);

}  // namespace tune::bench
