#include <tuner/core/build/kernel_build.hpp>

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

const Config* find_config(const std::vector<Config>& configs, std::string_view id) {
  for (const auto& c : configs)
    if (c.id() == id) return &c;
  for (const auto& c : configs) {
    std::string plain;
    for (const auto& [name, value] : c.params()) {
      if (!plain.empty()) plain += ',';
      plain += name + "=" + value.plain();
    }
    if (plain == id) return &c;
  }
  return nullptr;
}

}  // namespace tune
