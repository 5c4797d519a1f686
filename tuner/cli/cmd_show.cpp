// Placeholder until this subcommand lands.
#include <cstdio>

#include <tuner/cli/commands.hpp>

namespace tune::cli {

void add_show_command(CLI::App& app, Run& run) {
  auto* sub = app.add_subcommand("show", "show a record or a trial log as a table");
  sub->allow_extras();
  sub->callback([&run] {
    run = [] {
      std::fputs("tuner show: error: not implemented yet\n", stderr);
      return exit_bad_input;
    };
  });
}

}  // namespace tune::cli
