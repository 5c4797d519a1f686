// Placeholder until this subcommand lands.
#include <cstdio>

#include <tuner/cli/commands.hpp>

namespace tune::cli {

void add_record_command(CLI::App& app, Run& run) {
  auto* sub = app.add_subcommand("record", "edit a record without measuring (record set)");
  sub->allow_extras();
  sub->callback([&run] {
    run = [] {
      std::fputs("tuner record: error: not implemented yet\n", stderr);
      return exit_bad_input;
    };
  });
}

}  // namespace tune::cli
