// Fuzz target: Space::parse on arbitrary text. A valid space is also enumerated and pruned per
// bucket (when small), each bucket selected with its own shape, and its hash must not depend
// on how often it is parsed.
//
// Spaces are enumerated eagerly at load, up to max_space_configs (1M configs), which takes
// seconds under the sanitizers: texts whose [params] product exceeds 20000 are skipped, so the
// fuzzer spends its time on parsing rather than on enumerating large valid spaces.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <toml++/toml.h>

#include <tuner/core/space/space.hpp>

#include "fuzz_check.hpp"

namespace {

// The product of the [params] list lengths, as far as TOML++ reads it (0 when it cannot).
std::uint64_t params_product(std::string_view text) {
  try {
    toml::table doc = toml::parse(text);
    const toml::table* params = doc["params"].as_table();
    if (params == nullptr) return 0;
    std::uint64_t product = 1;
    for (const auto& [name, value] : *params)
      if (const toml::array* list = value.as_array()) {
        product *= std::max<std::uint64_t>(list->size(), 1);
        if (product > 1'000'000'000) break;
      }
    return product;
  } catch (const toml::parse_error&) {
    return 0;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (params_product(text) > 20'000) return 0;
  tune::result<tune::Space> space = tune::Space::parse(text, "fuzz.toml");
  if (!space) {
    tune::fuzz::check(!space.error().message.empty(), "a diagnostic without a message");
    return 0;
  }
  tune::result<tune::Space> again = tune::Space::parse(text, "fuzz.toml");
  tune::fuzz::check(again.has_value() && again->space_hash() == space->space_hash(),
                    "parsing the same text twice gave another hash");
  // Pruning evaluates every expression over every config: keep that cheap.
  if (space->all_configs().size() * space->buckets().size() > 20'000) return 0;
  for (const tune::Bucket& bucket : space->buckets()) {
    auto configs = space->configs(bucket);
    if (configs) (void)tune::Space::pruned_space_hash(*configs);
    (void)space->select(bucket.shape);
  }
  return 0;
}
