#include <tuner/core/verify.hpp>

#include <tuner/core/toolchain.hpp>

namespace tune {

result<KernelBuild> load_kernel_build(const std::filesystem::path& manifest_path) {
  result<Manifest> m = Manifest::load(manifest_path);
  if (!m) return fail(m.error());
  result<Space> s = Space::load(m->space);
  if (!s) return fail(s.error());
  return KernelBuild{std::move(*m), std::move(*s)};
}

result<std::vector<std::string>> select_archs(const Manifest& manifest, std::string_view arch) {
  if (arch.empty()) return manifest.archs;
  result<std::filesystem::path> p = manifest.record_path(arch);
  if (!p) return fail(p.error());
  return std::vector<std::string>{std::string(arch)};
}

result<Workspace> current_workspace(const Manifest& manifest, const Space& space,
                                    std::string_view arch, const std::string& toolchain) {
  Workspace w;
  w.kernel = manifest.kernel;
  w.arch = std::string(arch);
  w.source_hash = source_hash(manifest);
  w.space_hash = space.space_hash();
  w.toolchain = toolchain;
  if (!manifest.host_compiler.empty()) w.context.host_compiler = manifest.host_compiler;
  w.retune_command = manifest.retune_command();
  for (const auto& b : space.buckets()) {
    result<std::vector<Config>> configs = space.configs(b);
    if (!configs) return fail(configs.error());
    Workspace::Bucket wb;
    wb.name = b.name;
    wb.pruned_space_hash = Space::pruned_space_hash(*configs);
    for (const auto& c : *configs)
      wb.config_ids.push_back(c.id());
    w.buckets.push_back(std::move(wb));
  }
  return w;
}

namespace {

// The workspace of `arch` and a key recomputation for it, handed to `check`.
template <typename Check>
result<Verification> with_workspace(const KernelBuild& build, std::string_view arch,
                                    Check&& check) {
  CacheKeyer keyer(build.manifest, build.space.params_as());
  result<Workspace> w = current_workspace(build.manifest, build.space, arch, keyer.toolchain());
  if (!w) return fail(w.error());
  std::string a(arch);
  RecomputeKey recompute = [&](const RecordEntry& e) {
    CacheKey k = keyer.key(e.config, a);
    return L2Key{k.schema, k.digest};
  };
  return check(*w, recompute);
}

}  // namespace

result<Verification> verify_kernel_record(const KernelBuild& build, std::string_view arch,
                                          const std::filesystem::path& record_path,
                                          const VerifyOptions& options) {
  return with_workspace(build, arch, [&](const Workspace& w, const RecomputeKey& recompute) {
    return load_verified(record_path, w, recompute, options);
  });
}

result<Verification> verify_kernel_record(const KernelBuild& build, std::string_view arch,
                                          Record record, const VerifyOptions& options) {
  return with_workspace(build, arch, [&](const Workspace& w, const RecomputeKey& recompute) {
    return verify_record(std::move(record), w, recompute, options);
  });
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
