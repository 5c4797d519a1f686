// `tuner status [--manifest M...] [--build-dir D] [--check] [--json]`: every declared kernel's
// record, one line per kernel and arch: fresh, stale and why, missing, or unreadable.
//
// Without --manifest it reads the manifests of the kernels the last configure declared: the names
// in <D>/tune/kernels.list (D defaults to `build`; cmake/TuneKernel.cmake writes it), so the
// manifest of a kernel since removed from the CMakeLists is not read; a build tree without the
// list (a hand-made one) falls back to every <D>/tune/*/manifest.json. Lines:
//   <kernel>  <arch>  <state>  <record>[: <first reason> (+<n> more)]
// with the record named relative to the project root. --json prints {"kernels": [{"kernel",
// "arch", "record", "state", "errors", "warnings", "retune", "prior"}]}; for a record that is not
// fresh, the line ends with `; a prior for <n> of <m> buckets (<k> configs measured before)` when
// its re-tune would start from earlier logs (docs/search.md "Re-tunes start from what was
// measured"), and "prior" is {"buckets", "of", "configs"} (null for a fresh one).
// A fresh record whose entries were not all measured says so after its name:
// `fresh  records/k.json (pinned, never measured)`, or with several sources their counts,
// `(1 measured, 1 pinned)` (an adopted entry, another machine's median, is never fresh:
// docs/trust.md); in
// --json, "sources" maps each bucket to its entry's source (`measured`, `adopted`, `pinned`;
// null when the record is missing or does not read).
// When a record is stale, a last line names the next step: re-tune, or `tuner record repin`,
// which pins every stale record again to its recorded configs (--json: "repin", that command, or
// null when none is stale).
// Each kernel stands alone: a manifest or space that does not read is reported as that kernel's
// line (state `error`, arch `-`, the manifest and its diagnostic) and the others are still
// checked. Exit codes: 0 (with --check: every record fresh), 1 with --check when any is not,
// 2 bad input (no manifest found, or one that does not read; after every line is printed),
// 3 nvcc cannot be run.
#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <tuner/cli/build_tree.hpp>
#include <tuner/cli/commands.hpp>
#include <tuner/core/base/json_text.hpp>
#include <tuner/core/base/text.hpp>
#include <tuner/core/build/cache_key.hpp>
#include <tuner/core/record/verify.hpp>
#include <tuner/core/tune/kernel_tune.hpp>

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

// The manifests to read: --manifest as given, else those of the declared kernels, else (no
// list) every <D>/tune/*/manifest.json.
std::vector<fs::path> find_manifests(const StatusOptions& opt) {
  std::vector<fs::path> manifests(opt.manifests.begin(), opt.manifests.end());
  if (!manifests.empty()) return manifests;
  return build_tree_manifests(opt.build_dir);
}

// A kernel whose manifest or space does not read: its own line, named by its directory.
Row error_row(const fs::path& manifest, const diagnostic& why, nlohmann::json& out) {
  fmt::print(stderr, "{}\n", why.str());
  std::string kernel = manifest.parent_path().filename().string();
  out["kernels"].push_back({{"kernel", kernel},
                            {"arch", nullptr},
                            {"manifest", manifest.string()},
                            {"state", "error"},
                            {"errors", {why.str()}},
                            {"warnings", nlohmann::json::array()}});
  std::string first = why.message.substr(0, why.message.find('\n'));
  // The file at fault: the space (or record) the diagnostic names, not always the manifest.
  const std::string at = why.path.empty() ? manifest.string() : why.path;
  return Row{kernel, "-", "error", at, ": " + shorten(first, 160)};
}

// The record's entries by source: {bucket: source}, from the fresh record or, for a stale one,
// the file as it reads; null when there is none.
nlohmann::json entry_sources(const Verification& v, const fs::path& record) {
  std::optional<Record> r = v.record;
  if (!r && v.state == RecordState::stale)
    if (result<Record> loaded = Record::load(record)) r = std::move(*loaded);
  if (!r) return nullptr;
  nlohmann::json out = nlohmann::json::object();
  for (const RecordEntry& e : r->entries())
    out[e.bucket] = e.source;
  return out;
}

// Where a fresh record's entries came from, when not all were measured: `pinned, never
// measured`, or the counts (`1 measured, 1 pinned`); else empty. (An adopted entry makes the
// record stale, so a fresh one has measured and pinned entries only.)
std::string sources_note(const nlohmann::json& sources) {
  std::size_t measured = 0, pinned = 0;
  for (const auto& [bucket, source] : sources.items())
    ++(source == "pinned" ? pinned : measured);
  if (pinned == 0) return "";
  if (measured == 0) return "pinned, never measured";
  return fmt::format("{} measured, {} pinned", measured, pinned);
}

