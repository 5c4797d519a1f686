// `tuner shards --manifest M|--build-dir D --count N [--arch A] [--stale-only] [--json]`: the split
// of a kernel's tune (or of every kernel a build tree declares) into N shards
// (tuner/core/scale/shard.hpp), one per architecture and shard: what each `tuner run --shard K/N`
// will measure. Over a build tree each entry also names its `kernels` (those tuned for its
// architecture) and its `buckets` as `<kernel>/<bucket>`. With --json, one object `{"include":
// [...]}` that a GitHub Actions matrix takes as it is (`matrix: ${{ fromJSON(...) }}`), each entry
// with `shard` ("2/4"), `index`, `count`, `arch`, `candidates` and `buckets` (docs/scaling.md).
//
// --stale-only: only the kernels and architectures whose record is stale or missing (verified
// as `tuner verify` does), so that a CI plan job measures nothing that is fresh; when nothing is
// stale the list is empty (`{"include": []}`) and stderr says so.
//
// Exit codes: 0 printed, 2 bad usage or input.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <tuner/cli/build_tree.hpp>
#include <tuner/cli/cli_checks.hpp>
#include <tuner/cli/commands.hpp>
#include <tuner/cli/kernel_choice.hpp>
#include <tuner/core/base/text.hpp>
#include <tuner/core/scale/shard.hpp>

