// Placeholder until this subcommand lands.
#include <cstdio>

#include <tuner/cli/commands.hpp>

namespace tune::cli {

void add_verify_command(CLI::App& app, Run& run) {
  auto* sub = app.add_subcommand("verify", "verify a committed record against the current kernel");
  sub->allow_extras();
  sub->callback([&run] {
    run = [] {
      std::fputs("tuner verify: error: not implemented yet\n", stderr);
      return exit_bad_input;
    };
  });
}

}  // namespace tune::cli
