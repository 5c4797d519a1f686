// Placeholder until this subcommand lands.
#include <cstdio>

#include <tuner/cli/commands.hpp>

namespace tune::cli {

void add_warm_command(CLI::App& app, Run& run) {
  auto* sub = app.add_subcommand("warm", "compile candidates into the kernel cache (no GPU)");
  sub->allow_extras();
  sub->callback([&run] {
    run = [] {
      std::fputs("tuner warm: error: not implemented yet\n", stderr);
      return exit_bad_input;
    };
  });
}

}  // namespace tune::cli
