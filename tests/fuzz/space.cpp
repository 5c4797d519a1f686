// Fuzz target: Space::parse on arbitrary text. A valid space is also enumerated and pruned per
// bucket (when small), each bucket selected with its own shape, and its hash must not depend
// on how often it is parsed.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <tuner/core/space.hpp>

#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
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
