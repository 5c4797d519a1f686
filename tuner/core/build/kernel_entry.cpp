#include <tuner/core/build/kernel_entry.hpp>

#include <fmt/core.h>

#include <tuner/core/base/hash.hpp>
#include <tuner/core/space/space.hpp>

namespace tune {

result<std::optional<EntryTemplate>> kernel_entry_template(const Manifest& manifest,
                                                           const Space& space) {
  const std::optional<std::string>& declared = space.entry_template();
  if (is_template_entry(manifest.entry)) {
    if (declared && *declared != manifest.entry)
      return fail(manifest.path.string(), 0, 0,
                  fmt::format("the entry '{}' given to tune_add_kernel differs from the template "
                              "'{}' of the space {}: declare it in one place",
                              manifest.entry, *declared, space.path()));
    result<EntryTemplate> t = parse_entry_template(manifest.entry, space);
    if (!t) return fail(manifest.path.string(), 0, 0, fmt::format("ENTRY: {}", t.error().message));
    return std::optional<EntryTemplate>(std::move(*t));
  }
  if (!declared) return std::optional<EntryTemplate>();
  result<EntryTemplate> t = parse_entry_template(*declared, space);
  if (!t) {
    const SourcePos pos = space.entry_template_pos();
    return fail(space.path(), pos.line, pos.column, t.error().message);
  }
  return std::optional<EntryTemplate>(std::move(*t));
}

std::filesystem::path entry_unit_path(const Manifest& manifest, const Config& config) {
  return manifest.log_dir / "entries" / (hex16(fnv1a64(config.id())) + ".cu");
}

}  // namespace tune
