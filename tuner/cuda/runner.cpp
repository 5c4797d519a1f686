#include <tuner/cuda/runner.hpp>

#include <unistd.h>

#include <cctype>
#include <csignal>
#include <cstdio>
#include <cstdlib>
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
#include <nlohmann/json.hpp>

#include <tuner/core/atomic_file.hpp>
#include <tuner/core/autotuner.hpp>
#include <tuner/core/cache_key.hpp>
#include <tuner/core/exit_codes.hpp>
#include <tuner/core/kernel_cache.hpp>
#include <tuner/core/record.hpp>
#include <tuner/core/subprocess.hpp>
#include <tuner/core/text.hpp>
#include <tuner/core/toolchain.hpp>
#include <tuner/core/verify.hpp>
#include <tuner/cuda/bench.hpp>
#include <tuner/cuda/driver.hpp>
#include <tuner/cuda/harness.hpp>
#include <tuner/cuda/module.hpp>

namespace tune {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct Options {
  bool worker = false;
  std::string manifest;
  std::string bucket;
  std::string log;
  std::string arch;
  std::optional<int> device;
  std::optional<double> budget_s;
  std::optional<double> timeout_s;
  std::string result;
};

Config config_from_json(const json& params) {
  Config c;
  for (const auto& [name, value] : params.items())
    c.set(name, value.get<ParamValue>());
  return c;
}

json params_json(const Config& c) {
  json j = json::object();
  for (const auto& [name, value] : c.params())
    j[name] = value;
  return j;
}

// ---------------------------------------------------------------------------------------------
// The worker

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

// A candidate set up in the worker: its module (kept loaded while it is timed) and its launch.
struct Prepared {
  std::string key;
  std::shared_ptr<Module> module;
  Launch launch;
};

class Worker {
 public:
  Worker(const KernelBuild& build, const Bucket& bucket, std::string arch, int device)
      : build_(build),
        bucket_(bucket),
        arch_(std::move(arch)),
        ctx_(device),
        cache_dir_(effective_cache_dir(build.manifest.cache_dir)),
        bench_(BenchOptions::from(build.space.bench())) {}

  Context& context() { return ctx_; }

  // Loads the candidate's module and runs its setup (the correctness gate). Throws what they
  // throw.
  Prepared prepare(const Config& config, const std::string& key) {
    Prepared p;
    p.key = key;
    p.module = load_kernel(ctx_, cache_dir_, key);
    SetupContext setup(ctx_, p.module, build_.manifest.entry, bucket_.name, bucket_.shape, config,
                       ctx_.stream());
    p.launch = harness().setup(setup);
    if (!p.launch) throw error("setup returned an empty launch closure");
    return p;
  }

  json measure(const json& request, bool& exiting) {
    const Config config = config_from_json(request.at("config"));
    const std::string key = request.at("key").get<std::string>();
    json answer;
    try {
      Prepared p = prepare(config, key);
      BenchResult r = bench(ctx_, p.launch, ctx_.stream(), bench_);
      answer = {{"state", "measured"},  {"median_ms", r.median_ms}, {"min_ms", r.min_ms},
                {"reps", r.reps},       {"batched", r.batched},     {"warnings", r.warnings},
                {"device", ctx_.name()}};
    } catch (const cuda_error& e) {
      answer = invalid(fmt::format("{}: {}", cu_error_name(e.code()), e.what()));
      exiting = true;
    } catch (const std::exception& e) {
      answer = invalid(e.what());
    }
    release(key, exiting);
    return answer;
  }

