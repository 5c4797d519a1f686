// `tuner space <space.toml> [--bucket NAME] [--json]`: expands a space and lists every config
// of each bucket after pruning, with a count per bucket.
//
// Text form, per bucket: `bucket '<name>': <count> configs`, then one config id per line.
// JSON form: {"kernel", "space_hash", "buckets": [{"name", "count", "space_hash",
// "configs": [{"id", "params"}]}]} where a bucket's space_hash is its pruned-space hash; a space
// with problems (below) has "problems" too, the diagnostics as text.
//
// A space that parses but can never give a record (space_checks.hpp: a bucket that keeps no
// config, a bucket never selected because one before it takes its shape) is listed all the
// same, since looking at it is how its author finds out, and then refused as the configure
// refuses it: each problem on stderr (and in "problems"), exit 2.
#include <cstdio>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <tuner/cli/commands.hpp>
#include <tuner/core/base/json_text.hpp>
#include <tuner/core/space/space.hpp>
#include <tuner/core/space/space_checks.hpp>

namespace tune::cli {

namespace {

struct SpaceOptions {
  std::string file;
  std::string bucket;
  bool json = false;
};

int run_space(const SpaceOptions& opt) {
  auto space = Space::load(opt.file);
  if (!space) {
    fmt::print(stderr, "{}\n", space.error().str());
    return exit_bad_input;
  }
  std::vector<const Bucket*> chosen;
  if (!opt.bucket.empty()) {
    result<const Bucket*> b = space->find_bucket(opt.bucket);
    if (!b) {
      fmt::print(stderr, "{}\n", b.error().str());
      return exit_bad_input;
    }
    chosen.push_back(*b);
  } else {
    for (const auto& b : space->buckets())
      chosen.push_back(&b);
  }

  // Evaluate every bucket before printing, so an evaluation error leaves stdout empty.
  // The limit on a space's configs holds for all its buckets together too: 200 buckets of
  // 100,000 configs each once took 12 GB here.
  std::vector<std::vector<Config>> pruned;
  std::uint64_t total = 0;
  for (const Bucket* b : chosen) {
    auto configs = space->configs(*b);
    if (!configs) {
      fmt::print(stderr, "{}\n", configs.error().str());
      return exit_bad_input;
    }
    total += configs->size();
    if (total > max_space_configs) {
      fmt::print(stderr,
                 "{}: error: the buckets hold more than {} configs together (the limit of a "
                 "space): list one with --bucket, or prune the space\n",
                 opt.file, max_space_configs);
      return exit_bad_input;
    }
    pruned.push_back(std::move(*configs));
  }
  result<std::vector<diagnostic>> problems = space_declaration_problems(*space, "");
  if (!problems) {
    fmt::print(stderr, "{}\n", problems.error().str());
    return exit_bad_input;
  }
  for (const diagnostic& d : *problems)
    fmt::print(stderr, "{}\n", d.str());
  const int status = problems->empty() ? exit_ok : exit_bad_input;

  if (opt.json) {
    using json = nlohmann::ordered_json;
    json out;
    out["kernel"] = space->kernel();
    out["space_hash"] = space->space_hash();
    json buckets = json::array();
    for (std::size_t i = 0; i < chosen.size(); ++i) {
      json configs = json::array();
      for (const Config& c : pruned[i]) {
        json params = json::object();
        for (const auto& [name, value] : c.params())
          params[name] = value.is_int() ? json(value.as_int()) : json(value.as_string());
        configs.push_back({{"id", c.id()}, {"params", std::move(params)}});
      }
      buckets.push_back({{"name", chosen[i]->name},
                         {"count", pruned[i].size()},
                         {"space_hash", Space::pruned_space_hash(pruned[i])},
                         {"configs", std::move(configs)}});
    }
    out["buckets"] = std::move(buckets);
    if (!problems->empty()) {
      json listed = json::array();
      for (const diagnostic& d : *problems)
        listed.push_back(d.str());
      out["problems"] = std::move(listed);
    }
    fmt::print("{}\n", dump_json(out, 2));
    return status;
  }

  for (std::size_t i = 0; i < chosen.size(); ++i) {
    fmt::print("bucket '{}': {} configs\n", chosen[i]->name, pruned[i].size());
    for (const Config& c : pruned[i])
      fmt::print("{}\n", c.id());
  }
  return status;
}

}  // namespace

void add_space_command(CLI::App& app, Run& run) {
  auto opt = std::make_shared<SpaceOptions>();
  auto* sub = app.add_subcommand(
      "space",
      "expand a space and list every config of each bucket after pruning, with a count per "
      "bucket; a space that can never give a record (a bucket that keeps no config, or one "
      "never selected since a bucket before it takes its shape) is listed, then refused as the "
      "configure refuses it");
  sub->add_option("space", opt->file, "the space file (TOML)")->required();
  sub->add_option("--bucket", opt->bucket, "list only this bucket");
  sub->add_flag("--json", opt->json,
                "print one JSON document: {kernel, space_hash, buckets: [{name, count, "
                "space_hash, configs: [{id, params}]}], and, for a space that can never give a "
                "record, problems: [<file:line:col: error: ...>]}");
  sub->footer(
      "Exit status: 0 when the space is usable; 2 on bad usage, a space that does not read, or "
      "one that can never give a record (each problem on stderr, file:line:col, with its fix, "
      "after the listing).");
  sub->callback([&run, opt] { run = [opt] { return run_space(*opt); }; });
}

}  // namespace tune::cli
