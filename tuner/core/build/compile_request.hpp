#pragma once
// The compile of one candidate into the kernel cache, as warm, compile-ahead and `tuner embed`
// ask for it: one request, so that all three compile the same bytes under the same key.

#include <string>
#include <vector>

#include <tuner/core/base/config.hpp>
#include <tuner/core/build/cache_key.hpp>
#include <tuner/core/build/kernel_cache.hpp>
#include <tuner/core/build/manifest.hpp>

namespace tune {

/// The request that compiles `config` for `arch` under `key`: the entry (or its template), the
/// keyed argv, `dependency_names` (the keyer's files, as keyed), and a command that writes the
/// generated params header and template-entry unit before it returns nvcc's argv. `keyer` must
/// outlive the request.
CompileRequest compile_request(const Manifest& manifest, const CacheKeyer& keyer,
                               const Config& config, const std::string& arch, const CacheKey& key,
                               const std::vector<std::string>& dependency_names);

}  // namespace tune
