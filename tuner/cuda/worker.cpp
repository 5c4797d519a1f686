#include <tuner/cuda/worker.hpp>

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <CLI/CLI.hpp>

#include <tuner/core/base/exit_codes.hpp>
#include <tuner/core/build/kernel_build.hpp>
#include <tuner/core/build/kernel_cache.hpp>
#include <tuner/core/search/worker_protocol.hpp>
#include <tuner/cuda/bench.hpp>
#include <tuner/cuda/driver.hpp>
#include <tuner/cuda/harness.hpp>
#include <tuner/cuda/module.hpp>

namespace tune {
namespace {

namespace fs = std::filesystem;

struct WorkerOptions {
  std::string manifest;
  std::string bucket;
  std::string arch;
  std::optional<int> device;
  std::string log;  // the supervisor's option of old runners: refused with a pointer
};

// The driver's version: the kernel module's from /proc when it is there (`580.159.04`), else the
// CUDA version the driver API reports (`CUDA 13.0`).
std::string driver_version() {
  std::ifstream in("/proc/driver/nvidia/version");
  std::string line;
  if (std::getline(in, line)) {
    // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  Thu ..." or, for the open
    // modules, "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release
    // Build ...": the first word after "Kernel Module" made of digits and dots.
    const std::string marker = "Kernel Module";
    if (auto at = line.find(marker); at != std::string::npos) {
      std::istringstream words(line.substr(at + marker.size()));
      std::string word;
      while (words >> word) {
        if (std::isdigit(static_cast<unsigned char>(word[0])) &&
            word.find_first_not_of("0123456789.") == std::string::npos)
          return word;
      }
    }
  }
  const int v = driver().version;
  return fmt::format("CUDA {}.{}", v / 1000, (v % 1000) / 10);
}

// `<CUDA_ERROR_NAME>: <what>`, how a CUDA error reads in a trial.
std::string cuda_reason(const cuda_error& e) {
  return fmt::format("{}: {}", cu_error_name(e.code()), e.what());
}

// A candidate set up in the worker: its module (kept loaded while it is timed) and its launch.
struct Prepared {
  std::string key;
  std::shared_ptr<Module> module;
  Launch launch;
};

// The bucket's fixture failed: every candidate of the bucket fails with this message.
struct fixture_error : error {
  using error::error;
};

// The bucket's fixture in this worker (harness().prepare): built for the first candidate,
// kept for the others, rebuilt only by a fresh worker.
struct FixtureState {
  bool built = false;
  std::shared_ptr<void> fixture;
  std::vector<std::function<void()>> resets;  // before every candidate: restores, poisons
  std::optional<std::string> failure;         // prepare threw: its message
};

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

class Worker {
 public:
  Worker(const KernelBuild& build, const Bucket& bucket, int device)
      : build_(build),
        bucket_(bucket),
        ctx_(device),
        cache_dir_(effective_cache_dir(build.manifest.cache_dir)),
        bench_(BenchOptions::from(build.space.bench())),
        search_bench_(BenchOptions::from(search_bench(build.space.bench()))) {}

  Context& context() { return ctx_; }

  MeasureAnswer measure(const MeasureRequest& request) {
    MeasureAnswer answer;
    TrialTimes& times = answer.times.emplace();
    try {
      Prepared p = prepare(request.candidate, &times);
      BenchOptions options = search_bench_;
      options.reject = request.reject;
      // A warm worker (one candidate timed already): the clocks are up, a short warm-up does.
      if (warm_) options.warmup_ms = std::min(options.warmup_ms, warm_worker_warmup_ms);
      BenchResult r = bench(ctx_, p.launch, ctx_.stream(), options);
      warm_ = true;
      times.warmup_ms = r.warmup_ms;
      times.timed_ms = r.timed_ms;
      times.saved_ms = r.saved_ms;
      answer.state.value = MeasuredState{r.median_ms, r.min_ms, r.reps};
      answer.rejected_early = r.rejected_early;
      answer.batched = r.batched;
      answer.warnings = r.warnings;
      answer.device = ctx_.name();
    } catch (const fixture_error& e) {
      answer.state.value = InvalidState{e.what()};
      answer.fixture_failure = e.what();
      answer.exiting = fixture_cuda_error_;
    } catch (const cuda_error& e) {
      answer.state.value = InvalidState{cuda_reason(e)};
      answer.exiting = true;
    } catch (const harness_error& e) {
      answer.state.value = InvalidState{e.what()};
      answer.harness_failure = e.what();
    } catch (const std::exception& e) {
      answer.state.value = InvalidState{e.what()};
    }
    release(request.candidate.key, answer.exiting);
    return answer;
  }