  json runoff(const json& request, bool& exiting) {
    const json& inc = request.at("incumbent");
    const json& ch = request.at("challenger");
    const std::string inc_key = inc.at("key").get<std::string>();
    const std::string ch_key = ch.at("key").get<std::string>();
    json answer = json::object();
    std::optional<Prepared> a, b;
    auto set_up = [&](const json& side, std::optional<Prepared>& out, const char* field) {
      try {
        out = prepare(config_from_json(side.at("config")), side.at("key").get<std::string>());
      } catch (const cuda_error& e) {
        answer[field] = fmt::format("{}: {}", cu_error_name(e.code()), e.what());
        exiting = true;
      } catch (const std::exception& e) {
        answer[field] = e.what();
      }
    };
    set_up(inc, a, "incumbent_failure");
    if (!exiting) set_up(ch, b, "challenger_failure");
    if (a && b && !exiting) {
      try {
        PairedBenchResult r = bench_paired(ctx_, a->launch, b->launch, ctx_.stream(), bench_);
        answer = {{"incumbent_ms", r.a_ms},
                  {"challenger_ms", r.b_ms},
                  {"batched", r.batched},
                  {"warnings", r.warnings},
                  {"device", ctx_.name()}};
      } catch (const cuda_error& e) {
        answer = {{"failure", fmt::format("{}: {}", cu_error_name(e.code()), e.what())}};
        exiting = true;
      } catch (const std::exception& e) {
        answer = {{"failure", e.what()}};
      }
    }
    a.reset();
    b.reset();
    release(inc_key, exiting);
    release(ch_key, exiting);
    return answer;
  }

 private:
  static json invalid(const std::string& reason) {
    return {{"state", "invalid"}, {"reason", reason}};
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
  std::string arch_;
  Context ctx_;
  fs::path cache_dir_;
  BenchOptions bench_;
};

// The worker's answers go to a private copy of its standard output; fd 1 itself goes to stderr,
// so that a harness that prints cannot break the protocol.
std::FILE* g_answers = nullptr;

void answer_line(const json& j) {
  std::FILE* out = g_answers != nullptr ? g_answers : stdout;
  const std::string line = j.dump() + "\n";
  std::fwrite(line.data(), 1, line.size(), out);
  std::fflush(out);
}

void take_stdout_for_answers() {
  std::fflush(stdout);
  const int fd = ::dup(STDOUT_FILENO);
  if (fd < 0) return;
  g_answers = ::fdopen(fd, "w");
  ::dup2(STDERR_FILENO, STDOUT_FILENO);
}

int worker_main(const Options& opt) {
  take_stdout_for_answers();
  result<KernelBuild> build = load_kernel_build(opt.manifest);
  if (!build) {
    answer_line({{"ready", false}, {"error", build.error().str()}});
    return exit_bad_input;
  }
  const Bucket* bucket = build->space.bucket(opt.bucket);
  if (bucket == nullptr) {
    answer_line({{"ready", false}, {"error", fmt::format("no bucket '{}'", opt.bucket)}});
    return exit_bad_input;
  }
  std::unique_ptr<Worker> worker;
  std::string driver_text;
  try {
    worker = std::make_unique<Worker>(*build, *bucket, opt.arch, opt.device.value_or(0));
    driver_text = driver_version();
  } catch (const std::exception& e) {
    answer_line({{"ready", false}, {"error", e.what()}});
    return exit_environment;
  }
  answer_line({{"ready", true},
               {"pid", static_cast<long>(::getpid())},
               {"device", worker->context().name()},
               {"driver", driver_text},
               {"arch", worker->context().arch()}});

  std::string line;
  while (std::getline(std::cin, line)) {
    if (line.empty()) continue;
    bool exiting = false;
    json answer;
    try {
      const json request = json::parse(line);
      const std::string op = request.at("op").get<std::string>();
      if (op == "measure") {
        answer = worker->measure(request, exiting);
      } else if (op == "runoff") {
        answer = worker->runoff(request, exiting);
      } else {
        answer = {{"error", fmt::format("unknown op '{}'", op)}};
      }
    } catch (const json::exception& e) {
      answer = {{"error", fmt::format("bad request: {}", e.what())}};
    }
    if (exiting) answer["exiting"] = true;
    answer_line(answer);
    if (exiting) {
      std::fflush(stderr);
      std::_Exit(exit_environment);  // no destructors: the context may be poisoned
    }
  }
  return exit_ok;
}

// ---------------------------------------------------------------------------------------------
// The supervisor

volatile std::sig_atomic_t g_signal = 0;
volatile pid_t g_worker_pid = -1;

extern "C" void on_signal(int sig) {
  g_signal = sig;
  const pid_t pid = g_worker_pid;
  if (pid > 0) {
    ::kill(-pid, SIGKILL);
    ::kill(pid, SIGKILL);
  }
}

/// Thrown out of the objective when a signal asks the run to stop.
struct Interrupted {};

/// The worker could not start: no GPU, no driver, an unreadable manifest on its side.
struct WorkerStartFailure {
  std::string message;
};

class WorkerObjective : public Objective {
 public:
  WorkerObjective(const KernelBuild& build, const Options& opt, std::vector<Config> configs,
                  std::vector<std::string> keys, double timeout_s)
      : build_(build),
        opt_(opt),
        configs_(std::move(configs)),
        keys_(std::move(keys)),
        timeout_s_(timeout_s),
        cache_(effective_cache_dir(build.manifest.cache_dir)) {}

