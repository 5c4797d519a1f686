// `tuner shards --manifest M --count N [--arch A] [--json]`: the split of a kernel's tune into N
// shards (tuner/core/scale/shard.hpp), one per architecture and shard: what each `tuner run --shard
// K/N` will measure. With --json, one object `{"include": [...]}` that a GitHub Actions matrix
// takes as it is (`matrix: ${{ fromJSON(...) }}`), each entry with `shard` ("2/4"), `index`,
// `count`, `arch`, `candidates` and `buckets` (docs/scaling.md).
//
// Exit codes: 0 printed, 2 bad usage or input.
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <tuner/cli/commands.hpp>
#include <tuner/cli/kernel_choice.hpp>
#include <tuner/core/base/text.hpp>
#include <tuner/core/scale/shard.hpp>

namespace tune::cli {

namespace {

struct ShardsOptions {
  std::string manifest;
  std::string arch;
  int count = 0;
  bool json = false;
};

int run_shards(const ShardsOptions& opt) {
  std::optional<ChosenKernel> chosen = load_chosen_kernel(opt.manifest, opt.arch);
  if (!chosen) return exit_bad_input;
  const KernelBuild& build = chosen->build;
  const std::vector<std::string>& archs = chosen->archs;
  if (opt.count < 1) {
    fmt::print(stderr, "tuner shards: error: --count must be at least 1, got {}\n", opt.count);
    return exit_bad_input;
  }
  result<ShardPlan> plan = plan_space(build.space, opt.count);
  if (!plan) {
    fmt::print(stderr, "{}\n", plan.error().str());
    return exit_bad_input;
  }
  nlohmann::json include = nlohmann::json::array();
  for (const std::string& arch : archs) {
    for (int k = 1; k <= opt.count; ++k) {
      std::size_t candidates = 0;
      std::vector<std::string> buckets;
      std::vector<std::string> shown;
      for (const ShardSlice& s : plan->shards[static_cast<std::size_t>(k - 1)]) {
        const std::string& name = build.space.buckets()[s.bucket].name;
        candidates += s.end - s.first;
        buckets.push_back(name);
        shown.push_back(fmt::format("'{}' {}..{}", name, s.first + 1, s.end));
      }
      const ShardSpec spec{k, opt.count};
      include.push_back({{"shard", spec.str()},
                         {"index", k},
                         {"count", opt.count},
                         {"arch", arch},
                         {"candidates", candidates},
                         {"buckets", buckets}});
      if (!opt.json)
        fmt::print("{} shard {}: {} candidates{}{}\n", arch, spec.str(), candidates,
                   shown.empty() ? "" : ": ", join(shown, ", "));
    }
  }
  if (opt.json) fmt::print("{}\n", nlohmann::json{{"include", include}}.dump());
  return exit_ok;
}

}  // namespace

void add_shards_command(CLI::App& app, Run& run) {
  auto opt = std::make_shared<ShardsOptions>();
  auto* sub = app.add_subcommand(
      "shards", "list the shards of a kernel's tune split N ways, for a CI matrix or a job array");
  sub->add_option("--manifest", opt->manifest, "the kernel's manifest.json")->required();
  sub->add_option("--count", opt->count, "the number of shards")->required();
  sub->add_option("--arch", opt->arch, "one architecture (default: every one the manifest lists)");
  sub->add_flag("--json", opt->json,
                "print {\"include\": [...]} for a GitHub Actions or GitLab matrix");
  sub->footer("Exit status: 0 printed, 2 bad usage or input.");
  sub->callback([&run, opt] { run = [opt] { return run_shards(*opt); }; });
}

}  // namespace tune::cli
