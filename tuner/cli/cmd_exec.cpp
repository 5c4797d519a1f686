// Placeholder until this subcommand lands.
#include <cstdio>

#include <tuner/cli/commands.hpp>

namespace tune::cli {

void add_exec_command(CLI::App& app, Run& run) {
  auto* sub = app.add_subcommand("exec", "tune a whole command: run it once per config and read its time");
  sub->allow_extras();
  sub->callback([&run] {
    run = [] {
      std::fputs("tuner exec: error: not implemented yet\n", stderr);
      return exit_bad_input;
    };
  });
}

}  // namespace tune::cli