  RunoffAnswer runoff(const RunoffRequest& request) {
    RunoffAnswer answer;
    RunoffPairs& pairs = answer.pairs;
    std::optional<Prepared> a, b;
    auto set_up = [&](const CandidateRef& side, std::optional<Prepared>& out,
                      std::optional<std::string>& failure) {
      try {
        out = prepare(side);
      } catch (const cuda_error& e) {
        failure = cuda_reason(e);
        answer.exiting = true;
      } catch (const std::exception& e) {
        failure = e.what();
      }
    };
    set_up(request.incumbent, a, pairs.incumbent_failure);
    if (!answer.exiting) set_up(request.challenger, b, pairs.challenger_failure);
    if (a && b && !answer.exiting) {
      try {
        // Each finalist alone first, in the state the pairs will see: the agreement check's
        // reference (docs/measurement.md "Agreement of the two modes").
        pairs.incumbent_alone_ms = bench(ctx_, a->launch, ctx_.stream(), bench_).median_ms;
        pairs.challenger_alone_ms = bench(ctx_, b->launch, ctx_.stream(), bench_).median_ms;
        PairedBenchResult r = bench_paired(ctx_, a->launch, b->launch, ctx_.stream(), bench_);
        pairs.incumbent_ms = std::move(r.a_ms);
        pairs.challenger_ms = std::move(r.b_ms);
        pairs.batched = r.batched;
        pairs.warnings = std::move(r.warnings);
        pairs.device = ctx_.name();
      } catch (const cuda_error& e) {
        pairs.failure = cuda_reason(e);
        answer.exiting = true;
      } catch (const std::exception& e) {
        pairs.failure = e.what();
      }
    }
    a.reset();
    b.reset();
    release(request.incumbent.key, answer.exiting);
    release(request.challenger.key, answer.exiting);
    return answer;
  }

 private:
  // Builds the bucket's fixture once (harness().prepare), given the module of the first
  // candidate. A failure is kept: every later candidate fails with the same message, without
  // running prepare again.
  void build_fixture(std::shared_ptr<Module> module) {
    fixture_.built = true;
    try {
      BucketContext bucket(ctx_, std::move(module), bucket_.name, bucket_.shape, ctx_.stream());
      fixture_.fixture = harness().prepare(bucket);
      fixture_.resets = bucket.take_resets();
    } catch (const cuda_error& e) {
      fixture_.fixture.reset();
      fixture_.failure = "the fixture failed: " + cuda_reason(e);
      fixture_cuda_error_ = true;
    } catch (const std::exception& e) {
      fixture_.fixture.reset();
      fixture_.failure = std::string("the fixture failed: ") + e.what();
    }
  }

  // Loads the candidate's module, builds the bucket's fixture with it when none is built yet,
  // resets the fixture's inputs and outputs (a harness with a fixture), and runs its setup
  // (the correctness gate); `times`, when given, gets the time of each step. Throws what they
  // throw; fixture_error when the bucket's fixture failed.
  Prepared prepare(const CandidateRef& candidate, TrialTimes* times = nullptr) {
    const Harness& h = harness();
    if (h.prepare != nullptr && fixture_.failure) throw fixture_error(*fixture_.failure);
    Prepared p;
    p.key = candidate.key;
    auto t0 = std::chrono::steady_clock::now();
    p.module = load_kernel(ctx_, cache_dir_, candidate.key);
    if (times) times->load_ms = ms_since(t0);
    if (h.prepare != nullptr) {
      if (!fixture_.built) {
        t0 = std::chrono::steady_clock::now();
        build_fixture(p.module);
        if (times) times->fixture_ms = ms_since(t0);
      }
      if (fixture_.failure) throw fixture_error(*fixture_.failure);
    }
    t0 = std::chrono::steady_clock::now();
    // A template entry's instance goes by its lowered name, which warm kept in the entry.
    const std::optional<CacheEntry> entry = KernelCache(cache_dir_).lookup(candidate.key);
    SetupContext setup(ctx_, p.module,
                       entry ? entry->function_name(build_.manifest.entry) : build_.manifest.entry,
                       bucket_.name, bucket_.shape, candidate.config, ctx_.stream());
    if (h.prepare != nullptr) {
      for (const auto& reset : fixture_.resets)
        reset();
      if (h.restore != nullptr) h.restore(fixture_.fixture.get());
      p.launch = h.setup_with(setup, fixture_.fixture.get());
    } else {
      p.launch = h.setup(setup);
    }
    if (times) times->setup_ms = ms_since(t0);
    if (!p.launch) throw error("setup returned an empty launch closure");
    return p;
  }

