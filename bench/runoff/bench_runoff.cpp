// The paired runoff benchmark (issue 8), on the device. The tie margin and significance level
// are RunoffPolicy's defaults (tuner/core/search/runoff.hpp: margin 1%, sign test alpha 0.05),
// fixed before the run and printed with the table.
//
//   (1) one config against itself, N runoffs: how many are ties (target >= 19 of 20);
//   (2) a variant with EXTRA% more work as the incumbent against the base as the challenger,
//       N runoffs: how many the faster base wins (target 20 of 20 at 3%);
//   (3) the same pair by sequential medians (two separate benches, order alternating) against
//       the runoff: how often each picks the truly faster (the base).
//
// Usage: bench_runoff [--device N] [--runs 20] [--cubin-dir DIR]
// The kernels (kernels.cu) are compiled to cubins at build time: EXTRA = 0, 1 and 3.
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include <tuner/core/search/runoff.hpp>
#include <tuner/cuda/bench.hpp>
#include <tuner/cuda/harness.hpp>
#include <tuner/cuda/module.hpp>

namespace {

struct Arm {
  std::string name;
  tune::Launch launch;
};

struct Tally {
  int ties = 0;
  int challenger_wins = 0;
  int incumbent_wins = 0;
  std::vector<double> diffs;  // median_diff_pct per runoff
  std::vector<int> pairs;
};

Tally runoffs(tune::Context& ctx, const Arm& incumbent, const Arm& challenger, int runs,
              const tune::BenchOptions& options) {
  Tally t;
  for (int i = 0; i < runs; ++i) {
    tune::PairedBenchResult r =
        tune::bench_paired(ctx, incumbent.launch, challenger.launch, ctx.stream(), options);
    tune::RunoffStats s =
        tune::decide_runoff(r.a_ms, r.b_ms, tune::RunoffPolicy{}, incumbent.name, challenger.name);
    switch (s.outcome) {
      case tune::RunoffOutcome::tie:
        ++t.ties;
        break;
      case tune::RunoffOutcome::challenger_wins:
        ++t.challenger_wins;
        break;
      default:
        ++t.incumbent_wins;
        break;
    }
    t.diffs.push_back(s.median_diff_pct);
    t.pairs.push_back(s.pairs);
  }
  return t;
}

// How often sequential medians pick `faster` over `slower` (the order alternates per run).
int sequential_picks(tune::Context& ctx, const Arm& slower, const Arm& faster, int runs,
                     const tune::BenchOptions& options, std::vector<double>& gaps) {
  int right = 0;
  for (int i = 0; i < runs; ++i) {
    double slow_ms = 0, fast_ms = 0;
    if (i % 2 == 0) {
      slow_ms = tune::bench(ctx, slower.launch, ctx.stream(), options).median_ms;
      fast_ms = tune::bench(ctx, faster.launch, ctx.stream(), options).median_ms;
    } else {
      fast_ms = tune::bench(ctx, faster.launch, ctx.stream(), options).median_ms;
      slow_ms = tune::bench(ctx, slower.launch, ctx.stream(), options).median_ms;
    }
    right += fast_ms < slow_ms;
    gaps.push_back(100 * (slow_ms - fast_ms) / fast_ms);
  }
  return right;
}

std::string range(const std::vector<double>& v) {
  return fmt::format("{:+.2f}% .. {:+.2f}% (median {:+.2f}%)", tune::quantile(v, 0),
                     tune::quantile(v, 1), tune::quantile(v, 0.5));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"the paired runoff benchmark: ties on a config against itself, wins on a gap"};
  int device = 0;
  int runs = 20;
  std::string cubin_dir = TUNE_RUNOFF_CUBIN_DIR;
  app.add_option("--device", device, "the device index");
  app.add_option("--runs", runs, "runoffs per experiment");
  app.add_option("--cubin-dir", cubin_dir, "where runoff_extra{0,1,3}.cubin are");
  CLI11_PARSE(app, argc, argv);

