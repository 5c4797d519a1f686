#include <tuner/core/record/verify.hpp>

#include <tuner/core/build/toolchain.hpp>

namespace tune {

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
  CacheKeyer keyer(build.manifest, build.space);
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

}  // namespace tune