int run_status(const StatusOptions& opt) {
  std::vector<fs::path> manifests = find_manifests(opt);
  if (manifests.empty()) {
    fmt::print(stderr,
               "tuner status: error: no manifests in '{}/*/manifest.json': configure the "
               "build with CMake first, or name them with --manifest\n",
               (fs::path(opt.build_dir) / "tune").string());
    return exit_bad_input;
  }
  std::vector<Row> rows;
  nlohmann::json out = {{"kernels", nlohmann::json::array()}};
  bool all_fresh = true;
  bool any_stale = false;
  bool bad_input = false;
  for (const auto& path : manifests) {
    result<KernelBuild> build = load_kernel_build(path);
    if (!build) {
      rows.push_back(error_row(path, build.error(), out));
      bad_input = true;
      continue;
    }
    const Manifest& m = build->manifest;
    for (const auto& arch : m.archs) {
      fs::path record = m.record_path(arch).value();
      // A kernel whose source cannot be read is one error row: the other kernels are listed.
      result<Verification> v = [&]() -> result<Verification> {
        try {
          return verify_kernel_record(*build, arch, record);
        } catch (const input_error& e) {
          return fail(e.diag());
        }
      }();
      if (!v) {
        rows.push_back(error_row(path, v.error(), out));
        bad_input = true;
        continue;
      }
      all_fresh = all_fresh && v->ok();
      any_stale = any_stale || v->state == RecordState::stale;
      const nlohmann::json sources = entry_sources(*v, record);
      Row row{m.kernel, arch, std::string(to_string(v->state)), display_path(m, record), {}};
      if (const std::string note = v->ok() ? sources_note(sources) : ""; !note.empty())
        row.record += " (" + note + ")";
      // A stale record: what changed in words when the build can tell, else the first error.
      const std::vector<std::string>& why =
          v->ok() ? v->warnings : (v->changes.empty() ? v->errors : v->changes);
      if (!why.empty()) {
        row.detail = (v->ok() ? ": warning: " : ": ") + why[0];
        if (why.size() > 1) row.detail += fmt::format(" (+{} more)", why.size() - 1);
      }
      if (v->state == RecordState::missing) row.detail.clear();
      // A re-tune starts from what was measured before, when the logs still hold it.
      nlohmann::json prior = nullptr;
      if (!v->ok()) {
        std::size_t with = 0;
        std::size_t configs = 0;
        for (const Bucket& b : build->space.buckets())
          if (std::optional<Prior> p = available_prior(*build, b, arch)) {
            ++with;
            configs += p->ranked.size();
          }
        if (with > 0)
          row.detail += fmt::format("; a prior for {} of {} buckets ({} configs measured before)",
                                    with, build->space.buckets().size(), configs);
        prior = {{"buckets", with}, {"of", build->space.buckets().size()}, {"configs", configs}};
      }
      rows.push_back(row);
      out["kernels"].push_back({{"kernel", m.kernel},
                                {"arch", arch},
                                {"record", record.string()},
                                {"state", row.state},
                                {"sources", sources},
                                {"errors", v->errors},
                                {"warnings", v->warnings},
                                {"changes", v->changes},
                                {"retune", m.retune_command()},
                                {"pin", v->pin_commands},
                                {"prior", prior}});
    }
  }
  // The next step for stale records without a GPU: one command that pins them all again.
  std::vector<std::string> repin = {"tuner", "record", "repin"};
  if (opt.manifests.empty()) {
    repin.insert(repin.end(), {"--build-dir", opt.build_dir});
  } else {
    for (const std::string& m : opt.manifests)
      repin.insert(repin.end(), {"--manifest", m});
  }
  out["repin"] = any_stale ? nlohmann::json(shell_join(repin)) : nlohmann::json(nullptr);
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
    if (any_stale)
      fmt::print(
          "next: re-tune the stale ones on a GPU (cmake --build <build> --target tune), or pin "
          "every stale record again to the configs it records, without a GPU: {}\n",
          shell_join(repin));
  }
  if (bad_input) return exit_bad_input;
  return opt.check && !all_fresh ? exit_negative : exit_ok;
}

}  // namespace

void add_status_command(CLI::App& app, Run& run) {
  auto opt = std::make_shared<StatusOptions>();
  auto* sub = app.add_subcommand("status", "every declared kernel's record: fresh, stale, missing");
  sub->add_option("--manifest", opt->manifests, "a kernel's manifest.json (repeatable)");
  sub->add_option("--build-dir", opt->build_dir,
                  "every kernel the build tree's last configure declared (<dir>/tune/kernels.list; "
                  "default: build)");
  sub->add_flag("--check", opt->check, "exit 1 when any record is stale, missing or unreadable");
  sub->add_flag("--json", opt->json, "print the states as JSON");
  sub->footer(
      "Exit status: 0 printed (with --check: every record fresh), 1 with --check when any record "
      "is stale, missing or unreadable, 2 bad usage or input (no manifest found, or one that "
      "does not read), 3 nvcc cannot be run.");
  sub->callback([&run, opt] { run = [opt] { return run_status(*opt); }; });
}

}  // namespace tune::cli
