// `tuner archs [--json]`: the architectures a record may be tuned for.
//
// Prints one architecture per line (`sm_50` ... `sm_121`, by ascending compute capability),
// without the optional `a`/`f` suffix. tune_add_kernel reads this at configure time to check
// ARCH, so the table in tuner/core/build/kernel_cache.cpp is the only list. --json prints
// {"archs": [{"arch", "max_registers_per_thread", "max_shared_per_block", "max_static_shared"}]}
// with the limits a candidate must fit (bytes per block for shared memory).
// Exit codes: 0 printed.
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <tuner/cli/commands.hpp>
#include <tuner/core/base/json_text.hpp>
#include <tuner/core/build/kernel_cache.hpp>

namespace tune::cli {

namespace {

struct ArchsOptions {
  bool json = false;
};

int run_archs(const ArchsOptions& opt) {
  if (!opt.json) {
    for (const std::string& arch : known_archs())
      fmt::print("{}\n", arch);
    return exit_ok;
  }
  nlohmann::json out = {{"archs", nlohmann::json::array()}};
  for (const std::string& arch : known_archs()) {
    const ArchLimits limits = arch_limits(arch).value();
    out["archs"].push_back({{"arch", arch},
                            {"max_registers_per_thread", limits.max_registers_per_thread},
                            {"max_shared_per_block", limits.max_shared_per_block},
                            {"max_static_shared", limits.max_static_shared}});
  }
  fmt::print("{}\n", dump_json(out, 2));
  return exit_ok;
}

}  // namespace

void add_archs_command(CLI::App& app, Run& run) {
  auto opt = std::make_shared<ArchsOptions>();
  auto* sub = app.add_subcommand("archs", "list the architectures a record may be tuned for");
  sub->add_flag("--json", opt->json, "print each architecture with its resource limits as JSON");
  sub->footer("Exit status: 0 printed, 2 bad usage.");
  sub->callback([&run, opt] { run = [opt] { return run_archs(*opt); }; });
}

}  // namespace tune::cli
