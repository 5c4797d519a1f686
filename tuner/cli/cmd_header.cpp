// `tuner header --manifest M --output F [--namespace NS] [--include H]... [--type-param P]...`:
// writes a C++17 header with each architecture's winning config per bucket as constexpr values
// (a string param the space maps to C++ text, `[entry.map.P]`, as that text: a value, or with
// --type-param a type alias; --include names the headers that declare what the text names), a
// `select` from a runtime shape to its bucket built from the buckets' `when` predicates, and a
// dispatch by architecture (tuner/core/record/winners_header.hpp).
//
// Which config ships per architecture and bucket (tuner/core/record/winners.hpp): a fresh record's
// entry; a stale record's entry all the same, with `<record>: warning: ...` lines on stderr
// giving the verification's reasons and a `note:` with the re-tune command (the record test
// still fails); the space's first `require` config, with a warning, when there is no record, no
// entry, or an entry whose config has other params than the space. With neither a usable entry
// nor an incumbent for a bucket it is an error. Nothing is printed on stdout, except with --json:
// {"header", "written", "archs": [{"arch", "record", "record_state", "buckets": [{"bucket",
// "config" (null when none), "source" ("record", "incumbent" or "none"), "fallback" (null,
// "no_record", "no_entry" or "other_params")}]}]}, printed whenever the winners were chosen.
// The header is written only when its text changed, so dependents do not rebuild needlessly.
// --depfile names what the choice read (cli/step_depfile.hpp: the records, the space, the
// manifest, the sources and the headers their keys read, nvcc), so that the build step runs
// again when any changes: after a header edit the record is stale, and the header says so.
// Exit codes: 0 written (or unchanged), 1 a bucket has no winner and no incumbent, 2 bad input
// (manifest, space, an unreadable record, names the header cannot hold), 3 nvcc cannot be run
// or the header cannot be written.
#include <cstdio>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <tuner/cli/cli_checks.hpp>
#include <tuner/cli/commands.hpp>
#include <tuner/cli/kernel_choice.hpp>
#include <tuner/cli/step_depfile.hpp>
#include <tuner/core/base/atomic_file.hpp>
#include <tuner/core/base/json_text.hpp>
#include <tuner/core/record/winners.hpp>
#include <tuner/core/record/winners_header.hpp>

namespace tune::cli {

namespace {

struct HeaderCliOptions {
  std::string manifest;
  std::string output;
  std::string depfile;
  std::string name_space;
  std::vector<std::string> includes;
  std::vector<std::string> type_params;
  bool json = false;
};

// The summary --json prints: what ships per architecture and bucket, and where it comes from.
nlohmann::json header_summary(const WinnersTable& table, const std::string& output, bool written) {
  auto source = [](WinnerSource s) {
    return s == WinnerSource::record      ? "record"
           : s == WinnerSource::incumbent ? "incumbent"
                                          : "none";
  };
  auto fallback = [](const std::optional<FallbackReason>& f) -> nlohmann::json {
    if (!f) return nullptr;
    return *f == FallbackReason::no_record  ? "no_record"
           : *f == FallbackReason::no_entry ? "no_entry"
                                            : "other_params";
  };
  nlohmann::json archs = nlohmann::json::array();
  for (const ArchWinners& a : table.archs) {
    nlohmann::json buckets = nlohmann::json::array();
    for (const BucketWinner& b : a.buckets)
      buckets.push_back({{"bucket", b.bucket},
                         {"config", b.config ? nlohmann::json(b.config->id()) : nullptr},
                         {"source", source(b.source)},
                         {"fallback", fallback(b.fallback)}});
    archs.push_back({{"arch", a.arch},
                     {"record", a.record_label},
                     {"record_state", std::string(to_string(a.record_state))},
                     {"buckets", buckets}});
  }
  return {{"header", output}, {"written", written}, {"archs", archs}};
}

int run_header(const HeaderCliOptions& opt) {
  std::optional<KernelBuild> build = load_build(opt.manifest);
  if (!build) return exit_bad_input;
  // Names first: a space the header cannot hold is refused before any record is read.
  if (std::optional<diagnostic> bad = header_name_problem(*build)) {
    fmt::print(stderr, "tuner header: {}\n", bad->str());
    return exit_bad_input;
  }
  const WinnersTable table = choose_winners(*build);
  for (const WinnerNotice& n : table.notices)
    fmt::print(stderr, "{}\n", n.str());
  if (table.bad_input) {
    fmt::print(stderr, "{}\n", table.bad_input->str());
    return exit_bad_input;
  }
  if (!table.complete()) {
    if (opt.json) fmt::print("{}\n", dump_json(header_summary(table, opt.output, false), 2));
    return exit_negative;
  }
  HeaderMapping mapping;
  mapping.includes = opt.includes;
  mapping.type_params.insert(opt.type_params.begin(), opt.type_params.end());
  result<std::string> text = winners_header(*build, table, opt.name_space, mapping);
  if (!text) {
    fmt::print(stderr, "tuner header: {}\n", text.error().str());
    return exit_bad_input;
  }
  bool written = false;
  try {
    written = write_file_if_changed(opt.output, *text);
  } catch (const std::exception& e) {
    fmt::print(stderr, "tuner header: error: cannot write '{}': {}\n", opt.output, e.what());
    return exit_environment;
  }
  try {
    if (!opt.depfile.empty()) write_step_depfile(opt.depfile, opt.output, record_inputs(*build));
  } catch (const std::exception& e) {
    fmt::print(stderr, "tuner header: error: cannot write the depfile '{}': {}\n", opt.depfile,
               e.what());
    return exit_environment;
  }
  if (opt.json) fmt::print("{}\n", dump_json(header_summary(table, opt.output, written), 2));
  return exit_ok;
}

}  // namespace

void add_header_command(CLI::App& app, Run& run) {
  auto opt = std::make_shared<HeaderCliOptions>();
  auto* sub = app.add_subcommand("header", "write a C++ header with the winning configs");
  sub->add_option("--manifest", opt->manifest, "the kernel's manifest.json")->required();
  sub->add_option("--output", opt->output, "the header to write")->required();
  sub->add_option("--namespace", opt->name_space,
                  "the header's namespace (default: tune_winners::<kernel>)")
      ->check(cxx_namespace());
  sub->add_option("--depfile", opt->depfile,
                  "a Makefile-syntax depfile naming the header and every file the step read");
  sub->add_flag("--json", opt->json,
                "print each architecture's and bucket's shipped config and its origin as JSON");
  sub->add_option("--include", opt->includes,
                  "a header the generated one includes first: it declares what the space's "
                  "[entry.map] text names (repeatable)");
  sub->add_option("--type-param", opt->type_params,
                  "a mapped string param whose C++ text is a type: `using NAME = text;` "
                  "(repeatable; the others are `static constexpr auto NAME = text;`)");
  sub->footer(
      "Exit status: 0 written (or unchanged), 1 a bucket has no winner and no incumbent, 2 bad "
      "usage or input (manifest, space, an unreadable record, names the header cannot hold), 3 "
      "nvcc cannot be run or the header cannot be written.");
  sub->callback([&run, opt] { run = [opt] { return run_header(*opt); }; });
}

}  // namespace tune::cli