namespace tune::cli {

namespace {

struct ShardsOptions {
  std::string manifest;
  std::string build_dir;
  std::string arch;
  int count = 0;
  bool stale_only = false;
  bool json = false;
};

// One kernel's part of the split: its architectures and each shard's slices.
struct KernelPlan {
  KernelBuild build;
  std::vector<std::string> archs;
  ShardPlan plan;
};

// GitHub Actions runs at most 256 jobs of one matrix; a split wider than that is a typo.

int run_shards(const ShardsOptions& opt) {
  if (opt.manifest.empty() == opt.build_dir.empty()) {
    fmt::print(stderr,
               "tuner shards: error: pass --manifest <kernel's manifest.json> or --build-dir "
               "<build tree> (every kernel it declares)\n");
    return exit_bad_input;
  }
  std::vector<std::filesystem::path> manifests;
  if (!opt.manifest.empty()) {
    manifests.push_back(opt.manifest);
  } else {
    std::optional<std::vector<std::filesystem::path>> found =
        some_build_tree_manifests(opt.build_dir, "tuner shards");
    if (!found) return exit_bad_input;
    manifests = std::move(*found);
  }
  std::vector<KernelPlan> kernels;
  std::vector<std::string> all_archs;  // in the order the kernels name them
  for (const std::filesystem::path& m : manifests) {
    std::optional<KernelBuild> build = load_build(m.string());
    if (!build) return exit_bad_input;
    std::vector<std::string> archs;
    if (opt.build_dir.empty() || opt.arch.empty()) {
      std::optional<std::vector<std::string>> chosen = choose_archs(build->manifest, opt.arch);
      if (!chosen) return exit_bad_input;
      archs = std::move(*chosen);
    } else if (std::find(build->manifest.archs.begin(), build->manifest.archs.end(), opt.arch) !=
               build->manifest.archs.end()) {
      archs = {opt.arch};  // --arch over a build tree: the kernels tuned for it
    }
    if (opt.stale_only) {  // a fresh record needs no tune
      std::optional<std::vector<std::string>> stale = stale_archs(*build, archs);
      if (!stale) return exit_bad_input;
      archs = std::move(*stale);
    }
    result<ShardPlan> plan = plan_space(build->space, opt.count);
    if (!plan) {
      fmt::print(stderr, "{}\n", plan.error().str());
      return exit_bad_input;
    }
    for (const std::string& a : archs)
      if (std::find(all_archs.begin(), all_archs.end(), a) == all_archs.end())
        all_archs.push_back(a);
    kernels.push_back({std::move(*build), std::move(archs), std::move(*plan)});
  }
  if (all_archs.empty() && opt.stale_only) {
    fmt::print(stderr, "tuner shards: every record is fresh: no shard to run\n");
    if (opt.json) fmt::print("{}\n", nlohmann::json{{"include", nlohmann::json::array()}}.dump());
    return exit_ok;
  }
  if (all_archs.empty()) {
    fmt::print(stderr, "tuner shards: error: no kernel of '{}' is tuned for {}\n", opt.build_dir,
               opt.arch);
    return exit_bad_input;
  }
  const bool several = kernels.size() > 1 || !opt.build_dir.empty();
  nlohmann::json include = nlohmann::json::array();
  for (const std::string& arch : all_archs) {
    std::size_t total = 0;
    for (const KernelPlan& kp : kernels)
      if (std::find(kp.archs.begin(), kp.archs.end(), arch) != kp.archs.end())
        for (const auto& shard : kp.plan.shards)
          for (const ShardSlice& s : shard)
            total += s.end - s.first;
    if (static_cast<std::size_t>(opt.count) > total)
      fmt::print(stderr,
                 "tuner shards: warning: {} shards for {} candidate{} on {}: {} of them will "
                 "have nothing to measure; use --count {} or fewer\n",
                 opt.count, total, total == 1 ? "" : "s", arch,
                 static_cast<std::size_t>(opt.count) - total, std::max<std::size_t>(total, 1));
    for (int k = 1; k <= opt.count; ++k) {
      std::size_t candidates = 0;
      std::vector<std::string> buckets;
      std::vector<std::string> names;
      std::vector<std::string> shown;
      for (const KernelPlan& kp : kernels) {
        if (std::find(kp.archs.begin(), kp.archs.end(), arch) == kp.archs.end()) continue;
        names.push_back(kp.build.manifest.kernel);
        for (const ShardSlice& s : kp.plan.shards[static_cast<std::size_t>(k - 1)]) {
          const std::string& name = kp.build.space.buckets()[s.bucket].name;
          const std::string label = several ? kp.build.manifest.kernel + "/" + name : name;
          candidates += s.end - s.first;
          buckets.push_back(label);
          shown.push_back(fmt::format("'{}' {}..{}", label, s.first + 1, s.end));
        }
      }
      const ShardSpec spec{k, opt.count};
      nlohmann::json entry = {{"shard", spec.str()},      {"index", k},
                              {"count", opt.count},       {"arch", arch},
                              {"candidates", candidates}, {"buckets", buckets}};
      if (!opt.build_dir.empty()) entry["kernels"] = names;
      include.push_back(std::move(entry));
      if (!opt.json)
        fmt::print("{} shard {}: {} candidate{}{}{}\n", arch, spec.str(), candidates,
                   candidates == 1 ? "" : "s", shown.empty() ? "" : ": ", join(shown, ", "));
    }
  }
  if (opt.json) fmt::print("{}\n", nlohmann::json{{"include", include}}.dump());
  return exit_ok;
}

}  // namespace

void add_shards_command(CLI::App& app, Run& run) {
  auto opt = std::make_shared<ShardsOptions>();
  auto* sub = app.add_subcommand(
      "shards",
      "list the shards of a tune split N ways (one kernel, or every kernel of a build tree), for "
      "a CI matrix or a job array");
  auto* manifest = sub->add_option("--manifest", opt->manifest, "one kernel's manifest.json");
  sub->add_option("--build-dir", opt->build_dir,
                  "a build tree: every kernel it declares, split together")
      ->excludes(manifest);
  sub->add_option("--count", opt->count,
                  fmt::format("the number of shards, at most {} (the most jobs a CI matrix runs)",
                              max_shards))
      ->required()
      ->check(whole_number(1, max_shards));
  sub->add_option("--arch", opt->arch, "one architecture (default: every one the manifests list)");
  sub->add_flag("--stale-only", opt->stale_only,
                "only the kernels and architectures whose record is stale or missing");
  sub->add_flag("--json", opt->json,
                "print {\"include\": [...]} for a GitHub Actions or GitLab matrix");
  sub->footer("Exit status: 0 printed, 2 bad usage or input.");
  sub->callback([&run, opt] { run = [opt] { return run_shards(*opt); }; });
}

}  // namespace tune::cli
