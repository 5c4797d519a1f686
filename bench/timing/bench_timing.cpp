// Times the kernels of kernels.cu with tune's bench, several times each, and writes what it
// measured as JSON for compare.py, which times the same cubin with triton.testing.do_bench:
//
//   fma_10us    fma_loop sized to about 10 us (compute-bound), timed with automatic batching
//               and with batching off (one launch per rep, as do_bench times)
//   scale_1ms   scale_copy over 3 * 2^28 floats (6.4 GB moved), well over 1 ms
//
// Usage: bench_timing [--cubin <file>] [--device N] [--repeat 10] [--json <out.json>]
#include <tuner/cuda/bench.hpp>
#include <tuner/cuda/harness.hpp>
#include <tuner/cuda/module.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

namespace {

using nlohmann::json;

// Times `launch` `repeat` times with `options`; one JSON object of the medians and details.
json measure(tune::Context& ctx, const tune::Launch& launch, const tune::BenchOptions& options,
             int repeat) {
  json medians = json::array(), mins = json::array(), reps = json::array();
  json warnings = json::array();
  bool batched = false;
  int batch_size = 1;
  for (int i = 0; i < repeat; ++i) {
    tune::BenchResult r = tune::bench(ctx, launch, ctx.stream(), options);
    medians.push_back(r.median_ms);
    mins.push_back(r.min_ms);
    reps.push_back(r.reps);
    batched = r.batched;
    batch_size = r.batch_size;
    for (const auto& w : r.warnings)
      warnings.push_back(w);
  }
  return {{"median_ms", medians}, {"min_ms", mins},           {"reps", reps},
          {"batched", batched},   {"batch_size", batch_size}, {"warnings", warnings}};
}

double median_of(const json& values) {
  return tune::quantile(values.get<std::vector<double>>(), 0.5);
}

double spread_of(const json& values) {
  auto v = values.get<std::vector<double>>();
  auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  return (*hi - *lo) / tune::quantile(v, 0.5);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("Time the timing benchmark's kernels with tune's bench");
  std::string cubin = TUNE_TIMING_CUBIN;
  int device = 0;
  int repeat = 10;
  std::string json_out;
  app.add_option("--cubin", cubin, "the cubin of kernels.cu");
  app.add_option("--device", device, "device index (CUDA_VISIBLE_DEVICES applies)");
  app.add_option("--repeat", repeat, "measurements per kernel")->check(CLI::Range(1, 1000));
  app.add_option("--json", json_out, "write the measurements here");
  CLI11_PARSE(app, argc, argv);

  try {
    tune::Context ctx(device);
    auto module = tune::load_module(ctx, "bench-timing", cubin);
    json out = {
        {"device", ctx.name()},       {"arch", ctx.arch()}, {"driver", tune::driver().version},
        {"l2_bytes", ctx.l2_bytes()}, {"repeat", repeat},   {"kernels", json::array()}};
    std::mt19937_64 rng(7);

    // fma_loop: one full wave of 256-thread blocks, iterations calibrated to about 10 us.
    {
      tune::Function f = module->function("fma_loop");
      const unsigned block = 256;
      const unsigned grid = static_cast<unsigned>(ctx.multiprocessors()) * 8;
      tune::DeviceBuffer<float> sink(static_cast<std::int64_t>(grid) * block);
      int iters = 256;
      tune::BenchOptions quick;
      quick.batching = tune::BenchOptions::Batching::never;
      quick.rep_ms = 20;
      for (int round = 0; round < 3; ++round) {
        const int it = iters;
        double ms = tune::bench(
                        ctx, [=](CUstream s) { f.launch(grid, block, 0, s, sink, it); },
                        ctx.stream(), quick)
                        .median_ms;
        iters = std::max(16, static_cast<int>(std::lround(iters * 0.010 / ms)));
      }
      tune::Launch launch = [=](CUstream s) { f.launch(grid, block, 0, s, sink, iters); };
      tune::BenchOptions single;
      single.batching = tune::BenchOptions::Batching::never;
      out["kernels"].push_back({{"name", "fma_10us"},
                                {"function", "fma_loop"},
                                {"grid", grid},
                                {"block", block},
                                {"iters", iters},
                                {"ours_auto", measure(ctx, launch, {}, repeat)},
                                {"ours_single", measure(ctx, launch, single, repeat)}});
    }

    // scale_copy: 3 * 2^28 floats, 3.2 GB read and 3.2 GB written.
    {
      tune::Function f = module->function("scale_copy");
      const long long n = 3LL << 28;
      tune::DeviceBuffer<float> x(n), y(n);
      // Random values (never zeros), drawn for 2^20 elements and tiled: drawing 805M values on
      // the host would take longer than the whole measurement.
      std::vector<float> tile(std::size_t{1} << 20), host(static_cast<std::size_t>(n));
      std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
      for (float& v : tile)
        v = dist(rng);
      for (std::size_t i = 0; i < host.size(); i += tile.size()) {
        std::copy_n(tile.begin(), std::min(tile.size(), host.size() - i), host.begin() + i);
      }
      x.upload(host);
      host = {};
      const unsigned block = 256;
      const unsigned grid = static_cast<unsigned>(ctx.multiprocessors()) * 8;
      tune::Launch launch = [=](CUstream s) { f.launch(grid, block, 0, s, y, x, 2.0f, n); };
      out["kernels"].push_back({{"name", "scale_1ms"},
                                {"function", "scale_copy"},
                                {"grid", grid},
                                {"block", block},
                                {"n", n},
                                {"ours_auto", measure(ctx, launch, {}, repeat)}});
    }

    std::printf("%-10s %-7s %10s %8s %6s\n", "kernel", "mode", "median_ms", "spread", "reps");
    for (const auto& k : out["kernels"]) {
      for (const char* mode : {"ours_auto", "ours_single"}) {
        if (!k.contains(mode)) continue;
        const json& m = k[mode];
        std::string label =
            std::string(mode) == "ours_single"
                ? "single"
                : (m["batched"].get<bool>() ? fmt::format("graph{}", m["batch_size"].get<int>())
                                            : "single");
        std::printf("%-10s %-7s %10.5f %7.2f%% %6d\n", k["name"].get<std::string>().c_str(),
                    label.c_str(), median_of(m["median_ms"]), 100 * spread_of(m["median_ms"]),
                    m["reps"][0].get<int>());
      }
    }
    if (!json_out.empty()) std::ofstream(json_out) << out.dump(2) << "\n";
  } catch (const tune::error& e) {
    std::fprintf(stderr, "bench_timing: error: %s\n", e.what());
    return 3;
  }
  return 0;
}
