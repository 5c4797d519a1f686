// Internal to tune_core (not installed): the random orders of the strategies that draw configs
// (`random`, and `anneal`'s jumps): a seeded permutation drawn lazily, and an open config drawn
// from it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include <tuner/core/search/strategy.hpp>

namespace tune::detail {

/// A random permutation of [0, n), drawn lazily (Fisher-Yates from the front).
class Permutation {
 public:
  Permutation(std::size_t n, std::uint64_t seed) : order_(n), rng_(seed) {
    for (std::size_t i = 0; i < n; ++i)
      order_[i] = i;
  }
  /// The next element, or nullopt at the end.
  std::optional<std::size_t> next() {
    if (drawn_ == order_.size()) return std::nullopt;
    const std::size_t j = drawn_ + rng_.below(order_.size() - drawn_);
    std::swap(order_[drawn_], order_[j]);
    return order_[drawn_++];
  }

 private:
  std::vector<std::size_t> order_;
  std::size_t drawn_ = 0;
  Random rng_;
};

/// An open config of `ledger`: the one withdrawn longest ago, else the next open one of
/// `order`. Every open config is one or the other (a config leaves `order` once drawn, and
/// comes back only through withdraw), so this finds one while any is open.
inline std::optional<std::size_t> draw_open(Ledger& ledger, Permutation& order) {
  if (std::optional<std::size_t> k = ledger.take_withdrawn()) return k;
  while (std::optional<std::size_t> k = order.next())
    if (ledger.open(*k)) return k;
  return std::nullopt;
}

}  // namespace tune::detail
