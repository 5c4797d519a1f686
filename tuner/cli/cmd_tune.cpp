// `tuner tune --manifest M | --build-dir D [--total-budget S]`: what the `tune.<name>` target
// (--manifest) and the `tune` target (--build-dir: every kernel the build tree declares, in the
// order of <D>/tune/kernels.list) run. First the staleness check, with the same verification as
// `tuner verify` and the record tests: a record that verifies for every architecture prints one
// line each and nothing is compiled (the targets do not depend on warm). A stale or missing
// record is reported as the record test reports it (the errors, then the notes: what changed,
// the re-tune and the pin commands) and re-tuned: its candidates are compiled ahead of the
// measuring worker (or `cmake --build <build> --target warm.<kernel>.<arch>` first), then this
// process does what `tuner run --manifest M --arch A --if-stale` does (tuner/cli/cmd_run.cpp):
// it measures every bucket with the kernel's runner as its measuring worker and writes the
// record. When the measuring cannot start (no GPU), a last note names the way back without
// one: `tuner record repin --manifest M`, which pins every stale record to the configs it
// records.
//
// --total-budget S (default: the TUNE_BUDGET_S environment variable; the targets pass the cache
// variable): a wall-clock budget for the whole tune, split across the stale buckets as they
// start (tuner/core/tune/total_budget.hpp); each bucket's share is capped by its own budget.
// --json (with --manifest): every line for people goes to stderr, and stdout gets {"kernel",
// "tuned": [the archs that were stale or missing], "records": [...]} (records_summary,
// tuner/cli/json_summary.hpp) when the tune ends with exit 0 or 1.
// Exit codes: 0 every record fresh (or tuned), 1 a stale record that cannot be tuned (no
// harness), 2 bad usage or input, 3 what tuning needs is missing here (a runner, a GPU), 130/143
// interrupted.
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <tuner/cli/build_tree.hpp>
#include <tuner/cli/cli_checks.hpp>
#include <tuner/cli/commands.hpp>
#include <tuner/cli/json_summary.hpp>
#include <tuner/cli/kernel_choice.hpp>
#include <tuner/core/base/env_number.hpp>
#include <tuner/core/base/hash.hpp>
#include <tuner/core/base/input_limits.hpp>
#include <tuner/core/base/json_text.hpp>
#include <tuner/core/build/compiler_launcher.hpp>
#include <tuner/core/process/stop_signals.hpp>
#include <tuner/core/process/subprocess.hpp>
#include <tuner/core/record/verify.hpp>
#include <tuner/core/search/compile_ahead.hpp>
#include <tuner/core/tune/total_budget.hpp>