  ~WorkerObjective() override { stop_worker(); }

  const std::vector<Config>& configs() override { return configs_; }
  std::optional<std::string> cache_key(std::size_t index) override { return keys_.at(index); }

  Trial measure(std::size_t index) override {
    check_signal();
    if (auto reason = not_loadable(index)) return Trial::invalid(*reason);
    json request = {
        {"op", "measure"}, {"config", params_json(configs_[index])}, {"key", keys_[index]}};
    std::string failure;
    std::optional<json> answer = exchange(request, timeout_s_, failure);
    if (!answer) return Trial::invalid(failure);
    try {
      if (answer->value("state", "") == "measured") {
        Trial t = Trial::measured(answer->at("median_ms").get<double>(),
                                  answer->at("min_ms").get<double>(),
                                  answer->at("reps").get<std::int64_t>());
        t.batched = answer->value("batched", false);
        t.warnings = answer->value("warnings", std::vector<std::string>{});
        if (answer->contains("device")) t.device = answer->at("device").get<std::string>();
        return t;
      }
      if (answer->value("state", "") == "invalid")
        return Trial::invalid(answer->at("reason").get<std::string>());
    } catch (const json::exception&) {
      // reported below
    }
    drop_worker("answered something unreadable and was killed");
    return Trial::invalid(fmt::format("unreadable answer from the worker: '{}'", answer->dump()));
  }

  std::optional<RunoffPairs> runoff(std::size_t incumbent, std::size_t challenger) override {
    check_signal();
    RunoffPairs pairs;
    pairs.incumbent_failure = not_loadable(incumbent);
    pairs.challenger_failure = not_loadable(challenger);
    if (pairs.incumbent_failure || pairs.challenger_failure) return pairs;
    auto side = [&](std::size_t i) {
      return json{{"config", params_json(configs_[i])}, {"key", keys_[i]}};
    };
    json request = {
        {"op", "runoff"}, {"incumbent", side(incumbent)}, {"challenger", side(challenger)}};
    std::string failure;
    // Two setups and two arms of timing: allow three candidates' time.
    std::optional<json> answer = exchange(request, 3 * timeout_s_, failure);
    if (!answer) {
      pairs.failure = failure;
      return pairs;
    }
    try {
      if (answer->contains("incumbent_failure"))
        pairs.incumbent_failure = answer->at("incumbent_failure").get<std::string>();
      if (answer->contains("challenger_failure"))
        pairs.challenger_failure = answer->at("challenger_failure").get<std::string>();
      if (answer->contains("failure")) pairs.failure = answer->at("failure").get<std::string>();
      if (answer->contains("incumbent_ms")) {
        pairs.incumbent_ms = answer->at("incumbent_ms").get<std::vector<double>>();
        pairs.challenger_ms = answer->at("challenger_ms").get<std::vector<double>>();
        pairs.batched = answer->value("batched", false);
        pairs.warnings = answer->value("warnings", std::vector<std::string>{});
        if (answer->contains("device")) pairs.device = answer->at("device").get<std::string>();
      }
    } catch (const json::exception&) {
      pairs = RunoffPairs{};
      pairs.failure = fmt::format("unreadable answer from the worker: '{}'", answer->dump());
      drop_worker("answered something unreadable and was killed");
      return pairs;
    }
    if (!pairs.incumbent_failure && !pairs.challenger_failure && !pairs.failure &&
        (pairs.incumbent_ms.empty() || pairs.incumbent_ms.size() != pairs.challenger_ms.size())) {
      pairs.failure = fmt::format("unreadable answer from the worker: '{}'", answer->dump());
    }
    return pairs;
  }

