// The `tuner` command line: a thin main over tune_core and the subcommands (one file each).
#include <algorithm>
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include <fmt/core.h>

#include <tuner/cli/commands.hpp>
#include <tuner/core/base/result.hpp>
#include <tuner/core/base/text.hpp>
#include <tuner/core/base/version.hpp>

namespace {

// The names a subcommand's options answer to (`--json`, `-o`).
std::vector<std::string> option_names(const CLI::App& sub) {
  std::vector<std::string> names;
  for (const CLI::Option* o : sub.get_options()) {
    for (const std::string& l : o->get_lnames())
      names.push_back("--" + l);
    for (const std::string& s : o->get_snames())
      names.push_back("-" + s);
  }
  return names;
}

// A word CLI11 refused, said the tune way: the word, the near miss, exit 2. CLI11 alone says
// only "A subcommand is required" for `tuner verfy`. Returns nullopt when it cannot name the
// word (CLI11's own message is printed then).
std::optional<int> explain_unknown_word(CLI::App& app, int argc, char** argv) {
  std::vector<std::string> subcommands;
  for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
    subcommands.push_back(sub->get_name());
  if (argc < 2) return std::nullopt;
  const std::string first = argv[1];
  if (!first.starts_with("-")) {
    const CLI::App* sub = nullptr;
    for (const CLI::App* s : app.get_subcommands([](CLI::App*) { return true; }))
      if (s->get_name() == first) sub = s;
    if (sub == nullptr) {
      fmt::print(stderr, "tuner: error: unknown subcommand '{}'{} (the subcommands: {})\n",
                 tune::printable(first), tune::did_you_mean(first, subcommands),
                 tune::join(subcommands));
      return tune::exit_bad_input;
    }
    const std::vector<std::string> names = option_names(*sub);
    for (int i = 2; i < argc; ++i) {
      const std::string word = argv[i];
      if (word == "--") break;
      if (!word.starts_with("-") || word == "-") continue;
      const std::string name = word.substr(0, word.find('='));
      if (std::find(names.begin(), names.end(), name) != names.end()) continue;
      if (word.size() > 2 && word[1] != '-' &&
          std::find(names.begin(), names.end(), word.substr(0, 2)) != names.end())
        continue;  // `-ofile`: a short option with its value
      fmt::print(stderr, "tuner {}: error: unknown option '{}'{} (run 'tuner {} --help')\n", first,
                 tune::printable(name), tune::did_you_mean(name, names), first);
      return tune::exit_bad_input;
    }
    return std::nullopt;
  }
  if (first != "--help" && first != "-h" && first != "--version") {
    fmt::print(stderr,
               "tuner: error: unknown option '{}': options follow a subcommand, as in 'tuner "
               "<subcommand> {}' (the subcommands: {})\n",
               tune::printable(first), tune::printable(first), tune::join(subcommands));
    return tune::exit_bad_input;
  }
  return std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
  namespace cli = tune::cli;
  CLI::App app{"tuner: autotuning for CUDA C++ kernels", "tuner"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "tuner " + std::string(tune::tuner_version));
  cli::Run run;
  cli::add_space_command(app, run);
  cli::add_exec_command(app, run);
  cli::add_key_command(app, run);
  cli::add_verify_command(app, run);
  cli::add_status_command(app, run);
  cli::add_show_command(app, run);
  cli::add_record_command(app, run);
  cli::add_warm_command(app, run);
  cli::add_tune_command(app, run);
  cli::add_run_command(app, run);
  cli::add_header_command(app, run);
  cli::add_report_command(app, run);
  cli::add_archs_command(app, run);
  cli::add_store_command(app, run);
  cli::add_merge_command(app, run);
  cli::add_shards_command(app, run);
  cli::add_slurm_command(app, run);
  cli::add_export_command(app, run);
  cli::add_embed_command(app, run);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const bool unknown_word =
        dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr ||
        (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr && app.get_subcommands().empty());
    if (unknown_word)
      if (std::optional<int> rc = explain_unknown_word(app, argc, argv)) return *rc;
    int rc = app.exit(e);
    return rc == 0 ? 0 : tune::exit_bad_input;
  }
  try {
    return run ? run() : tune::exit_ok;
  } catch (const tune::input_error& e) {
    fmt::print(stderr, "{}\n", e.what());
    return tune::exit_bad_input;
  } catch (const std::exception& e) {
    fmt::print(stderr, "tuner: error: {}\n", e.what());
    return tune::exit_environment;
  }
}
