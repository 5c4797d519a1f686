// Fast random inputs for the kernels' correctness gates. A gate draws fresh inputs for every
// candidate (docs/measurement.md "The correctness gate"), and the GEMM's square bucket needs
// 32 M of them: std::mt19937_64 with a distribution costs about half a second of device-machine
// time per candidate, this splitmix64 stream a few tens of milliseconds. Host-only C++17; no
// CUDA header.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "bf16.hpp"

namespace kernels {

/// splitmix64 (Steele, Lea, Flood 2014): a 64-bit generator with good statistics for test
/// data, seeded by any value.
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }

 private:
  std::uint64_t state_;
};

/// `count` floats uniform in [lo, hi] (24-bit fractions, rounded to fp32), from `seed`.
inline std::vector<float> random_floats(std::uint64_t seed, std::size_t count, float lo, float hi) {
  SplitMix64 gen(seed);
  std::vector<float> out(count);
  const double scale = (static_cast<double>(hi) - lo) / 16777216.0;  // 24-bit fractions
  for (std::size_t i = 0; i < count; i += 2) {
    const std::uint64_t r = gen.next();
    out[i] = static_cast<float>(lo + scale * static_cast<double>(r & 0xffffffu));
    if (i + 1 < count) out[i + 1] = static_cast<float>(lo + scale * static_cast<double>(r >> 40));
  }
  return out;
}

/// `count` bf16 bit patterns of values uniform in [-1, 1) (bf16 has 8 significant bits, so
/// 16-bit fractions are plenty), from `seed`.
inline std::vector<std::uint16_t> random_bf16(std::uint64_t seed, std::size_t count) {
  SplitMix64 gen(seed);
  std::vector<std::uint16_t> out(count);
  for (std::size_t i = 0; i < count; i += 4) {
    std::uint64_t r = gen.next();
    for (std::size_t j = i; j < i + 4 && j < count; ++j, r >>= 16) {
      const float value = static_cast<float>(static_cast<double>(r & 0xffffu) / 32768.0 - 1.0);
      out[j] = float_to_bf16_bits(value);
    }
  }
  return out;
}

}  // namespace kernels