  /// How many measuring workers were started (the first, and one after each that died, hung or
  /// exited after a CUDA error, when another candidate followed).
  int workers_started() const noexcept { return workers_started_; }
  /// Called with a line for people when a worker is dropped (why, and that a fresh one follows).
  void on_note(std::function<void(const std::string&)> note) { note_ = std::move(note); }

  /// The device and driver the worker reported (empty until a worker started).
  const std::string& device() const noexcept { return device_; }
  const std::string& driver_text() const noexcept { return driver_; }

 private:
  // Why candidate `index` cannot be measured without asking the worker: no cache entry, or an
  // entry the compiler or the limits refused (these cost no GPU time).
  std::optional<std::string> not_loadable(std::size_t index) const {
    std::optional<CacheEntry> entry = cache_.lookup(keys_[index]);
    if (!entry) {
      return fmt::format("not compiled: run the warm target (cmake --build {} --target warm.{})",
                         build_.manifest.build_dir.string(), build_.manifest.kernel);
    }
    if (!entry->valid())
      return entry->reason.empty() ? std::string(to_string(entry->status)) : entry->reason;
    return std::nullopt;
  }

  void check_signal() const {
    if (g_signal != 0) throw Interrupted{};
  }

  std::vector<std::string> worker_argv() const {
    std::vector<std::string> args = {"--worker",  "--manifest", opt_.manifest, "--bucket",
                                     opt_.bucket, "--arch",     opt_.arch};
    if (opt_.device) {
      args.push_back("--device");
      args.push_back(std::to_string(*opt_.device));
    }
    std::vector<std::string> argv;
    if (const char* cmd = std::getenv("TUNE_RUNNER_WORKER_CMD"); cmd != nullptr && *cmd) {
      // For tests: a stand-in worker, run through the shell with the worker's arguments.
      argv = {"/bin/sh", "-c", "exec " + std::string(cmd) + " \"$@\"", "tune-worker"};
    } else {
      std::error_code ec;
      fs::path self = fs::read_symlink("/proc/self/exe", ec);
      argv = {ec ? std::string("/proc/self/exe") : self.string()};
    }
    argv.insert(argv.end(), args.begin(), args.end());
    return argv;
  }

  void start_worker() {
    worker_ = std::make_unique<Subprocess>(worker_argv());
    g_worker_pid = worker_->pid();
    ++workers_started_;
    std::string line;
    // Creating a context and loading the driver can take a while on a cold GPU.
    const double start_timeout_s = std::max(60.0, timeout_s_);
    const Subprocess::Read r = worker_->read_line(line, start_timeout_s);
    check_signal();
    if (r != Subprocess::Read::line) {
      std::string why;
      if (r == Subprocess::Read::timeout) {
        worker_->kill();
        why = fmt::format("it did not answer within {} s", start_timeout_s);
      } else {
        why = worker_->wait().describe();
      }
      const std::string last = worker_->last_stderr_line();
      stop_worker();
      throw WorkerStartFailure{fmt::format("the measuring worker did not start: {}{}", why,
                                           last.empty() ? "" : ": " + last)};
    }
    json ready;
    try {
      ready = json::parse(line);
    } catch (const json::exception&) {
      stop_worker();
      throw WorkerStartFailure{
          fmt::format("the measuring worker did not start: unreadable answer '{}'", line)};
    }
    if (!ready.value("ready", false)) {
      stop_worker();
      throw WorkerStartFailure{fmt::format("the measuring worker did not start: {}",
                                           ready.value("error", ready.dump()))};
    }
    device_ = ready.value("device", "");
    driver_ = ready.value("driver", "");
  }

