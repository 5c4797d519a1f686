#include <tuner/cli/commands.hpp>

namespace tune::cli {

void add_space_command(CLI::App& app, Run& run) {
  auto* sub = app.add_subcommand("space", "expand and count a space, per bucket");
  sub->callback([&run] { run = [] { return exit_bad_input; }; });
}

}  // namespace tune::cli
