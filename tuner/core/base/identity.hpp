// The identity of a kernel's build on one architecture: every input that decides its compiled
// candidates, apart from each config's own param values (docs/manifest.md "Identity"). A trial
// log, a prior, a record and a cache entry carry it, so that each can tell whether it is still
// about this build and, when not, say exactly which input changed:
//   'mylib/tile.cuh' changed; '-lineinfo' is new; toolchain 'nvcc 13.0.88, ...' -> 'nvcc 13.1...'
// The one derivation is CacheKeyer::identity (tuner/core/build/cache_key.hpp), from the same
// inputs as every candidate's cache key; this header holds only the value and its comparison,
// so that the search and the record (which do not include the build area) can compare two.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include <tuner/core/base/result.hpp>

namespace tune {

/// Tag of what the digest is taken over; a change to it makes older identities incomparable.
inline constexpr const char* identity_schema_tag = "tune-identity/1";

/// What decides a kernel's candidates on one architecture.
struct BuildIdentity {
  std::string arch;
  /// The compiler argument vector as keyed (cache_key.hpp), without the config's own part:
  /// the params passed as `-D` are left out, the generated header is `<params.hpp>`.
  std::vector<std::string> argv;
  /// The entry: the `extern "C"` symbol, or the template expression as written.
  std::string entry;
  /// The source and every project header it includes, each with its content's SHA-256, by name.
  std::vector<std::pair<std::string, std::string>> files;
  std::string toolchain;

  /// `i1:<SHA-256 over the fields above>`.
  std::string digest() const;

  friend bool operator==(const BuildIdentity&, const BuildIdentity&) = default;
};

/// `{"arch", "argv", "entry", "files": {name: sha256, ...}, "toolchain"}`.
nlohmann::json to_json(const BuildIdentity& identity);
/// Reads the object to_json writes; a message naming the first field that is missing or of the
/// wrong kind.
result<BuildIdentity> identity_from_json(const nlohmann::json& j);

/// What changed from `was` to `now`, one phrase per input, in a fixed order (toolchain, arch,
/// entry, files, flags): `'kernels/tile.cuh' changed`, `'detail/x.cuh' is newly included`,
/// `'old.cuh' is no longer included`, `'-lineinfo' is new`, `'-DFAST=1' is gone`,
/// `entry 'a' -> 'b'`, `toolchain 'nvcc 13.0.88, ptxas 13.0.88' -> '...'`. Empty when equal.
std::vector<std::string> identity_changes(const BuildIdentity& was, const BuildIdentity& now);

}  // namespace tune
