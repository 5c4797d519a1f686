// The fidelity benchmark: every config measured in the sequential mode (tune's bench, as the
// search times a candidate) and in the paired mode (bench_paired, as the runoff times two
// finalists), with two partners (another config and itself) and in both arms. The paired median
// of a config must agree with its sequential median: the largest disagreement is reported beside
// the noise floor (the spread of the sequential medians over repeats).
//
//   --diagnose   per-launch time of the short streaming kernel at forced batch sizes, and the
//                batch sizes each mode picked (the evidence of docs/measurement.md "Short
//                kernels: CUDA graphs")
//   --app        an application-like time of each streaming config: inside a graph of
//                launches that alternate with another kernel, minus that kernel's own time;
//                reported as a ratio to tune's (batched) time
//
// Usage: bench_fidelity [--cubin F] [--device N] [--repeat 3] [--diagnose] [--app] [--json F]
#include <tuner/cuda/bench.hpp>
#include <tuner/cuda/harness.hpp>
#include <tuner/cuda/module.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

namespace {

using nlohmann::json;

struct Case {
  Case(std::string g, std::string n, tune::Launch l)
      : group(std::move(g)), name(std::move(n)), launch(std::move(l)) {}
  std::string group;  // configs of one problem: partners come from the same group
  std::string name;
  tune::Launch launch;
  // A launch over buffers of its own, allocated and filled now (as a harness's setup does per
  // candidate); empty for cases that have none. The buffers live as long as the closure.
  std::function<tune::Launch()> fresh;
  double seq_ms = 0;
  double noise = 0;
  int seq_batch = 1;
  json detail;
};

double median(std::vector<double> v) {
  return tune::quantile(std::move(v), 0.5);
}

// The sequential median over `repeat` benches, and the spread of those medians.
void sequential(tune::Context& ctx, Case& c, int repeat) {
  std::vector<double> medians;
  for (int r = 0; r < repeat; ++r) {
    const tune::BenchResult b = tune::bench(ctx, c.launch, ctx.stream());
    medians.push_back(b.median_ms);
    c.seq_batch = b.batched ? b.batch_size : 1;
  }
  c.seq_ms = median(medians);
  const auto [lo, hi] = std::minmax_element(medians.begin(), medians.end());
  c.noise = (*hi - *lo) / c.seq_ms;
  c.detail["sequential_ms"] = medians;
}

// The paired medians of `a` (arm A) and `b` (arm B) against each other.
std::pair<double, double> paired(tune::Context& ctx, const Case& a, const Case& b, int& batch) {
  const tune::PairedBenchResult r = tune::bench_paired(ctx, a.launch, b.launch, ctx.stream());
  batch = r.batched ? r.batch_size : 1;
  return {median(r.a_ms), median(r.b_ms)};
}

std::vector<Case> make_cases(tune::Context& ctx, tune::Module& module,
                             std::vector<tune::DeviceBuffer<float>>& keep) {
  std::vector<Case> cases;
  auto streaming = [&](const std::string& group, long long n, std::vector<unsigned> blocks,
                       std::vector<int> items) {
    keep.emplace_back(n);
    keep.emplace_back(n);
    const tune::DeviceBuffer<float> x = keep[keep.size() - 2], y = keep.back();
    x.upload(std::vector<float>(static_cast<std::size_t>(n), 1.0f));
    for (unsigned block : blocks)
      for (int it : items) {
        const tune::Function f = module.function(fmt::format("scale_items{}", it));
        const auto grid = static_cast<unsigned>((n + block * it - 1) / (block * it));
        cases.emplace_back(group, fmt::format("{} BLOCK={} ITEMS={}", group, block, it),
                           [=](CUstream s) { f.launch(grid, block, 0, s, y, x, n); });
        cases.back().fresh = [=, &ctx]() -> tune::Launch {
          std::mt19937_64 rng(n + block * 10 + it);
          tune::DeviceBuffer<float> fx(n), fy(n);
          fx.fill_random(rng);
          fy.poison();
          f.launch(grid, block, 0, ctx.stream(), fy, fx, n);
          (void)fy.download();
          return [=](CUstream s) { f.launch(grid, block, 0, s, fy, fx, n); };
        };
      }
  };
  streaming("scale 1M", 1LL << 20, {64, 128, 256, 512}, {1, 2, 4});
  streaming("scale 16M", 16LL << 20, {128, 256}, {1, 4});
  streaming("scale 256M", 256LL << 20, {128, 256}, {4});
  // Compute-bound, about 2 us and about 2 ms: iterations calibrated on this device.
  const tune::Function fma = module.function("fma_loop");
  const unsigned grid = static_cast<unsigned>(ctx.multiprocessors()) * 8;
  keep.emplace_back(static_cast<std::int64_t>(grid) * 256);
  const tune::DeviceBuffer<float> sink = keep.back();
  for (double target_ms : {0.002, 2.0}) {
    int iters = 64;
    for (int round = 0; round < 3; ++round) {
      const int it = iters;
      tune::BenchOptions single;
      single.batching = tune::BenchOptions::Batching::never;
      const double ms =
          tune::bench(
              ctx, [=](CUstream s) { fma.launch(grid, 256, 0, s, sink, it); }, ctx.stream(), single)
              .median_ms;
      iters = std::max(1, static_cast<int>(std::lround(iters * target_ms / ms)));
    }
    const std::string group = target_ms < 0.01 ? "fma 2us" : "fma 2ms";
    for (unsigned block : {128u, 256u}) {
      const unsigned g = grid * 256 / block;
      const int it = iters;
      cases.emplace_back(group, fmt::format("{} BLOCK={}", group, block),
                         [=](CUstream s) { fma.launch(g, block, 0, s, sink, it); });
    }
  }
  return cases;
}

// Per-launch time of `c` at forced batch sizes (a graph of k launches, flushed once before).
json diagnose(tune::Context& ctx, const Case& c) {
  json row = {{"config", c.name}};
  for (int k : {1, 2, 8, 32, 72, 200}) {
    tune::BenchOptions o;
    o.batching =
        k == 1 ? tune::BenchOptions::Batching::never : tune::BenchOptions::Batching::always;
    o.batch_target_ms = 1e9;
    o.max_batch = k;
    row[fmt::format("batch_{}", k)] = tune::bench(ctx, c.launch, ctx.stream(), o).median_ms;
  }
  return row;
}

// An application-like time: `c` inside a graph that alternates it with another kernel, minus
// that other kernel's time in the same graph shape.
double app_like(tune::Context& ctx, const Case& c, const tune::Launch& other) {
  tune::BenchOptions o;
  o.batching = tune::BenchOptions::Batching::always;
  o.batch_target_ms = 1e9;
  o.max_batch = 64;
  const tune::Launch both = [=](CUstream s) {
    other(s);
    c.launch(s);
  };
  const double together = tune::bench(ctx, both, ctx.stream(), o).median_ms;
  const double alone = tune::bench(ctx, other, ctx.stream(), o).median_ms;
  return together - alone;
}

// The 1M streaming configs with buffers of their own, allocated per measurement as the worker
// does: sequential (allocate, bench, free), then paired with the next config (both allocated,
// A first), in both arms.
json own_buffers(tune::Context& ctx, const std::vector<Case>& cases) {
  json rows = json::array();
  std::vector<const Case*> group;
  for (const Case& c : cases)
    if (c.group == "scale 1M") group.push_back(&c);
  std::printf("\nown buffers, allocated per measurement (scale 1M):\n%-26s %10s %10s %10s %7s\n",
              "config", "seq_ms", "paired_a", "paired_b", "worst");
  for (std::size_t i = 0; i < group.size(); ++i) {
    const Case& c = *group[i];
    const Case& p = *group[i + 1 < group.size() ? i + 1 : i - 1];
    double seq = 0;
    {
      const tune::Launch l = c.fresh();
      seq = tune::bench(ctx, l, ctx.stream()).median_ms;
    }
    double as_a = 0, as_b = 0;
    {
      const tune::Launch la = c.fresh(), lb = p.fresh();
      as_a = median(tune::bench_paired(ctx, la, lb, ctx.stream()).a_ms);
    }
    {
      const tune::Launch la = p.fresh(), lb = c.fresh();
      as_b = median(tune::bench_paired(ctx, la, lb, ctx.stream()).b_ms);
    }
    const double worst = std::max(std::fabs(as_a / seq - 1), std::fabs(as_b / seq - 1));
    std::printf("%-26s %10.5f %10.5f %10.5f %6.2f%%\n", c.name.c_str(), seq, as_a, as_b,
                100 * worst);
    rows.push_back({{"config", c.name},
                    {"sequential_ms", seq},
                    {"paired_as_a_ms", as_a},
                    {"paired_as_b_ms", as_b},
                    {"partner", p.name}});
  }
  return rows;
}

// The same config measured again and again in one process with different options, to tell a
// state of the device (every later measurement moves) from an option (only that one moves).
json history(tune::Context& ctx, const std::vector<Case>& cases) {
  json rows = json::array();
  std::printf("\nhistory (the same config, one measurement after another):\n");
  for (const Case& c : cases) {
    if (c.name != "scale 1M BLOCK=128 ITEMS=4" && c.name != "scale 1M BLOCK=256 ITEMS=4") continue;
    struct Step {
      const char* name;
      tune::BenchOptions o;
    };
    std::vector<Step> steps;
    steps.push_back({"auto", {}});
    tune::BenchOptions forced;
    forced.batching = tune::BenchOptions::Batching::always;
    forced.batch_target_ms = 1e9;
    forced.max_batch = 28;
    steps.push_back({"forced 28", forced});
    steps.push_back({"auto", {}});
    tune::BenchOptions noflush;
    noflush.clear_l2 = false;
    steps.push_back({"auto, no flush", noflush});
    tune::BenchOptions noflush_forced = forced;
    noflush_forced.clear_l2 = false;
    steps.push_back({"forced 28, no flush", noflush_forced});
    steps.push_back({"auto", {}});
    for (const Step& step : steps) {
      const tune::BenchResult r = tune::bench(ctx, c.launch, ctx.stream(), step.o);
      std::printf("%-26s %-20s %10.5f batch %3d reps %4d%s\n", c.name.c_str(), step.name,
                  r.median_ms, r.batch_size, r.reps,
                  r.warnings.empty() ? "" : (" warning: " + r.warnings.front()).c_str());
      rows.push_back({{"config", c.name},
                      {"step", step.name},
                      {"median_ms", r.median_ms},
                      {"batch", r.batch_size},
                      {"reps", r.reps},
                      {"warnings", r.warnings}});
    }
  }
  return rows;
}

// Every ordered pair of the fixed-size streaming configs (kernels.cu, as tune builds them), each
// with buffers of its own: the paired median of the row config against the column config, as a
// ratio to the row config's sequential median. With `modules` 2 the column config comes from a
// second load of the cubin (each candidate of a tune is a module of its own); with `never` no
// CUDA graphs are used in either mode.
json pair_matrix(tune::Context& ctx, const std::string& cubin, int modules, bool never) {
  const std::vector<std::pair<int, int>> configs = {
      {128, 2}, {128, 4}, {256, 2}, {256, 4}, {512, 4}};
  auto first = tune::load_module(ctx, "bench-fidelity-1", cubin);
  auto second = modules == 2 ? tune::load_module(ctx, "bench-fidelity-2", cubin) : nullptr;
  constexpr int n = 1 << 20;
  tune::BenchOptions o;
  if (never) o.batching = tune::BenchOptions::Batching::never;
  auto make = [&](std::pair<int, int> c, tune::Module& m) -> tune::Launch {
    const auto [block, items] = c;
    const tune::Function f = m.function(fmt::format("scale_fixed_{}_{}", block, items));
    std::mt19937_64 rng(static_cast<unsigned>(block * 10 + items));
    tune::DeviceBuffer<float> x(n), y(n);
    x.fill_random(rng);
    y.poison();
    const auto grid = static_cast<unsigned>((n + block * items - 1) / (block * items));
    const auto threads = static_cast<unsigned>(block);
    return [=](CUstream s) { f.launch(grid, threads, 0, s, y, x, n); };
  };
  auto name = [](std::pair<int, int> c) { return fmt::format("{}x{}", c.first, c.second); };
  std::printf("\npaired / sequential median, row config against column config (%s, %s):\n%-8s %9s",
              modules == 2 ? "two modules" : "one module", never ? "no graphs" : "graphs", "config",
              "seq_ms");
  for (const auto& c : configs)
    std::printf(" %7s", name(c).c_str());
  std::printf("\n");
  json rows = json::array();
  for (const auto& a : configs) {
    double seq = 0;
    {
      const tune::Launch l = make(a, *first);
      std::vector<double> m;
      for (int r = 0; r < 3; ++r)
        m.push_back(tune::bench(ctx, l, ctx.stream(), o).median_ms);
      seq = median(m);
    }
    std::printf("%-8s %9.5f", name(a).c_str(), seq);
    json row = {{"config", name(a)}, {"sequential_ms", seq}, {"paired_ms", json::object()}};
    for (const auto& b : configs) {
      if (a == b && modules == 1) {
        std::printf(" %7s", "-");
        continue;
      }
      const tune::Launch la = make(a, *first), lb = make(b, second ? *second : *first);
      const tune::PairedBenchResult r = tune::bench_paired(ctx, la, lb, ctx.stream(), o);
      const double ms = median(r.a_ms);
      row["paired_ms"][name(b)] = ms;
      std::printf(" %7.3f", ms / seq);
    }
    std::printf("\n");
    rows.push_back(row);
  }
  return rows;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("Measure every config in the sequential and the paired mode and compare");
  std::string cubin = TUNE_FIDELITY_CUBIN;
  int device = 0, repeat = 3;
  bool want_diagnose = false, want_app = false, want_own = false, want_history = false,
       want_pairs = false;
  std::string json_out;
  app.add_option("--cubin", cubin, "the cubin of kernels.cu");
  app.add_option("--device", device, "device index (CUDA_VISIBLE_DEVICES applies)");
  app.add_option("--repeat", repeat, "sequential benches per config")->check(CLI::Range(1, 100));
  app.add_flag("--diagnose", want_diagnose, "time the 1M streaming kernel at forced batch sizes");
  app.add_flag("--app", want_app, "application-like times of the streaming configs");
  app.add_flag("--own-buffers", want_own, "the 1M configs with buffers allocated per measurement");
  app.add_flag("--history", want_history, "one config measured again and again with other options");
  app.add_flag("--pairs", want_pairs, "every pair of the fixed-size streaming configs");
  app.add_option("--json", json_out, "write the measurements here");
  CLI11_PARSE(app, argc, argv);
  try {
    tune::Context ctx(device);
    auto module = tune::load_module(ctx, "bench-fidelity", cubin);
    std::vector<tune::DeviceBuffer<float>> keep;
    std::vector<Case> cases = make_cases(ctx, *module, keep);
    json out = {{"device", ctx.name()}, {"repeat", repeat}, {"configs", json::array()}};
    if (want_pairs) {
      out["pairs"] = {{"one_module", pair_matrix(ctx, cubin, 1, false)},
                      {"two_modules", pair_matrix(ctx, cubin, 2, false)},
                      {"no_graphs", pair_matrix(ctx, cubin, 2, true)}};
    }
    if (want_history) out["history_first"] = history(ctx, cases);
    for (Case& c : cases)
      sequential(ctx, c, repeat);
    std::printf("%-26s %10s %5s %10s %10s %10s %5s %7s %6s\n", "config", "seq_ms", "batch",
                "paired_a", "paired_b", "self", "batch", "worst", "noise");
    double worst_all = 0;
    for (std::size_t i = 0; i < cases.size(); ++i) {
      Case& c = cases[i];
      // The partner: the next config of the group (the previous for the last one).
      std::size_t p = i + 1 < cases.size() && cases[i + 1].group == c.group ? i + 1 : i - 1;
      if (cases[p].group != c.group) p = i;
      int batch = 1;
      const double as_a = paired(ctx, c, cases[p], batch).first;
      const double as_b = paired(ctx, cases[p], c, batch).second;
      const auto self = paired(ctx, c, c, batch);
      double worst = 0;
      for (double v : {as_a, as_b, self.first, self.second})
        worst = std::max(worst, std::fabs(v / c.seq_ms - 1));
      worst_all = std::max(worst_all, worst);
      std::printf("%-26s %10.5f %5d %10.5f %10.5f %10.5f %5d %6.2f%% %5.2f%%\n", c.name.c_str(),
                  c.seq_ms, c.seq_batch, as_a, as_b, self.first, batch, 100 * worst, 100 * c.noise);
      c.detail.update({{"config", c.name},
                       {"group", c.group},
                       {"sequential_median_ms", c.seq_ms},
                       {"sequential_batch", c.seq_batch},
                       {"paired_as_a_ms", as_a},
                       {"paired_as_b_ms", as_b},
                       {"paired_self_ms", {self.first, self.second}},
                       {"paired_batch", batch},
                       {"partner", cases[p].name},
                       {"worst_disagreement", worst},
                       {"noise", c.noise}});
      out["configs"].push_back(c.detail);
    }
    std::printf("largest disagreement between the modes: %.2f%%\n", 100 * worst_all);
    out["largest_disagreement"] = worst_all;
    if (want_own) out["own_buffers"] = own_buffers(ctx, cases);
    if (want_history) out["history_last"] = history(ctx, cases);
    if (want_diagnose) {
      std::printf("\nper-launch ms at forced batch sizes (scale 1M):\n");
      out["diagnose"] = json::array();
      for (const Case& c : cases)
        if (c.group == "scale 1M") {
          json row = diagnose(ctx, c);
          std::printf("%-26s", c.name.c_str());
          for (int k : {1, 2, 8, 32, 72, 200})
            std::printf(" %3d:%.5f", k, row[fmt::format("batch_{}", k)].get<double>());
          std::printf("\n");
          out["diagnose"].push_back(row);
        }
    }
    if (want_app) {
      std::printf("\napplication-like time (alternating with fma 2us) / tune's time:\n");
      const tune::Launch other = cases[cases.size() - 4].launch;  // fma 2us BLOCK=128
      out["app"] = json::array();
      for (const Case& c : cases)
        if (c.group.rfind("scale", 0) == 0) {
          const double a = app_like(ctx, c, other);
          std::printf("%-26s %10.5f %10.5f  ratio %.3f\n", c.name.c_str(), a, c.seq_ms,
                      a / c.seq_ms);
          out["app"].push_back({{"config", c.name}, {"app_like_ms", a}, {"tune_ms", c.seq_ms}});
        }
    }
    if (want_history) out["history_end"] = history(ctx, cases);
    if (!json_out.empty()) std::ofstream(json_out) << out.dump(2) << "\n";
  } catch (const tune::error& e) {
    std::fprintf(stderr, "bench_fidelity: error: %s\n", e.what());
    return 3;
  }
  return 0;
}