  void stop_worker() {
    if (worker_) worker_->kill();
    worker_.reset();
    g_worker_pid = -1;
  }

  // Drops the worker after a failure, saying so: `what` happened to it.
  void drop_worker(const std::string& what) {
    const long pid = worker_ ? static_cast<long>(worker_->pid()) : 0;
    stop_worker();
    if (note_)
      note_(fmt::format("worker pid {} {}; the next candidate gets a fresh worker", pid, what));
  }

  // Sends one request and reads one answer within `timeout_s`; on a timeout, a death or an
  // unreadable line the worker is replaced (lazily) and `failure` says what happened.
  std::optional<json> exchange(const json& request, double timeout_s, std::string& failure) {
    if (worker_ && !worker_->running()) stop_worker();
    if (!worker_) start_worker();
    std::string line;
    Subprocess::Read r = worker_->send_line(request.dump()) ? worker_->read_line(line, timeout_s)
                                                            : Subprocess::Read::eof;
    check_signal();
    if (r == Subprocess::Read::timeout) {
      failure = fmt::format("timed out after {} s", timeout_s);
      drop_worker(failure + " and was killed");
      return std::nullopt;
    }
    if (r == Subprocess::Read::eof) {
      const ExitStatus status = worker_->wait();
      const std::string last = worker_->last_stderr_line();
      failure =
          fmt::format("worker died: {}{}", status.describe(), last.empty() ? "" : ": " + last);
      drop_worker(fmt::format("died ({})", status.describe()));
      return std::nullopt;
    }
    json answer;
    try {
      answer = json::parse(line);
    } catch (const json::exception&) {
      failure = fmt::format("unreadable answer from the worker: '{}'", line);
      drop_worker("answered something unreadable and was killed");
      return std::nullopt;
    }
    if (answer.contains("error")) {
      failure = fmt::format("the worker refused the request: {}", answer["error"].dump());
      drop_worker("refused a request and was killed");
      return std::nullopt;
    }
    if (answer.value("exiting", false)) {
      worker_->wait();
      drop_worker("exited after a CUDA error (its context cannot be trusted)");
    }
    return answer;
  }

