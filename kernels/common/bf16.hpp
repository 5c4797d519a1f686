// bf16 <-> fp32 conversion on the host, for the GEMM's reference and harness (bf16 operands
// are held on the host as their 16-bit patterns). Host-only C++17; no CUDA header.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

namespace kernels {

/// The fp32 value of bf16 bits (exact: bf16 is the top half of an fp32).
inline float bf16_bits_to_float(std::uint16_t bits) {
  const std::uint32_t word = static_cast<std::uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &word, sizeof f);
  return f;
}

/// The bf16 bits nearest to `f` (round to nearest, ties to even; NaN stays a quiet NaN).
inline std::uint16_t float_to_bf16_bits(float f) {
  std::uint32_t word;
  std::memcpy(&word, &f, sizeof word);
  if (std::isnan(f)) return static_cast<std::uint16_t>((word >> 16) | 0x0040u);
  const std::uint32_t rounding = 0x7fffu + ((word >> 16) & 1u);
  return static_cast<std::uint16_t>((word + rounding) >> 16);
}

}  // namespace kernels
