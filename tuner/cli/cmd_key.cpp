// Placeholder until this subcommand lands.
#include <cstdio>

#include <tuner/cli/commands.hpp>

namespace tune::cli {

void add_key_command(CLI::App& app, Run& run) {
  auto* sub = app.add_subcommand("key", "print a candidate's cache key");
  sub->allow_extras();
  sub->callback([&run] {
    run = [] {
      std::fputs("tuner key: error: not implemented yet\n", stderr);
      return exit_bad_input;
    };
  });
}

}  // namespace tune::cli
