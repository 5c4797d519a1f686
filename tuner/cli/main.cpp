// The `tuner` command line: a thin main over tune_core and the subcommands (one file each).
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <exception>
#include <iostream>
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

// Every subcommand of `app` (nested ones are its subcommands' own).
std::vector<CLI::App*> subcommands_of(CLI::App& app) {
  return app.get_subcommands([](CLI::App*) { return true; });
}

std::vector<std::string> names_of(const std::vector<CLI::App*>& apps) {
  std::vector<std::string> names;
  for (const CLI::App* a : apps)
    names.push_back(a->get_name());
  return names;
}

// A word CLI11 refused, said the tune way: the word, the near miss, exit 2. CLI11 alone says
// only "A subcommand is required" for `tuner verfy` and `tuner store pul`, and "--manifest is
// required" for `tuner merge --manifst x`. Returns nullopt when it cannot name the word (the
// error is then said as CLI11 words it, with the tune prefix).
std::optional<int> explain_unknown_word(CLI::App& app, int argc, char** argv) {
  const std::vector<std::string> top = names_of(subcommands_of(app));
  if (argc < 2) return std::nullopt;
  const std::string first = argv[1];
  if (!first.starts_with("-")) {
    CLI::App* sub = nullptr;
    for (CLI::App* s : subcommands_of(app))
      if (s->get_name() == first) sub = s;
    if (sub == nullptr) {
      fmt::print(stderr, "tuner: error: unknown subcommand '{}'{} (the subcommands: {})\n",
                 tune::printable(first), tune::did_you_mean(first, top), tune::join(top));
      return tune::exit_bad_input;
    }
    // A subcommand of a subcommand (`store pull`, `record set`): the next word names it.
    std::string path = first;
    int i = 2;
    while (!subcommands_of(*sub).empty()) {
      const std::vector<std::string> names = names_of(subcommands_of(*sub));
      const std::string word = i < argc ? argv[i] : "";
      CLI::App* next = nullptr;
      for (CLI::App* s : subcommands_of(*sub))
        if (s->get_name() == word) next = s;
      if (next == nullptr) {
        if (word.empty() || word.starts_with("-"))
          fmt::print(stderr, "tuner {}: error: a subcommand is required (the subcommands: {})\n",
                     path, tune::join(names));
        else
          fmt::print(stderr, "tuner {}: error: unknown subcommand '{}'{} (the subcommands: {})\n",
                     path, tune::printable(word), tune::did_you_mean(word, names),
                     tune::join(names));
        return tune::exit_bad_input;
      }
      sub = next;
      path += " " + word;
      ++i;
    }
    const std::vector<std::string> names = option_names(*sub);
    for (; i < argc; ++i) {
      const std::string word = argv[i];
      if (word == "--") break;
      if (!word.starts_with("-") || word == "-") continue;
      const std::string name = word.substr(0, word.find('='));
      if (std::find(names.begin(), names.end(), name) != names.end()) continue;
      if (word.size() > 2 && word[1] != '-' &&
          std::find(names.begin(), names.end(), word.substr(0, 2)) != names.end())
        continue;  // `-ofile`: a short option with its value
      fmt::print(stderr, "tuner {}: error: unknown option '{}'{} (run 'tuner {} --help')\n", path,
                 tune::printable(name), tune::did_you_mean(name, names), path);
      return tune::exit_bad_input;
    }
    return std::nullopt;
  }
  if (first != "--help" && first != "-h" && first != "--version") {
    fmt::print(stderr,
               "tuner: error: unknown option '{}': options follow a subcommand, as in 'tuner "
               "<subcommand> {}' (the subcommands: {})\n",
               tune::printable(first), tune::printable(first), tune::join(top));
    return tune::exit_bad_input;
  }
  return std::nullopt;
}

// `tuner store pull`: the subcommands CLI11 had taken when it stopped.
std::string command_path(CLI::App& app) {
  std::string path = "tuner";
  for (CLI::App* cur = &app; !cur->get_subcommands().empty();) {
    cur = cur->get_subcommands().front();
    path += " " + cur->get_name();
  }
  return path;
}

// The one check of the output a command printed: whatever it wrote to stdout (with fmt::print
// or std::cout) is flushed here, and a write that failed on the way (a full disk, `>
// /dev/full`, a closed pipe) makes the command exit 3 with a message, so that a truncated
// `tuner export > results.json` is never a success.
int with_output_checked(CLI::App& app, int rc) {
  std::cout.flush();
  errno = 0;
  const bool flushed = std::fflush(stdout) == 0;
  const int why = errno;
  if (flushed && !std::ferror(stdout) && std::cout.good()) return rc;
  fmt::print(stderr, "{}: error: cannot write the output to stdout{}{}\n", command_path(app),
             why != 0 ? ": " : "", why != 0 ? std::strerror(why) : "");
  return tune::exit_environment;
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
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    const bool unknown_word = dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr ||
                              dynamic_cast<const CLI::RequiredError*>(&e) != nullptr;
    if (unknown_word)
      if (std::optional<int> rc = explain_unknown_word(app, argc, argv)) return *rc;
    // Any other option error, in the tune form: `tuner shards: error: --count: ...`.
    const std::string path = command_path(app);
    fmt::print(stderr, "{}: error: {} (run '{} --help')\n", path, tune::printable(e.what()), path);
    return tune::exit_bad_input;
  }
  int rc = tune::exit_ok;
  try {
    rc = run ? run() : tune::exit_ok;
  } catch (const tune::input_error& e) {
    fmt::print(stderr, "{}\n", e.what());
    rc = tune::exit_bad_input;
  } catch (const std::exception& e) {
    fmt::print(stderr, "tuner: error: {}\n", e.what());
    rc = tune::exit_environment;
  }
  return with_output_checked(app, rc);
}
