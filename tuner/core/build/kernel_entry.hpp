// A kernel's entry as the build sees it: a plain `extern "C"` symbol, or a template expression
// (from tune_add_kernel's ENTRY or the space's `[entry] template`) whose instance warm compiles
// from a small generated unit per candidate (tuner/core/space/entry_template.hpp).
#pragma once

#include <filesystem>
#include <optional>

#include <tuner/core/base/config.hpp>
#include <tuner/core/base/result.hpp>
#include <tuner/core/build/manifest.hpp>
#include <tuner/core/space/entry_template.hpp>

namespace tune {

class Space;

/// The kernel's template entry: the manifest's `entry` when it is a template expression, else
/// the space's `[entry] template`, else nullopt (a plain `extern "C"` entry). Diagnostics name
/// the manifest or the space file; a manifest template and a different space template conflict.
result<std::optional<EntryTemplate>> kernel_entry_template(const Manifest& manifest,
                                                           const Space& space);

/// Where warm writes a config's generated unit: `<log_dir>/entries/<16 hex of the id>.cu`.
std::filesystem::path entry_unit_path(const Manifest& manifest, const Config& config);

}  // namespace tune
