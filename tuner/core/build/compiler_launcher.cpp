#include <tuner/core/build/compiler_launcher.hpp>

#include <cstdlib>
#include <filesystem>

#include <fmt/core.h>

#include <tuner/core/base/result.hpp>
#include <tuner/core/base/text.hpp>
#include <tuner/core/build/manifest.hpp>

namespace tune {

std::vector<std::string> CompilerLauncher::wrap(std::vector<std::string> command) const {
  if (argv.empty()) return command;
  std::vector<std::string> out = argv;
  out.insert(out.end(), std::make_move_iterator(command.begin()),
             std::make_move_iterator(command.end()));
  return out;
}

Captured CompilerLauncher::run(std::vector<std::string> command,
                               const CaptureOptions& options) const {
  try {
    return run_captured(wrap(std::move(command)), options);
  } catch (const error& e) {
    if (argv.empty()) throw;
    throw error(fmt::format("the compiler launcher {}: {}", describe(), e.what()));
  }
}

bool CompilerLauncher::failed_itself(std::string_view first_error) const {
  // Any word that may name a program (`env -u X srun ...` fails as `srun: error: ...`).
  for (const std::string& word : argv) {
    if (word.starts_with("-")) continue;
    const std::string program = std::filesystem::path(word).filename().string();
    if (!program.empty() && first_error.starts_with(program + ":")) return true;
  }
  return false;
}

std::string CompilerLauncher::describe() const {
  return fmt::format("'{}' ({})", printable(one_line(join(argv, " "))), origin);
}

std::vector<std::string> split_launcher(std::string_view text) {
  const bool list = text.find(';') != std::string_view::npos;
  std::vector<std::string> out;
  std::string word;
  for (const char c : text) {
    const bool cut = list ? c == ';' : (c == ' ' || c == '\t' || c == '\n');
    if (!cut) {
      word += c;
    } else if (!word.empty()) {
      out.push_back(std::move(word));
      word.clear();
    }
  }
  if (!word.empty()) out.push_back(std::move(word));
  return out;
}

CompilerLauncher compiler_launcher(const Manifest& manifest) {
  if (const char* env = std::getenv("TUNE_COMPILER_LAUNCHER"); env != nullptr && *env != '\0') {
    if (trim(env) == "off") return {{}, "TUNE_COMPILER_LAUNCHER"};
    return {split_launcher(env), "TUNE_COMPILER_LAUNCHER"};
  }
  return {manifest.compiler_launcher, "CMAKE_CUDA_COMPILER_LAUNCHER"};
}

}  // namespace tune