  const KernelBuild& build_;
  const Options& opt_;
  std::vector<Config> configs_;
  std::vector<std::string> keys_;
  double timeout_s_;
  KernelCache cache_;
  std::unique_ptr<Subprocess> worker_;
  std::string device_;
  std::string driver_;
  int workers_started_ = 0;
  std::function<void(const std::string&)> note_;
};

std::string trial_line(const Progress& p) {
  const Trial& t = p.trial;
  std::string what;
  if (const auto* m = t.state.measured()) {
    what =
        fmt::format("{:.4f} ms ({} reps{})", m->median_ms, m->reps, t.batched ? ", batched" : "");
  } else {
    what = "invalid: " + t.state.invalid()->reason;
  }
  return fmt::format("[{}/{}] {} {}{}", p.done, p.total, t.id(), what,
                     p.resumed ? " (from the log)" : "");
}

int supervisor_main(const Options& opt) {
  const std::string me = "runner";
  result<KernelBuild> build = load_kernel_build(opt.manifest);
  if (!build) {
    fmt::print(stderr, "{}\n", build.error().str());
    return exit_bad_input;
  }
  const Manifest& manifest = build->manifest;
  const Space& space = build->space;
  const Bucket* bucket = space.bucket(opt.bucket);
  if (bucket == nullptr) {
    fmt::print(stderr, "{}: error: the space of '{}' has no bucket '{}' (it has: {})\n", me,
               manifest.kernel, opt.bucket, quoted_list(space.bucket_names()));
    return exit_bad_input;
  }
  std::string arch = opt.arch;
  if (arch.empty()) {
    if (manifest.archs.size() != 1) {
      fmt::print(stderr, "{}: error: '{}' is declared for several architectures; pass --arch\n", me,
                 manifest.kernel);
      return exit_bad_input;
    }
    arch = manifest.archs.front();
  }
  result<std::vector<std::string>> archs = select_archs(manifest, arch);
  if (!archs) {
    fmt::print(stderr, "{}\n", archs.error().str());
    return exit_bad_input;
  }
  result<std::vector<Config>> configs = space.configs(*bucket);
  if (!configs) {
    fmt::print(stderr, "{}\n", configs.error().str());
    return exit_bad_input;
  }

  Toolchain toolchain;
  std::vector<std::string> keys;
  std::string source;
  try {
    toolchain = manifest_toolchain(manifest);
    CacheKeyer keyer(manifest, space.params_as(), toolchain.fingerprint());
    for (const Config& c : *configs)
      keys.push_back(keyer.key(c, arch).digest);
    source = source_hash(manifest);
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}: error: {}\n", me, e.what());
    return exit_environment;
  }
  const std::string pruned_hash = Space::pruned_space_hash(*configs);

  const double timeout_s = opt.timeout_s.value_or(space.search().timeout_s.value_or(30.0));
  Options worker_opt = opt;  // the worker needs the resolved arch
  worker_opt.arch = arch;
  WorkerObjective objective(*build, worker_opt, *configs, keys, timeout_s);

  Autotuner tuner(manifest.kernel + "/" + bucket->name);
  tuner.arch(arch)
      .log(opt.log)
      .space_hash(pruned_hash)
      .source_hash(source)
      .toolchain(toolchain.fingerprint())
      .require(space.require());
  if (opt.budget_s) {
    tuner.budget(*opt.budget_s);
  } else if (space.search().budget_s) {
    tuner.budget(*space.search().budget_s);
  }
  // The committed winner of this bucket, when the record loads, is the soft incumbent.
  if (result<fs::path> record_path = manifest.record_path(arch); record_path) {
    if (fs::exists(*record_path)) {
      if (result<Record> record = Record::load(*record_path); record) {
        if (const RecordEntry* e = record->get(bucket->name); e != nullptr)
          tuner.soft_incumbent(e->config);
      }
    }
  }
  // Progress: one line per trial, as it is taken.
  tuner.on_progress([&](const Progress& p) {
    fmt::print(stderr, "{}: {}\n", bucket->name, trial_line(p));
    std::fflush(stderr);
  });
  tuner.on_warning(
      [&](const std::string& w) { fmt::print(stderr, "{}: warning: {}\n", bucket->name, w); });
  objective.on_note([&](const std::string& n) {
    fmt::print(stderr, "{}: note: {}\n", bucket->name, n);
    std::fflush(stderr);
  });

  struct sigaction sa {};
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGINT, &sa, nullptr);
  ::sigaction(SIGTERM, &sa, nullptr);

