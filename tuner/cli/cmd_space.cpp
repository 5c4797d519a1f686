// Placeholder until this subcommand lands.
#include <cstdio>

#include <tuner/cli/commands.hpp>

namespace tune::cli {

void add_space_command(CLI::App& app, Run& run) {
  auto* sub = app.add_subcommand("space", "expand and count a space, per bucket");
  sub->allow_extras();
  sub->callback([&run] {
    run = [] {
      std::fputs("tuner space: error: not implemented yet\n", stderr);
      return exit_bad_input;
    };
  });
}

}  // namespace tune::cli
