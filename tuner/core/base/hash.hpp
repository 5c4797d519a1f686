// Digests used across tune: SHA-256 (OpenSSL) for content and cache keys, 64-bit FNV-1a for the
// pruned-space hash (docs/formats.md "Search space").
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

namespace tune {

/// Lowercase hex SHA-256 of `data`.
std::string sha256_hex(std::string_view data);
/// Lowercase hex SHA-256 of a file's bytes; throws tune::error when it cannot be read.
std::string sha256_file(const std::filesystem::path& path);

/// Incremental SHA-256, for digests over many parts.
class Sha256 {
 public:
  Sha256();
  ~Sha256();
  Sha256(const Sha256&) = delete;
  Sha256& operator=(const Sha256&) = delete;
  void update(std::string_view data);
  /// Feeds the length then the bytes, so that part boundaries cannot be shifted.
  void update_field(std::string_view data);
  std::string hex_digest();

 private:
  void* ctx_;
};

inline constexpr std::uint64_t fnv1a64_offset = 0xcbf29ce484222325ULL;
/// 64-bit FNV-1a continuing from `h`.
std::uint64_t fnv1a64(std::string_view data, std::uint64_t h = fnv1a64_offset);
/// 16 lowercase hex digits.
std::string hex16(std::uint64_t v);

/// Reads a whole file; throws tune::error naming the path when it cannot.
std::string read_file(const std::filesystem::path& path);

}  // namespace tune