  std::optional<result<Output>> ran;
  try {
    ran.emplace(tuner.run_objective(objective));
  } catch (const Interrupted&) {
    const int sig = g_signal;
    fmt::print(stderr, "{}: interrupted; the log keeps every finished trial\n", bucket->name);
    return 128 + sig;
  } catch (const WorkerStartFailure& e) {
    fmt::print(stderr, "{}: error: {}\n", me, e.message);
    return exit_environment;
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}: error: {}\n", me, e.what());
    return exit_environment;
  }
  if (g_signal != 0) return 128 + g_signal;
  result<Output>& out = *ran;
  if (!out) {
    fmt::print(stderr, "{}\n", out.error().str());
    return exit_bad_input;
  }

  json res = {
      {"kernel", manifest.kernel},
      {"bucket", bucket->name},
      {"arch", arch},
      {"pruned_space_hash", pruned_hash},
      {"device", objective.device().empty() ? json() : json(objective.device())},
      {"driver", objective.driver_text().empty() ? json() : json(objective.driver_text())},
      {"trials", out->trials.size()},
      {"resumed", out->resumed},
      {"budget_exhausted", out->budget_exhausted},
      {"incumbent_failure", out->incumbent_failure ? json(*out->incumbent_failure) : json()},
      {"runoff", out->runoff ? json(*out->runoff) : json()},
      {"best", json()}};
  std::size_t invalid = 0;
  for (const Trial& t : out->trials)
    invalid += !t.is_measured();
  res["invalid"] = invalid;
  if (out->best_index) {
    const Trial& t = out->trials[*out->best_index];
    const auto* m = t.state.measured();
    res["best"] = {
        {"config_id", t.id()},       {"params", params_json(t.config)},
        {"median_ms", m->median_ms}, {"min_ms", m->min_ms},
        {"reps", m->reps},           {"cache_key", t.cache_key ? json(*t.cache_key) : json()},
        {"key_schema", "k1"}};
  }
  res["workers_started"] = objective.workers_started();
  if (!opt.result.empty()) write_file_atomic(opt.result, res.dump(2) + "\n", "result-save");

  if (out->incumbent_failure) {
    fmt::print(stderr, "{}: error: {}\n", bucket->name, *out->incumbent_failure);
    return exit_negative;
  }
  if (!out->best) {
    fmt::print(stderr, "{}: error: no valid config ({} trials, all invalid)\n", bucket->name,
               out->trials.size());
    return exit_negative;
  }
  const Trial& best = out->trials[*out->best_index];
  std::string decided = "sequential medians";
  if (out->runoff) {
    decided =
        fmt::format("runoff {} ({} pairs, {:+.2f}%, p={:.3g})", to_string(out->runoff->outcome),
                    out->runoff->pairs, out->runoff->median_diff_pct, out->runoff->p_value);
  }
  fmt::print(stderr, "{}: winner {} at {:.4f} ms, by {}\n", bucket->name, best.id(),
             best.state.measured()->median_ms, decided);
  return exit_ok;
}

}  // namespace

int runner_main(int argc, char** argv) {
  CLI::App app{"measures one bucket of a tunable kernel on the GPU (the tune runner)"};
  Options opt;
  app.add_flag("--worker", opt.worker, "run as the measuring worker (started by the supervisor)");
  app.add_option("--manifest", opt.manifest, "the kernel's manifest.json")->required();
  app.add_option("--bucket", opt.bucket, "the bucket to tune")->required();
  app.add_option("--log", opt.log, "the bucket's trial log (supervisor)");
  app.add_option("--arch", opt.arch, "the architecture (default: the manifest's only one)");
  app.add_option("--device", opt.device,
                 "the device index (default 0; CUDA_VISIBLE_DEVICES applies)");
  app.add_option("--budget", opt.budget_s, "wall-clock budget of the search in seconds");
  app.add_option("--timeout", opt.timeout_s,
                 "per-candidate timeout in seconds (default: the "
                 "space's [search] timeout_s, else 30)");
  app.add_option("--result", opt.result, "write the bucket's result here as JSON");
  app.footer(
      "Exit status: 0 with a winner, 1 without one, 2 bad input, 3 a broken environment "
      "(no GPU), 130/143 interrupted.");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? exit_ok : exit_bad_input;
  }
  if (opt.worker) {
    if (opt.arch.empty()) {
      answer_line({{"ready", false}, {"error", "--worker needs --arch"}});
      return exit_bad_input;
    }
    return worker_main(opt);
  }
  if (opt.log.empty()) {
    fmt::print(stderr, "runner: error: --log is required (the bucket's trial log)\n");
    return exit_bad_input;
  }
  return supervisor_main(opt);
}

}  // namespace tune
