// `tuner status [--manifest M...] [--build-dir D] [--check] [--json]`: every declared kernel's
// record, one line per kernel and arch: fresh, stale and why, missing, or unreadable.
//
// Without --manifest it reads every <D>/tune/*/manifest.json (D defaults to `build`). Lines:
//   <kernel>  <arch>  <state>  <record>[: <first reason> (+<n> more)]
// with the record named relative to the project root. --json prints {"kernels": [{"kernel",
// "arch", "record", "state", "errors", "warnings", "retune"}]}.
// Exit codes: 0 (with --check: every record fresh), 1 with --check when any is not, 2 bad input
// (no manifest found, a manifest or space that does not read), 3 nvcc cannot be run.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <tuner/cli/commands.hpp>
#include <tuner/core/json_text.hpp>
#include <tuner/core/verify.hpp>

namespace tune::cli {

namespace {

namespace fs = std::filesystem;

struct StatusOptions {
  std::vector<std::string> manifests;
  std::string build_dir = "build";
  bool check = false;
  bool json = false;
};

struct Row {
  std::string kernel, arch, state, record, detail;
};

int run_status(const StatusOptions& opt) {
  std::vector<fs::path> manifests(opt.manifests.begin(), opt.manifests.end());
  if (manifests.empty()) {
    std::error_code ec;
    fs::path tune_dir = fs::path(opt.build_dir) / "tune";
    for (fs::directory_iterator it(tune_dir, ec), end; !ec && it != end; it.increment(ec)) {
      fs::path m = it->path() / "manifest.json";
      if (fs::is_regular_file(m)) manifests.push_back(m);
    }
    std::sort(manifests.begin(), manifests.end());
    if (manifests.empty()) {
      fmt::print(stderr,
                 "tuner status: error: no manifests in '{}/*/manifest.json': configure the "
                 "build with CMake first, or name them with --manifest\n",
                 tune_dir.string());
      return exit_bad_input;
    }
  }
  std::vector<Row> rows;
  nlohmann::json out = {{"kernels", nlohmann::json::array()}};
  bool all_fresh = true;
  for (const auto& path : manifests) {
    result<KernelBuild> build = load_kernel_build(path);
    if (!build) {
      fmt::print(stderr, "{}\n", build.error().str());
      return exit_bad_input;
    }
    const Manifest& m = build->manifest;
    for (const auto& arch : m.archs) {
      fs::path record = m.record_path(arch).value();
      result<Verification> v = verify_kernel_record(*build, arch, record);
      if (!v) {
        fmt::print(stderr, "{}\n", v.error().str());
        return exit_bad_input;
      }
      all_fresh = all_fresh && v->ok();
      Row row{m.kernel, arch, std::string(to_string(v->state)), display_path(m, record), {}};
      const std::vector<std::string>& why = v->ok() ? v->warnings : v->errors;
      if (!why.empty()) {
        row.detail = (v->ok() ? ": warning: " : ": ") + why[0];
        if (why.size() > 1) row.detail += fmt::format(" (+{} more)", why.size() - 1);
      }
      if (v->state == RecordState::missing) row.detail.clear();
      rows.push_back(row);
      out["kernels"].push_back({{"kernel", m.kernel},
                                {"arch", arch},
                                {"record", record.string()},
                                {"state", row.state},
                                {"errors", v->errors},
                                {"warnings", v->warnings},
                                {"retune", m.retune_command()}});
    }
  }
  if (opt.json) {
    fmt::print("{}\n", dump_json(out, 2));
  } else {
    std::size_t wk = 0, wa = 0, ws = 0;
    for (const auto& r : rows) {
      wk = std::max(wk, r.kernel.size());
      wa = std::max(wa, r.arch.size());
      ws = std::max(ws, r.state.size());
    }
    for (const auto& r : rows)
      fmt::print("{:<{}}  {:<{}}  {:<{}}  {}{}\n", r.kernel, wk, r.arch, wa, r.state, ws, r.record,
                 r.detail);
  }
  return opt.check && !all_fresh ? exit_negative : exit_ok;
}

}  // namespace

void add_status_command(CLI::App& app, Run& run) {
  auto opt = std::make_shared<StatusOptions>();
  auto* sub = app.add_subcommand("status", "every declared kernel's record: fresh, stale, missing");
  sub->add_option("--manifest", opt->manifests, "a kernel's manifest.json (repeatable)");
  sub->add_option("--build-dir", opt->build_dir,
                  "read every <dir>/tune/*/manifest.json (default: build)");
  sub->add_flag("--check", opt->check, "exit 1 when any record is stale, missing or unreadable");
  sub->add_flag("--json", opt->json, "print the states as JSON");
  sub->callback([&run, opt] { run = [opt] { return run_status(*opt); }; });
}

}  // namespace tune::cli
