#include <tuner/core/build/toolchain.hpp>

#include <cerrno>
#include <map>
#include <mutex>
#include <regex>
#include <string>
#include <system_error>
#include <vector>

#include <unistd.h>

#include <tuner/core/base/result.hpp>
#include <tuner/core/build/manifest.hpp>
#include <tuner/core/process/subprocess.hpp>

extern char** environ;

namespace tune {
namespace {

// Runs `tool --version` with stdout and stderr captured; returns the output. Throws tune::error
// when the tool cannot be started or exits non-zero.
std::string run_version(const std::filesystem::path& tool) {
  CaptureOptions options;
  options.merge_stderr = true;
  Captured c = run_captured({tool.string(), "--version"}, options);
  if (!c.status.success())
    throw error("'" + tool.string() +
                " --version' failed: " + (c.out.empty() ? c.status.describe() : c.out));
  return c.out;
}

std::string tool_version(const std::filesystem::path& tool) {
  std::string out = run_version(tool);
  std::string version = parse_cuda_tool_version(out);
  if (version.empty())
    throw error("'" + tool.string() +
                " --version' printed no version ('release X.Y, VX.Y.Z'): " + out);
  return version;
}

}  // namespace

std::string Toolchain::fingerprint() const {
  return "nvcc " + nvcc + ", ptxas " + ptxas;
}

std::string parse_cuda_tool_version(std::string_view version_text) {
  static const std::regex full(R"(release [0-9]+\.[0-9]+, V([0-9]+(\.[0-9]+)+))");
  static const std::regex release(R"(release ([0-9]+\.[0-9]+))");
  std::string text(version_text);
  std::smatch m;
  if (std::regex_search(text, m, full)) return m[1].str();
  if (std::regex_search(text, m, release)) return m[1].str();
  return {};
}

Toolchain toolchain_fingerprint(const std::filesystem::path& nvcc) {
  static std::mutex mutex;
  static std::map<std::filesystem::path, Toolchain> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(nvcc);
  if (it != cache.end()) return it->second;
  Toolchain t;
  t.nvcc = tool_version(nvcc);
  t.ptxas = tool_version(nvcc.parent_path() / "ptxas");
  cache.emplace(nvcc, t);
  return t;
}

Toolchain manifest_toolchain(const Manifest& manifest) {
  Toolchain t = toolchain_fingerprint(manifest.nvcc);
  t.host_compiler = manifest.host_compiler;
  return t;
}

}  // namespace tune