  try {
    tune::Context ctx(device);
    const tune::RunoffPolicy policy;
    const tune::BenchOptions options;  // the [bench] defaults
    // Enough threads to fill the device several times; the chain length gives ~0.1 ms.
    const unsigned block = 256;
    const unsigned grid = static_cast<unsigned>(ctx.multiprocessors()) * 16;
    const int iters = 4000;
    tune::DeviceBuffer<float> out(static_cast<std::int64_t>(grid) * block);

    std::map<int, tune::Function> fns;
    std::vector<std::shared_ptr<tune::Module>> modules;
    for (int extra : {0, 1, 3}) {
      auto m = tune::load_module(ctx, fmt::format("runoff_extra{}", extra),
                                 fmt::format("{}/runoff_extra{}.cubin", cubin_dir, extra));
      modules.push_back(m);
      fns.emplace(extra, m->function("fma_chain"));
    }
    auto arm = [&](int extra, std::string name) {
      tune::Function f = fns.at(extra);
      return Arm{std::move(name), [=](CUstream s) { f.launch(grid, block, 0, s, out, iters); }};
    };
    const Arm base = arm(0, "EXTRA=0");
    const Arm base_again = arm(0, "EXTRA=0 (again)");
    const Arm extra1 = arm(1, "EXTRA=1");
    const Arm extra3 = arm(3, "EXTRA=3");

    const double base_ms = tune::bench(ctx, base.launch, ctx.stream(), options).median_ms;
    fmt::print(
        "device: {} ({}), kernel {:.4f} ms, margin {}% alpha {} (RunoffPolicy defaults, "
        "fixed before the run), {} runoffs each\n",
        ctx.name(), ctx.arch(), base_ms, policy.margin_pct, policy.alpha, runs);
    std::fflush(stdout);

    const Tally same = runoffs(ctx, base, base_again, runs, options);
    const Tally gap3 = runoffs(ctx, extra3, base, runs, options);
    const Tally gap1 = runoffs(ctx, extra1, base, runs, options);
    std::vector<double> seq3_gaps, seq1_gaps;
    const int seq3 = sequential_picks(ctx, extra3, base, runs, options, seq3_gaps);
    const int seq1 = sequential_picks(ctx, extra1, base, runs, options, seq1_gaps);

    fmt::print("\n{:<44} {:>8} {:>8}  {}\n", "experiment", "result", "target", "detail");
    fmt::print("{:<44} {:>5}/{:<2} {:>8}  paired diff {}, {} pairs\n",
               "(1) same config vs itself: ties", same.ties, runs, ">= 19", range(same.diffs),
               same.pairs.empty() ? 0 : same.pairs.front());
    fmt::print("{:<44} {:>5}/{:<2} {:>8}  paired diff {}; ties {}, incumbent {}\n",
               "(2) +3% incumbent vs base: base wins", gap3.challenger_wins, runs, "20",
               range(gap3.diffs), gap3.ties, gap3.incumbent_wins);
    fmt::print("{:<44} {:>5}/{:<2} {:>8}  gap seen {}\n",
               "(3) +3%: sequential medians pick the base", seq3, runs, "-", range(seq3_gaps));
    fmt::print("{:<44} {:>5}/{:<2} {:>8}  (runoff: {} wins, {} ties kept the incumbent)\n",
               "(3) +3%: runoff picks the base", gap3.challenger_wins, runs, "-",
               gap3.challenger_wins, gap3.ties);
    fmt::print("{:<44} {:>5}/{:<2} {:>8}  gap seen {}\n",
               "(3) +1%: sequential medians pick the base", seq1, runs, "-", range(seq1_gaps));
    fmt::print("{:<44} {:>5}/{:<2} {:>8}  paired diff {}; ties {} (inside the margin)\n",
               "(3) +1%: runoff picks the base", gap1.challenger_wins, runs, "-", range(gap1.diffs),
               gap1.ties);
    const bool ok = same.ties >= runs - runs / 20 && gap3.challenger_wins == runs;
    fmt::print("\nrunoff targets: {}\n", ok ? "met" : "NOT met");
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_runoff: error: {}\n", e.what());
    return 3;
  }
}
