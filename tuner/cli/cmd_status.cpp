// Placeholder until this subcommand lands.
#include <cstdio>

#include <tuner/cli/commands.hpp>

namespace tune::cli {

void add_status_command(CLI::App& app, Run& run) {
  auto* sub = app.add_subcommand("status", "fresh / stale / missing for every declared kernel");
  sub->allow_extras();
  sub->callback([&run] {
    run = [] {
      std::fputs("tuner status: error: not implemented yet\n", stderr);
      return exit_bad_input;
    };
  });
}

}  // namespace tune::cli