namespace tune::cli {
namespace {

namespace fs = std::filesystem;

struct TuneOptions {
  std::string manifest;
  std::string build_dir;
  std::string arch;
  std::string cmake;
  std::string remote;
  bool no_remote_trials = false;
  bool warm_first = false;             // build the warm target first rather than compile ahead
  std::optional<int> compile_jobs;     // at most this many compiles ahead at once
  std::optional<double> total_budget;  // seconds for the whole tune (TUNE_BUDGET_S)
  bool json = false;
};

// `path` relative to the project root when it lies inside it: what people recognise.
std::string shown_path(const fs::path& path, const fs::path& root) {
  const fs::path rel = path.lexically_relative(root);
  if (!rel.empty() && *rel.begin() != "..") return rel.string();
  return path.string();
}

// The HARNESS files the manifest lists (an extension of the manifest that the CMake functions
// write; the runner is built from them).
std::vector<std::string> harness_files(const fs::path& manifest_path) {
  std::vector<std::string> out;
  try {
    const nlohmann::json j = nlohmann::json::parse(read_file(manifest_path));
    if (j.contains("harness") && j["harness"].is_array())
      for (const auto& h : j["harness"])
        if (h.is_string()) out.push_back(h.get<std::string>());
  } catch (const std::exception&) {
    // load_kernel_build already read this file; a harness list it cannot give is no list
  }
  return out;
}

// Runs a child on this terminal; its exit code, or 128 + the signal that ended it.
int attached(const std::vector<std::string>& argv) {
  const ExitStatus s = run_attached(argv);
  return s.signaled ? exit_interrupted(s.signal) : s.code;
}

// The total budget of the whole tune for `buckets` stale buckets, said once.
std::optional<TotalBudget> total_budget(const TuneOptions& opt, std::size_t buckets) {
  if (!opt.total_budget || buckets == 0) return std::nullopt;
  fmt::print(stderr,
             "tune: a total budget of {:g} s for {} stale bucket{}: each gets an equal share of "
             "what is left when it starts, at most its own budget_s\n",
             *opt.total_budget, buckets, buckets == 1 ? "" : "s");
  return TotalBudget(*opt.total_budget, buckets);
}

// The tune of one kernel (the manifest at `manifest_path`); the architectures it found stale go
// to `stale_out`. `budget`: the whole tune's, shared with the other kernels; without one, a
// --total-budget is this kernel's alone.
int run_tune_text(const TuneOptions& opt, const std::string& manifest_path,
                  std::vector<std::string>& stale_out, TotalBudget* budget) {
  std::optional<ChosenKernel> chosen = load_chosen_kernel(manifest_path, opt.arch);
  if (!chosen) return exit_bad_input;
  const KernelBuild& build = chosen->build;
  const Manifest& manifest = build.manifest;
  const std::vector<std::string>& archs = chosen->archs;

  const std::string target = "tune." + manifest.kernel;
  std::vector<std::string> stale;
  bool any_recorded = false;  // a stale record (not a missing one): its configs can be pinned
  for (const std::string& arch : archs) {
    const fs::path record = manifest.record_path(arch).value();
    const std::string label = shown_path(record, manifest.project_root);
    result<Verification> v = verify_kernel_record(build, arch, record);
    if (!v) {
      fmt::print(stderr, "{}\n", v.error().str());
      return exit_bad_input;
    }
    if (v->ok()) {
      fmt::print("{}: record {} is fresh ({}), nothing to do\n", target, label, arch);
      std::fflush(stdout);
      for (const std::string& w : v->warnings)
        fmt::print(stderr, "{}: warning: {}\n", label, w);
      continue;
    }
    fmt::print(stderr, "{}: record {} is {} ({}):\n", target, label, to_string(v->state), arch);
    // As the record test says it: the errors, then what changed, the re-tune and the pins.
    fmt::print(stderr, "{}", v->report(label));
    any_recorded = any_recorded || v->state == RecordState::stale;
    stale.push_back(arch);
  }
  stale_out = stale;
  if (stale.empty()) return exit_ok;

  std::string stale_list;
  for (const std::string& a : stale)
    stale_list += (stale_list.empty() ? "" : " ") + a;
  const std::vector<std::string> harness = harness_files(manifest.path);
  if (harness.empty() && !manifest.runner) {
    fmt::print(stderr,
               "{}: error: cannot tune '{}' for {}: it has no HARNESS to measure it with; add "
               "HARNESS <file> to its tune_add_kernel, or pin a config per bucket with 'tuner "
               "record set --manifest {} --arch <arch> --bucket <name> --config <id>'\n",
               target, manifest.kernel, stale_list, manifest.path.string());
    return exit_negative;
  }
  if (!manifest.runner) {
    fmt::print(stderr,
               "{}: error: cannot tune '{}' for {}: this build has no runner for its harness (the "
               "tune::runner library comes with add_subdirectory(tune) or find_package(Tune)); "
               "pin a config per bucket with 'tuner record set'\n",
               target, manifest.kernel, stale_list);
    return exit_environment;
  }
  // Several GPUs of this host (TUNE_DEVICES): one shard each, then the merge
  // (tuner/cli/tune_devices.cpp).
  result<std::vector<int>> devices = devices_from_env();
  if (!devices) {
    fmt::print(stderr, "{}: error: {}\n", target, devices.error().message);
    return exit_bad_input;
  }
  std::optional<TotalBudget> own_budget;
  if (budget == nullptr) {
    own_budget = total_budget(opt, stale.size() * build.space.buckets().size());
    if (own_budget) budget = &*own_budget;
  }
  if (budget != nullptr && devices->size() > 1)
    fmt::print(stderr,
               "{}: warning: the total budget is not split across several devices "
               "(TUNE_DEVICES): each shard takes its buckets' own budget_s\n",
               target);
  // Without a GPU the way back is to pin the recorded configs again, in one command.
  const auto without_gpu = [&](int rc) {
    if (rc == exit_environment && any_recorded)
      fmt::print(stderr,
                 "{}: note: to make the stale record{} fresh without a GPU, pin {} again to the "
                 "configs {} records: tuner record repin --manifest {}\n",
                 target, stale.size() == 1 ? "" : "s", stale.size() == 1 ? "it" : "them",
                 stale.size() == 1 ? "it" : "each", shell_join({manifest.path.string()}));
    return rc;
  };
  // Warm (compile-only, into the kernel cache), then measure every bucket and write the record.
  // The warm processes learn the store from the environment.
  if (!opt.remote.empty()) ::setenv("TUNE_REMOTE_STORE", opt.remote.c_str(), 1);
  StopSignals stop_signals;  // SIGINT/SIGTERM to this process alone reach cmake and the worker
  for (const std::string& arch : stale) {
    const std::string cmake = opt.cmake.empty() ? "cmake" : opt.cmake;
    int rc = 0;
    // One device: compile ahead of the measuring worker (no warm target). Several: every shard
    // needs every candidate, so warm first.
    const bool compile_ahead = !opt.warm_first && devices->size() <= 1;
    if (compile_ahead) {
      fmt::print(stderr, "{}: compiling '{}' for {} ahead of the measuring worker\n", target,
                 manifest.kernel, arch);
    } else {
      fmt::print(stderr, "{}: warming '{}' for {}\n", target, manifest.kernel, arch);
      std::fflush(stderr);
      std::vector<std::string> warm = {cmake, "--build", manifest.build_dir.string(), "--target",
                                       fmt::format("warm.{}.{}", manifest.kernel, arch)};
      // Through a launcher the compiles may run elsewhere: as many at once as compile-ahead
      // would run, past Ninja's default of this host's cores (the tune_warm pool still caps).
      if (!compiler_launcher(manifest).empty())
        warm.insert(warm.end(), {"--parallel", std::to_string(compile_ahead_jobs(
                                                   opt.compile_jobs, /*launched=*/true))});
      rc = attached(warm);
    }
    if (rc != 0) {
      fmt::print(stderr, "{}: error: warming '{}' for {} failed (exit status {})\n", target,
                 manifest.kernel, arch, rc);
      return rc == 130 || rc == 143 ? rc : exit_environment;
    }
    if (const int sig = StopSignals::received()) return exit_interrupted(sig);
    if (devices->size() > 1) {
      rc = tune_on_devices(build, arch, *devices);
      if (rc != 0) return without_gpu(rc);
      continue;
    }
    RunOptions run;
    run.manifest = manifest.path.string();
    run.arch = arch;
    run.if_stale = true;
    run.remote = opt.remote;
    run.no_remote_trials = opt.no_remote_trials;
    run.compile_ahead = compile_ahead;
    run.compile_jobs = opt.compile_jobs;
    run.total_budget = budget;
    if (!devices->empty()) run.device = devices->front();
    rc = run_kernel(run);
    if (rc != 0) return without_gpu(rc);
  }
  return exit_ok;
}

// Every kernel of a build tree, in the order of its kernels.list, under one total budget: the
// stale buckets of all of them are counted first. Stops at the first kernel that fails, as the
// build stops at the first target that fails.
int run_tune_build(const TuneOptions& opt) {
  const std::optional<std::vector<fs::path>> found =
      some_build_tree_manifests(opt.build_dir, "tuner tune");
  if (!found) return exit_bad_input;
  const std::vector<fs::path>& manifests = *found;
  std::optional<TotalBudget> budget;
  if (opt.total_budget) {
    std::size_t buckets = 0;
    for (const fs::path& m : manifests) {
      std::optional<ChosenKernel> chosen = load_chosen_kernel(m.string(), "");
      if (!chosen) return exit_bad_input;
      std::optional<std::vector<std::string>> stale = stale_archs(chosen->build, chosen->archs);
      if (!stale) return exit_bad_input;
      buckets += stale->size() * chosen->build.space.buckets().size();
    }
    budget = total_budget(opt, buckets);
  }
  for (const fs::path& m : manifests) {
    std::vector<std::string> stale;
    const int rc = run_tune_text(opt, m.string(), stale, budget ? &*budget : nullptr);
    if (rc != exit_ok) return rc;
  }
  return exit_ok;
}

int run_tune(TuneOptions opt) {
  if (opt.manifest.empty() == opt.build_dir.empty()) {
    fmt::print(stderr,
               "tuner tune: error: pass --manifest <kernel's manifest.json> or --build-dir "
               "<build tree> (every kernel it declares)\n");
    return exit_bad_input;
  }
  if (!opt.build_dir.empty() && (opt.json || !opt.arch.empty())) {
    fmt::print(stderr,
               "tuner tune: error: --json and --arch go with --manifest, not --build-dir\n");
    return exit_bad_input;
  }
  if (!opt.total_budget)
    if (std::optional<double> env = env_number("TUNE_BUDGET_S", min_seconds, max_seconds))
      opt.total_budget = *env;
  if (!opt.build_dir.empty()) return run_tune_build(opt);
  std::vector<std::string> stale;
  if (!opt.json) return run_tune_text(opt, opt.manifest, stale, nullptr);
  int status = exit_ok;
  {
    StdoutToStderr quiet(true);
    status = run_tune_text(opt, opt.manifest, stale, nullptr);
  }
  if (status != exit_ok && status != exit_negative) return status;
  result<KernelBuild> build = load_kernel_build(opt.manifest);
  if (!build) return status;
  result<std::vector<std::string>> archs = select_archs(build->manifest, opt.arch);
  if (!archs) return status;
  try {
    fmt::print("{}\n", dump_json(nlohmann::json{{"kernel", build->manifest.kernel},
                                                {"tuned", stale},
                                                {"records", records_summary(*build, *archs)}},
                                 2));
  } catch (const std::exception& e) {
    fmt::print(stderr, "tuner tune: error: {}\n", e.what());
    return exit_environment;
  }
  return status;
}

}  // namespace

void add_tune_command(CLI::App& app, Run& run) {
  auto opt = std::make_shared<TuneOptions>();
  auto* sub = app.add_subcommand(
      "tune",
      "re-tune the kernels whose record is stale or missing: one (--manifest, what the "
      "tune.<name> target runs) or every kernel of a build tree (--build-dir, the tune target); a "
      "fresh record is left alone and nothing is compiled");
  auto* manifest = sub->add_option("--manifest", opt->manifest, "the kernel's manifest.json");
  sub->add_option("--build-dir", opt->build_dir,
                  "every kernel the build tree declares, in the order of <dir>/tune/kernels.list "
                  "(what the tune target runs)")
      ->excludes(manifest);
  sub->add_option("--arch", opt->arch, "one architecture (default: every one the manifest lists)");
  sub->add_option("--cmake", opt->cmake,
                  "the cmake that builds the warm target of a stale record (default: cmake)");
  sub->add_option("--remote", opt->remote,
                  "the remote store for warm and the tune (http(s)://host:port/prefix, a "
                  "directory, or off; default: TUNE_REMOTE_STORE, else the build's)");
  sub->add_flag("--no-remote-trials", opt->no_remote_trials,
                "measure every candidate here rather than adopt the store's trials");
  sub->add_flag("--warm-first", opt->warm_first,
                "build the warm target (every candidate compiled) before measuring; by default "
                "on one device the candidates are compiled on this host's cores ahead of the "
                "measuring worker, overlapping the compiles with the measurements");
  sub->add_option("--compile-jobs", opt->compile_jobs,
                  "at most this many compiles ahead at once (the tune target passes "
                  "TUNE_WARM_JOBS; TUNE_COMPILE_JOBS overrides; default: the cores but one); "
                  "through a compiler launcher this many, even past this host's cores")
      ->check(whole_number(1, max_jobs));
  sub->add_option("--total-budget", opt->total_budget,
                  "wall-clock seconds for the whole tune, split across the stale buckets as they "
                  "start, each share at most the bucket's own budget_s (default: TUNE_BUDGET_S)")
      ->check(seconds(false));
  sub->add_flag("--json", opt->json,
                "print each record's state and winners as JSON on stdout (other lines go to "
                "stderr)");
  sub->footer(
      "Exit status: 0 when every record is fresh or was tuned, 1 when a stale record cannot be "
      "tuned (no harness), 2 for bad usage or input, 3 when tuning needs what this host lacks (a "
      "runner, a GPU), 130/143 interrupted.");
  sub->callback([&run, opt] { run = [opt] { return run_tune(*opt); }; });
}

}  // namespace tune::cli
