// `tuner verify --manifest M [--record R] [--arch A] [--allow-toolchain-drift] [--json]`:
// verifies a kernel's committed record(s) exactly as the ctest gate does.
//
// Every arch of the manifest unless --arch names one; --record overrides the record path (one
// arch only). A fresh record prints `<record>: fresh (<kernel> <arch>, <n> entries)` on stdout
// and its warnings on stderr; a stale or missing one prints every reason, what changed in words
// where the build can tell, the command that re-tunes it and the commands that pin a config per
// bucket without a GPU on stderr. --json prints {"records": [{"kernel", "arch", "record",
// "state", "errors", "warnings", "changes", "retune", "pin"}]} on stdout instead.
// Exit codes: 0 every record fresh, 1 any stale or missing, 2 bad input (manifest, space, arch,
// an unreadable record), 3 nvcc cannot be run.
#include <cstdio>
#include <memory>
#include <string>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <tuner/cli/commands.hpp>
#include <tuner/cli/kernel_choice.hpp>
#include <tuner/core/base/json_text.hpp>
#include <tuner/core/record/verify.hpp>

namespace tune::cli {

namespace {

struct VerifyCliOptions {
  std::string manifest;
  std::string record;
  std::string arch;
  bool allow_toolchain_drift = false;
  bool json = false;
};

int run_verify(const VerifyCliOptions& opt) {
  std::optional<ChosenKernel> chosen = load_chosen_kernel(opt.manifest, opt.arch);
  if (!chosen) return exit_bad_input;
  const KernelBuild& build = chosen->build;
  const Manifest& m = build.manifest;
  const std::vector<std::string>& archs = chosen->archs;
  if (!opt.record.empty() && archs.size() != 1) {
    fmt::print(stderr,
               "tuner verify: error: --record names one record, and kernel '{}' declares {} "
               "archs: choose one with --arch\n",
               m.kernel, archs.size());
    return exit_bad_input;
  }
  int rc = exit_ok;
  nlohmann::json out = {{"records", nlohmann::json::array()}};
  for (const auto& arch : archs) {
    std::filesystem::path path =
        opt.record.empty() ? m.record_path(arch).value() : std::filesystem::path(opt.record);
    std::string label = opt.record.empty() ? display_path(m, path) : opt.record;
    result<Verification> v =
        verify_kernel_record(build, arch, path, VerifyOptions{opt.allow_toolchain_drift});
    if (!v) {
      fmt::print(stderr, "{}\n", v.error().str());
      return exit_bad_input;
    }
    if (v->state == RecordState::unreadable)
      rc = exit_bad_input;
    else if (!v->ok() && rc == exit_ok)
      rc = exit_negative;
    if (opt.json) {
      out["records"].push_back({{"kernel", m.kernel},
                                {"arch", arch},
                                {"record", path.string()},
                                {"state", std::string(to_string(v->state))},
                                {"errors", v->errors},
                                {"warnings", v->warnings},
                                {"changes", v->changes},
                                {"retune", m.retune_command()},
                                {"pin", v->pin_commands}});
      continue;
    }
    if (v->state == RecordState::unreadable) {
      const std::string at = v->line > 0 ? fmt::format(":{}:{}", v->line, v->column) : "";
      fmt::print(stderr, "{}{}: error: {}\n", label, at, v->errors.at(0));
      continue;
    }
    fmt::print(stderr, "{}", v->report(label));
    if (v->ok())
      fmt::print("{}: fresh ({} {}, {} {})\n", label, m.kernel, arch, v->record->entries().size(),
                 v->record->entries().size() == 1 ? "entry" : "entries");
  }
  if (opt.json) fmt::print("{}\n", dump_json(out, 2));
  return rc;
}

}  // namespace

void add_verify_command(CLI::App& app, Run& run) {
  auto opt = std::make_shared<VerifyCliOptions>();
  auto* sub = app.add_subcommand("verify", "verify a kernel's committed record(s)");
  sub->add_option("--manifest", opt->manifest, "the kernel's manifest.json")->required();
  sub->add_option("--record", opt->record, "verify this record file instead of the manifest's");
  sub->add_option("--arch", opt->arch, "only this architecture (default: every one declared)");
  sub->add_flag("--allow-toolchain-drift", opt->allow_toolchain_drift,
                "toolchain drift warns instead of failing (cache keys are then not compared)");
  sub->add_flag("--json", opt->json, "print the outcome as JSON");
  sub->footer(
      "Exit status: 0 every record fresh, 1 any stale or missing, 2 bad usage or input "
      "(manifest, space, arch, an unreadable record), 3 nvcc cannot be run.");
  sub->callback([&run, opt] { run = [opt] { return run_verify(*opt); }; });
}

}  // namespace tune::cli
