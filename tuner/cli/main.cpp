// The `tuner` command line: a thin main over tune_core and the subcommands (one file each).
#include <cstdio>
#include <exception>

#include <fmt/core.h>

#include <tuner/cli/commands.hpp>
#include <tuner/core/result.hpp>
#include <tuner/core/version.hpp>

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
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
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
