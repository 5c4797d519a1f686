#include <tuner/cli/build_tree.hpp>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <fstream>

#include <fmt/core.h>

#include <tuner/core/base/safe_file.hpp>
#include <tuner/core/base/text.hpp>

namespace tune::cli {

namespace fs = std::filesystem;

std::optional<std::vector<std::string>> declared_kernels(const fs::path& tune_dir) {
  // A FIFO there would block the read (and `status`, the CI gate, with it): the list is only
  // read when it is a regular file, else the manifests are found without it.
  const fs::path list = tune_dir / "kernels.list";
  std::error_code ec;
  if (not_regular_problem(list) || !fs::is_regular_file(list, ec)) return std::nullopt;
  std::ifstream in(list);
  if (!in) return std::nullopt;
  std::vector<std::string> names;
  std::string line;
  while (std::getline(in, line)) {
    line = std::string(trim(line));
    bool ok = !line.empty() && line[0] != '.' && line.size() <= 255;
    for (char c : line)
      ok = ok &&
           (std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '.' || c == '-');
    // A name listed twice is one kernel (it doubled its candidates in `tuner shards`).
    if (ok && std::find(names.begin(), names.end(), line) == names.end()) names.push_back(line);
  }
  return names;
}

std::vector<fs::path> build_tree_manifests(const fs::path& build_dir) {
  std::vector<fs::path> manifests;
  const fs::path tune_dir = build_dir / "tune";
  if (auto names = declared_kernels(tune_dir)) {
    for (const auto& name : *names)
      manifests.push_back(tune_dir / name / "manifest.json");
    return manifests;
  }
  std::error_code ec;
  for (fs::directory_iterator it(tune_dir, ec), end; !ec && it != end; it.increment(ec)) {
    fs::path m = it->path() / "manifest.json";
    if (fs::is_regular_file(m, ec)) manifests.push_back(m);
  }
  std::sort(manifests.begin(), manifests.end());
  return manifests;
}

std::optional<std::vector<fs::path>> some_build_tree_manifests(const std::string& build_dir,
                                                               const char* command) {
  std::vector<fs::path> manifests = build_tree_manifests(build_dir);
  if (!manifests.empty()) return manifests;
  fmt::print(stderr,
             "{}: error: no kernel in the build tree '{}' (no {}/tune/kernels.list or manifest): "
             "configure it with CMake first\n",
             command, build_dir, build_dir);
  return std::nullopt;
}

}  // namespace tune::cli
