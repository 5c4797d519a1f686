#include <tuner/core/toolchain.hpp>

#include <cerrno>
#include <map>
#include <mutex>
#include <regex>
#include <string>
#include <system_error>
#include <vector>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <tuner/core/manifest.hpp>
#include <tuner/core/result.hpp>

extern char** environ;

namespace tune {
namespace {

// Runs `tool --version` with stdout and stderr captured; returns the output. Throws tune::error
// when the tool cannot be started or exits non-zero.
std::string run_version(const std::filesystem::path& tool) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0)
    throw error("cannot create a pipe: " + std::generic_category().message(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  std::string program = tool.string();
  std::string flag = "--version";
  std::vector<char*> argv{program.data(), flag.data(), nullptr};
  pid_t pid = 0;
  int rc = ::posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    throw error("cannot run '" + program + " --version': " + std::generic_category().message(rc));
  }
  std::string out;
  char buf[4096];
  for (;;) {
    ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw error("'" + program + " --version' failed: " + out);
  return out;
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
