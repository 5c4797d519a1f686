// `tuner key --manifest M --config ID [--arch A] [--explain] [--json]`: a candidate's cache key.
//
// Prints the digest on one line (one line per architecture, each naming it, for a kernel of
// several when --arch names none). --explain then lists every input that went into it, in digest
// order: the key schema, the keyed nvcc argument vector, the generated params header (with
// params_as = "constexpr"), each file with its name and SHA-256, and the toolchain. --json prints
// {"schema", "digest", "inputs": [{"name", "value"}], "dependencies": [absolute paths]} (for
// several architectures, {"keys": [one such object per arch]}).
// Exit codes: 0 printed, 2 bad input (manifest, space, arch or config), 3 nvcc cannot be run.
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <tuner/cli/commands.hpp>
#include <tuner/cli/kernel_choice.hpp>
#include <tuner/core/base/json_text.hpp>
#include <tuner/core/build/cache_key.hpp>
#include <tuner/core/build/kernel_build.hpp>

namespace tune::cli {

namespace {

struct KeyOptions {
  std::string manifest;
  std::string config;
  std::string arch;
  bool explain = false;
  bool json = false;
};

void print_explained(const CacheKey& key, const Config& config, const std::string& arch) {
  fmt::print("inputs of cache key {}:{} (config {}, {}):\n", key.schema, key.digest, config.id(),
             arch);
  for (const auto& [name, value] : key.inputs) {
    if (name == "params_header" || name == "entry_unit") {
      fmt::print("  {:<14}\n", name);
      std::size_t pos = 0;
      while (pos < value.size()) {
        std::size_t end = value.find('\n', pos);
        if (end == std::string::npos) end = value.size();
        fmt::print("    {}\n", value.substr(pos, end - pos));
        pos = end + 1;
      }
    } else {
      fmt::print("  {:<14}{}\n", name, value);
    }
  }
}

nlohmann::json key_json(const CacheKey& key, const Config& config, const std::string& arch) {
  nlohmann::json j;
  j["schema"] = key.schema;
  j["digest"] = key.digest;
  j["config_id"] = config.id();
  j["arch"] = arch;
  j["inputs"] = nlohmann::json::array();
  for (const auto& [name, value] : key.inputs)
    j["inputs"].push_back({{"name", name}, {"value", value}});
  j["dependencies"] = nlohmann::json::array();
  for (const auto& d : key.dependencies)
    j["dependencies"].push_back(d.string());
  return j;
}

// One key per architecture: --arch, else every one the kernel declares. With several, each
// digest line names its arch (`<digest>  sm_80`) and --json prints {"keys": [...]}.
int run_key(const KeyOptions& opt) {
  std::optional<ChosenKernel> chosen =
      load_chosen_kernel(opt.manifest, opt.arch, ArchChoice::every);
  if (!chosen) return exit_bad_input;
  const KernelBuild& build = chosen->build;
  const Manifest& m = build.manifest;
  const Config* config = find_config(build.space.all_configs(), opt.config);
  if (config == nullptr) {
    fmt::print(stderr, "tuner key: error: config '{}' is not in the space '{}'\n", opt.config,
               m.space.string());
    return exit_bad_input;
  }
  CacheKeyer keyer(m, build.space);
  const bool several = chosen->archs.size() > 1;
  nlohmann::json keys = nlohmann::json::array();
  for (const std::string& arch : chosen->archs) {
    const CacheKey key = keyer.key(*config, arch);
    if (opt.json) {
      keys.push_back(key_json(key, *config, arch));
      continue;
    }
    fmt::print("{}{}\n", key.digest, several ? "  " + arch : "");
    if (opt.explain) print_explained(key, *config, arch);
  }
  if (opt.json)
    fmt::print("{}\n", dump_json(several ? nlohmann::json{{"keys", keys}} : keys[0], 2));
  return exit_ok;
}

}  // namespace

void add_key_command(CLI::App& app, Run& run) {
  auto opt = std::make_shared<KeyOptions>();
  auto* sub = app.add_subcommand("key", "print a candidate's cache key (--explain: its inputs)");
  sub->add_option("--manifest", opt->manifest, "the kernel's manifest.json")->required();
  sub->add_option("--config", opt->config,
                  "the config id, e.g. BM=64,LAYOUT=\"row\" (strings may be unquoted)")
      ->required();
  sub->add_option("--arch", opt->arch,
                  "the architecture (default: every one the manifest declares)");
  sub->add_flag("--explain", opt->explain, "list every input that went into the key");
  sub->add_flag("--json", opt->json, "print the key and its inputs as JSON");
  sub->footer(
      "Exit status: 0 printed, 2 bad usage or input (manifest, space, arch or config), 3 nvcc "
      "cannot be run.");
  sub->callback([&run, opt] { run = [opt] { return run_key(*opt); }; });
}

}  // namespace tune::cli
