// Internal to tune_core (not installed): the layers tune_bucket (kernel_tune.cpp) wraps around
// the supervisor, each a ForwardingObjective that changes one thing: the trials' compile seconds
// from the cache, one measurement per byte-identical binary, a search without its runoff.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <tuner/core/build/kernel_cache.hpp>
#include <tuner/core/search/autotuner.hpp>

namespace tune::detail {

// The supervisor with each trial's compile seconds, as the candidate's cache entry says.
class WithCompileCost : public ForwardingObjective {
 public:
  WithCompileCost(Objective& inner, const KernelCache& cache, const std::vector<std::string>& keys)
      : ForwardingObjective(inner), cache_(cache), keys_(keys) {}
  Trial measure(std::size_t index) override {
    Trial t = inner_.measure(index);
    if (std::optional<CacheEntry> e = cache_.lookup(keys_.at(index))) t.compile_s = e->compile_s;
    return t;
  }

 private:
  const KernelCache& cache_;
  const std::vector<std::string>& keys_;
};

// One measurement per binary: a candidate whose cubin is byte-identical to one measured in full
// in this bucket (the same SHA-256 in its cache entry: a param that never reaches the kernel)
// shares that trial, marked `same_binary`, and costs no GPU time. Inside the compile pipeline, so
// that the candidate's entry is there when it is asked.
class OnePerBinary : public ForwardingObjective {
 public:
  OnePerBinary(Objective& inner, const KernelCache& cache, const std::vector<std::string>& keys)
      : ForwardingObjective(inner), cache_(cache), keys_(keys) {}
  Trial measure(std::size_t index) override {
    const std::optional<CacheEntry> e = cache_.lookup(keys_.at(index));
    const std::string binary = e && e->valid() ? e->cubin_sha256 : std::string();
    if (auto it = measured_.find(binary); !binary.empty() && it != measured_.end()) {
      Trial t = it->second;
      t.same_binary = t.config.id();
      t.config = Config{};
      t.cache_key.reset();
      t.time.clear();
      t.times.reset();  // nothing ran
      t.compile_s = e->compile_s;
      shared_ += 1;
      return t;
    }
    Trial t = inner_.measure(index);
    if (!binary.empty() && t.is_measured() && !t.rejected_early && !t.adopted()) {
      Trial kept = t;
      kept.config = configs().at(index);
      measured_.emplace(binary, std::move(kept));
    }
    return t;
  }
  /// How many trials shared another config's measurement.
  std::size_t shared() const noexcept { return shared_; }

 private:
  const KernelCache& cache_;
  const std::vector<std::string>& keys_;
  std::map<std::string, Trial> measured_;  // by cubin SHA-256
  std::size_t shared_ = 0;
};

// The supervisor without its runoff: a shard's search leaves the runoff to the merge.
class WithoutRunoff : public ForwardingObjective {
 public:
  using ForwardingObjective::ForwardingObjective;
  std::optional<RunoffPairs> runoff(std::size_t, std::size_t) override { return std::nullopt; }
  bool has_runoff() override { return false; }
};

}  // namespace tune::detail