  // Unloads a candidate's module (not after a CUDA error: the context is going away with the
  // process, and unloading may fail or hang on a poisoned one).
  void release(const std::string& key, bool exiting) {
    if (exiting) return;
    try {
      evict_kernel(key);
    } catch (const std::exception&) {
      // the worker exits after a CUDA error anyway; nothing to report here
    }
  }

  const KernelBuild& build_;
  const Bucket& bucket_;
  Context ctx_;
  fs::path cache_dir_;
  BenchOptions bench_;         // the runoff's: the space's [bench]
  BenchOptions search_bench_;  // the search's: the same, or the quick preset's
  FixtureState fixture_;
  bool warm_ = false;  // a candidate was timed: the next gets warm_worker_warmup_ms of warm-up
  bool fixture_cuda_error_ = false;  // the fixture's failure was a CUDA error: exit after it
};

// The answers go to a private copy of the standard output; fd 1 itself goes to stderr, so that
// a harness that prints cannot break the protocol.
std::FILE* g_answers = nullptr;

void answer_line(const std::string& line) {
  std::FILE* out = g_answers != nullptr ? g_answers : stdout;
  std::fwrite(line.data(), 1, line.size(), out);
  std::fputc('\n', out);
  std::fflush(out);
}

void take_stdout_for_answers() {
  std::fflush(stdout);
  const int fd = ::dup(STDOUT_FILENO);
  if (fd < 0) return;
  g_answers = ::fdopen(fd, "w");
  ::dup2(STDERR_FILENO, STDOUT_FILENO);
}

int refuse_to_start(const std::string& why, int code) {
  WorkerHello hello;
  hello.error = why;
  answer_line(encode(hello));
  return code;
}

// Answers requests until stdin ends; exits the process right after a CUDA error's answer.
int serve(Worker& worker) {
  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    result<WorkerRequest> request = decode_request(line);
    if (!request) {
      answer_line(encode(RefusedAnswer{"bad request: " + request.error().message}));
      continue;
    }
    bool exiting = false;
    if (const auto* m = std::get_if<MeasureRequest>(&*request)) {
      MeasureAnswer a = worker.measure(*m);
      exiting = a.exiting;
      answer_line(encode(a));
    } else {
      RunoffAnswer a = worker.runoff(std::get<RunoffRequest>(*request));
      exiting = a.exiting;
      answer_line(encode(a));
    }
    if (exiting) {
      std::fflush(stderr);
      std::_Exit(exit_environment);  // no destructors: the context may be poisoned
    }
  }
  return exit_ok;
}

int run_worker(const WorkerOptions& opt) {
  take_stdout_for_answers();
  result<KernelBuild> build = load_kernel_build(opt.manifest);
  if (!build) return refuse_to_start(build.error().str(), exit_bad_input);
  result<const Bucket*> bucket = build->bucket(opt.bucket);
  if (!bucket) return refuse_to_start(bucket.error().str(), exit_bad_input);
  std::unique_ptr<Worker> worker;
  WorkerHello hello;
  try {
    worker = std::make_unique<Worker>(*build, **bucket, opt.device.value_or(0));
    hello.driver = driver_version();
  } catch (const std::exception& e) {
    return refuse_to_start(e.what(), exit_environment);
  }
  hello.ready = true;
  hello.pid = static_cast<long>(::getpid());
  hello.device = worker->context().name();
  hello.arch = worker->context().arch();
  answer_line(encode(hello));
  return serve(*worker);
}

}  // namespace

int worker_main(int argc, char** argv) {
  CLI::App app{
      "measures candidates of one bucket of a tunable kernel on the GPU (the tune "
      "runner: a measuring worker started by `tuner run`)"};
  WorkerOptions opt;
  app.add_option("--manifest", opt.manifest, "the kernel's manifest.json")->required();
  app.add_option("--bucket", opt.bucket, "the bucket whose candidates it measures")->required();
  app.add_option("--arch", opt.arch, "the architecture the candidates were compiled for")
      ->required();
  app.add_option("--device", opt.device,
                 "the device index (default 0; CUDA_VISIBLE_DEVICES applies)");
  app.add_option("--log", opt.log, "(refused: tune with `tuner run`)")->group("");
  app.footer(
      "Speaks the protocol of tuner/core/search/worker_protocol.hpp on stdin and stdout. Exit "
      "status: 0 "
      "at the end of its input, 2 bad arguments or input, 3 a broken environment (no GPU) or "
      "after a CUDA error.");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? exit_ok : exit_bad_input;
  }
  if (!opt.log.empty()) {
    fmt::print(stderr,
               "runner: error: the runner is the measuring worker only; tune a kernel with "
               "`tuner run --manifest {}`\n",
               opt.manifest);
    return exit_bad_input;
  }
  return run_worker(opt);
}

}  // namespace tune
