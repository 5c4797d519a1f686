#include <tuner/cli/step_depfile.hpp>

#include <algorithm>
#include <string>
#include <system_error>

#include <tuner/core/base/atomic_file.hpp>
#include <tuner/core/build/cache_key.hpp>
#include <tuner/core/build/kernel_cache.hpp>

namespace tune::cli {

namespace fs = std::filesystem;

std::vector<fs::path> record_inputs(const KernelBuild& build) {
  const Manifest& m = build.manifest;
  std::vector<fs::path> inputs = {m.path, m.space};
  inputs.insert(inputs.end(), m.sources.begin(), m.sources.end());
  const CacheKeyer keyer(m, build.space);
  for (const KeyedFile& f : keyer.files())
    inputs.push_back(f.path);
  for (const std::string& arch : m.archs)
    if (result<fs::path> r = m.record_path(arch)) inputs.push_back(*r);
  inputs.push_back(m.nvcc);
  inputs.push_back(m.nvcc.parent_path() / "ptxas");
  return inputs;
}

void write_step_depfile(const fs::path& depfile, const fs::path& target,
                        const std::vector<fs::path>& inputs) {
  std::vector<std::string> deps;
  for (const fs::path& p : inputs) {
    std::error_code ec;
    if (p.empty() || !fs::is_regular_file(p, ec)) continue;
    const std::string d = fs::absolute(p, ec).lexically_normal().string();
    if (std::find(deps.begin(), deps.end(), d) == deps.end()) deps.push_back(d);
  }
  std::error_code ec;
  write_file_atomic(depfile,
                    make_depfile(fs::absolute(target, ec).lexically_normal().string(), deps));
}

}  // namespace tune::cli
