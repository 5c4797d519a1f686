#include <tuner/core/build/kernel_build.hpp>

#include <map>
#include <optional>
#include <string>

#include <fmt/core.h>

#include <tuner/core/base/text.hpp>
#include <tuner/core/build/kernel_entry.hpp>

namespace tune {

result<KernelBuild> load_kernel_build(const std::filesystem::path& manifest_path) {
  result<Manifest> m = Manifest::load(manifest_path);
  if (!m) return fail(m.error());
  result<Space> s = Space::load(m->space);
  if (!s) return fail(s.error());
  // A bad template entry is bad input here, before any cache key needs it.
  if (auto t = kernel_entry_template(*m, *s); !t) return fail(t.error());
  return KernelBuild{std::move(*m), std::move(*s)};
}

result<std::vector<std::string>> select_archs(const Manifest& manifest, std::string_view arch) {
  if (arch.empty()) return manifest.archs;
  result<std::filesystem::path> p = manifest.record_path(arch);
  if (!p) return fail(p.error());
  return std::vector<std::string>{std::string(arch)};
}

result<std::string> one_arch(const Manifest& manifest, std::string_view arch) {
  if (!arch.empty()) {
    result<std::filesystem::path> p = manifest.record_path(arch);
    if (!p) return fail(p.error());
    return std::string(arch);
  }
  if (manifest.archs.size() != 1)
    return fail(manifest.path.string(), 0, 0,
                fmt::format("kernel '{}' is declared for several architectures ({}): choose one "
                            "with --arch",
                            manifest.kernel, quoted_list(manifest.archs)));
  return manifest.archs.front();
}

std::string display_path(const Manifest& manifest, const std::filesystem::path& path) {
  std::filesystem::path rel = path.lexically_normal().lexically_relative(manifest.project_root);
  if (rel.empty() || *rel.begin() == "..") return path.string();
  return rel.string();
}

namespace {

// `id` as name -> value text (quotes of a string taken off), or nullopt when it is not a list
// of `name=value` (or names one twice). Values hold no comma (docs/formats.md "Search space").
std::optional<std::map<std::string, std::string, std::less<>>> id_values(std::string_view id) {
  std::map<std::string, std::string, std::less<>> out;
  while (!id.empty()) {
    const std::size_t comma = id.find(',');
    const std::string_view part = id.substr(0, comma);
    id = comma == std::string_view::npos ? std::string_view() : id.substr(comma + 1);
    const std::size_t eq = part.find('=');
    if (eq == std::string_view::npos || eq == 0) return std::nullopt;
    std::string_view value = part.substr(eq + 1);
    if (value.size() >= 2 && value.front() == '"' && value.back() == '"')
      value = value.substr(1, value.size() - 2);
    if (!out.emplace(std::string(part.substr(0, eq)), std::string(value)).second)
      return std::nullopt;
  }
  return out;
}

}  // namespace

const Config* find_config(const std::vector<Config>& configs, std::string_view id) {
  for (const auto& c : configs)
    if (c.id() == id) return &c;
  // The same params in any order, strings quoted or not (the id is a set of name=value pairs).
  const auto wanted = id_values(id);
  if (!wanted) return nullptr;
  for (const auto& c : configs) {
    if (c.params().size() != wanted->size()) continue;
    bool same = true;
    for (const auto& [name, value] : c.params()) {
      auto it = wanted->find(name);
      if (it == wanted->end() || it->second != value.plain()) {
        same = false;
        break;
      }
    }
    if (same) return &c;
  }
  return nullptr;
}

}  // namespace tune
