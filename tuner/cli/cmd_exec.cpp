// `tuner exec`: the engine-scale objective from the command line. For each config of one
// bucket it runs a command (an argument vector, no shell) with the config in its environment
// and reads the time (or, with --maximize, the score) from the last line of its standard
// output. The search itself (log, resume, incumbents, budget) is the Autotuner's.
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <tuner/cli/cli_checks.hpp>
#include <tuner/cli/commands.hpp>
#include <tuner/core/base/json_text.hpp>
#include <tuner/core/base/safe_file.hpp>
#include <tuner/core/base/text.hpp>
#include <tuner/core/process/stop_signals.hpp>
#include <tuner/core/process/subprocess.hpp>
#include <tuner/core/search/autotuner.hpp>
#include <tuner/core/space/space.hpp>

extern char** environ;

namespace tune::cli {
namespace {

struct ExecOptions {
  std::string space;
  std::string bucket;
  std::string log;
  std::optional<double> budget_s;
  std::optional<double> timeout_s;
  bool maximize = false;
  std::string arch;
  bool json = false;
  std::vector<std::string> command;
};

// Thrown out of the objective when a stop signal arrives: nothing is logged for the candidate.
struct Interrupted {
  int signal;
};

constexpr std::size_t max_kept_output = 64 * 1024;

// The space hash for the log's header: the space's without its stop rules and its [bench]
// table (the command measures itself), so that a resumed run may be given more evaluations or
// budget, or other timing settings for `tuner run`, in the space file. A log written before
// names the whole space hash, or the one with [bench] in it: it keeps resuming with that one.
std::string log_space_hash(const Space& space, const std::string& log) {
  std::ifstream in;
  if (!not_regular_problem(log)) in.open(log, std::ios::binary);  // a FIFO would block
  std::string first(4096, '\0');
  in.read(first.data(), static_cast<std::streamsize>(first.size()));
  first.resize(static_cast<std::size_t>(in.gcount()));
  const std::string header = first.substr(0, first.find('\n'));
  for (const std::string& hash : {space.space_hash(), space.search_hash()})
    if (header.find("\"space_hash\":\"" + hash + "\"") != std::string::npos) return hash;
  return space.exec_hash();
}

// "1.5" -> 1.5; nullopt unless the whole text is one number.
std::optional<double> parse_number(const std::string& text) {
  if (text.empty()) return std::nullopt;
  errno = 0;
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || errno == ERANGE) return std::nullopt;
  return v;
}

// What the command reported on its last line of standard output, as a trial.
Trial read_answer(const std::string& line) {
  if (line.empty()) return Trial::invalid("no result on standard output");
  auto unreadable = [&] {
    return Trial::invalid(fmt::format("unreadable result '{}'", shorten(line)));
  };
  if (std::optional<double> v = parse_number(line)) return Trial::measured(*v, *v, 1);
  if (line.front() != '{') return unreadable();
  nlohmann::json j = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return unreadable();
  auto median = j.find("median_ms");
  if (median == j.end() || !median->is_number()) return unreadable();
  double min = median->get<double>();
  if (auto it = j.find("min_ms"); it != j.end() && !it->is_null()) {
    if (!it->is_number()) return unreadable();
    min = it->get<double>();
  }
  std::int64_t reps = 1;
  if (auto it = j.find("reps"); it != j.end() && !it->is_null()) {
    if (!it->is_number_integer()) return unreadable();
    reps = it->get<std::int64_t>();
  }
  return Trial::measured(median->get<double>(), min, reps);
}

// Whether `name` can be run: a path to an executable file, or a command found on PATH.
std::optional<std::string> find_command_problem(const std::string& name) {
  auto executable = [](const std::string& p) {
    struct stat st {};
    return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
  };
  if (name.find('/') != std::string::npos) {
    if (executable(name)) return std::nullopt;
    return fmt::format(
        "cannot run '{}': {}", name,
        ::access(name.c_str(), F_OK) == 0 ? "not an executable file" : "no such file");
  }
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    std::size_t colon = dirs.find(':');
    std::string dir(dirs.substr(0, colon));
    if (executable((dir.empty() ? std::string(".") : dir) + "/" + name)) return std::nullopt;
    if (colon == std::string_view::npos) break;
    dirs.remove_prefix(colon + 1);
  }
  return fmt::format("cannot run '{}': no such command on PATH", name);
}

class CommandObjective : public Objective {
 public:
  CommandObjective(std::vector<Config> configs, const Bucket& bucket,
                   std::vector<std::string> command, std::optional<double> timeout_s)
      : configs_(std::move(configs)),
        bucket_(bucket),
        command_(std::move(command)),
        timeout_s_(timeout_s) {}

  const std::vector<Config>& configs() override { return configs_; }

  Trial measure(std::size_t index) override {
    if (const int sig = StopSignals::received()) throw Interrupted{sig};
    return run(environment(configs_[index]));
  }

 private:
  // The inherited environment without TUNE_* variables of an outer run, plus this config's.
  std::vector<std::string> environment(const Config& config) const {
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
      std::string_view var(*e);
      if (var.starts_with("TUNE_PARAM_") || var.starts_with("TUNE_SHAPE_") ||
          var.starts_with("TUNE_CONFIG_ID=") || var.starts_with("TUNE_BUCKET="))
        continue;
      env.emplace_back(var);
    }
    env.push_back("TUNE_CONFIG_ID=" + config.id());
    env.push_back("TUNE_BUCKET=" + bucket_.name);
    for (const auto& [name, value] : config.params())
      env.push_back(fmt::format("TUNE_PARAM_{}={}", name, value.plain()));
    for (const auto& [name, value] : bucket_.shape)
      env.push_back(fmt::format("TUNE_SHAPE_{}={}", name, value.plain()));
    return env;
  }

  Trial run(std::vector<std::string> env) {
    CaptureOptions options;
    options.env = std::move(env);
    options.timeout_s = timeout_s_;
    options.keep_bytes = max_kept_output;
    options.stop = [] { return StopSignals::received() != 0; };
    const Captured c = run_captured(command_, options);
    if (c.stopped) throw Interrupted{StopSignals::received()};

    const std::string detail = shorten(last_line(c.err));
    const std::string suffix = detail.empty() ? "" : ": " + detail;
    if (c.timed_out) return Trial::invalid(fmt::format("timed out after {} s", *timeout_s_));
    if (c.status.signaled)
      return Trial::invalid(
          fmt::format("killed by signal {}{}", signal_name(c.status.signal), suffix));
    if (c.status.code != 0)
      return Trial::invalid(fmt::format("exit status {}{}", c.status.code, suffix));
    return read_answer(last_line(c.out));
  }

  std::vector<Config> configs_;
  const Bucket& bucket_;
  std::vector<std::string> command_;
  std::optional<double> timeout_s_;
};

std::string trial_summary(const Trial& t, bool maximize) {
  if (const auto* m = t.state.measured())
    return maximize ? fmt::format("score {}", m->median_ms) : fmt::format("{} ms", m->median_ms);
  return "invalid: " + t.state.invalid()->reason;
}

int run_exec(const ExecOptions& opt) {
  constexpr std::string_view me = "tuner exec";
  if (opt.log.empty()) {
    fmt::print(stderr, "{}: error: --log must name a file, got ''\n", me);
    return exit_bad_input;
  }
  if (valid_utf8(opt.arch) != opt.arch) {  // it goes into the log header, which is JSON
    fmt::print(stderr, "{}: error: --arch must be UTF-8 text, got '{}'\n", me, printable(opt.arch));
    return exit_bad_input;
  }
  result<Space> loaded = Space::load(opt.space);
  if (!loaded) {
    fmt::print(stderr, "{}\n", loaded.error().str());
    return exit_bad_input;
  }
  const Space& space = *loaded;
  const Bucket* bucket = nullptr;
  if (opt.bucket.empty() && space.buckets().size() == 1) {
    bucket = &space.buckets().front();
  } else if (opt.bucket.empty()) {
    fmt::print(stderr, "{}: error: '{}' has several buckets: name one with --bucket ({})\n", me,
               opt.space, quoted_list(space.bucket_names()));
    return exit_bad_input;
  } else if (result<const Bucket*> found = space.find_bucket(opt.bucket); found) {
    bucket = *found;
  } else {
    fmt::print(stderr, "{}\n", found.error().str());
    return exit_bad_input;
  }
  result<std::vector<Config>> configs = space.configs(*bucket);
  if (!configs) {
    fmt::print(stderr, "{}\n", configs.error().str());
    return exit_bad_input;
  }
  if (auto problem = find_command_problem(opt.command.front())) {
    fmt::print(stderr, "{}: error: {}\n", me, *problem);
    return exit_bad_input;
  }
  const std::optional<double> timeout = opt.timeout_s ? opt.timeout_s : space.search().timeout_s;

  CommandObjective objective(*configs, *bucket, opt.command, timeout);
  Autotuner tuner(space.kernel() + "/" + bucket->name);
  tuner.log(opt.log)
      .arch(opt.arch)
      .space_hash(log_space_hash(space, opt.log))
      .require(space.require())
      .maximize(opt.maximize);
  tuner.search(space.search());  // the strategy, its stop rules and the space's budget
  if (opt.budget_s) tuner.budget(*opt.budget_s);
  tuner.on_warning([](const std::string& w) { fmt::print(stderr, "{}\n", warning_line(w)); });
  if (::isatty(2)) {
    tuner.on_progress([&](const Progress& p) {
      fmt::print(stderr, "[{}/{}] {}: {}{}\n", p.done, p.total, p.trial.id(),
                 trial_summary(p.trial, opt.maximize), p.resumed ? " (resumed)" : "");
    });
  }

  StopSignals stop_signals;  // SIGINT/SIGTERM end the run between two logged trials
  result<Output> ran = [&]() -> result<Output> {
    try {
      return tuner.run_objective(objective);
    } catch (const Interrupted& stop) {
      return fail("", 0, 0, fmt::format("interrupted by {}", signal_name(stop.signal)));
    }
  }();
  if (!ran) {
    if (const int sig = StopSignals::received()) {
      fmt::print(stderr, "{}: {}; the log keeps every completed trial: run again to resume\n", me,
                 ran.error().message);
      return exit_interrupted(sig);
    }
    const diagnostic& d = ran.error();
    if (d.path.empty())
      fmt::print(stderr, "{}: error: {}\n", me, d.message);
    else
      fmt::print(stderr, "{}\n", d.str());
    return exit_bad_input;
  }
  const Output& out = *ran;

  std::size_t invalid = 0;
  for (const Trial& t : out.trials)
    invalid += t.is_measured() ? 0 : 1;
  fmt::print(stderr, "{}: {} of {} configs ({} resumed, {} invalid){}\n", me, out.trials.size(),
             configs->size(), out.resumed, invalid,
             out.budget_exhausted ? "; the budget ran out" : "");

  if (opt.json) {
    nlohmann::json doc;
    doc["best"] =
        out.best ? nlohmann::json{{"id", out.best->id()}, {"params", *out.best}} : nlohmann::json();
    doc["trials"] = nlohmann::json::array();
    for (const Trial& t : out.trials)
      doc["trials"].push_back(to_json(t));
    fmt::print("{}\n", dump_json(doc, 2));
  }
  if (out.incumbent_failure) {
    fmt::print(stderr, "{}: error: {}\n", me, *out.incumbent_failure);
    return exit_negative;
  }
  if (!out.best) {
    fmt::print(stderr, "{}: nothing valid: {}\n", me,
               out.trials.empty() ? "no config was measured" : "every measured config was invalid");
    return exit_negative;
  }
  if (!opt.json)
    fmt::print("best: {} ({})\n", out.best->id(),
               trial_summary(out.trials[*out.best_index], opt.maximize));
  return exit_ok;
}

}  // namespace

void add_exec_command(CLI::App& app, Run& run) {
  auto opt = std::make_shared<ExecOptions>();
  auto* sub = app.add_subcommand(
      "exec",
      "tune a whole command: run it once per config and read its time from the last line of its "
      "standard output");
  sub->footer(
      "The command runs without a shell, once per config of the bucket, with TUNE_CONFIG_ID,\n"
      "TUNE_BUCKET, TUNE_PARAM_<NAME> and TUNE_SHAPE_<NAME> (names as declared) in its\n"
      "environment. Its last line of standard output is a number of milliseconds, or a JSON\n"
      "object with median_ms and optionally min_ms and reps (with --maximize: a positive score,\n"
      "higher is better). A non-zero exit, a signal, a timeout or an unreadable answer makes the\n"
      "config invalid, with the reason. Incumbents (require) are measured first whatever the\n"
      "budget; the log makes the run resumable.\n"
      "Exit status: 0 a best config was found, 1 nothing valid or an incumbent failed, 2 bad\n"
      "usage or input (a space that does not load, a log of another search or locked by\n"
      "another writer), 3 a broken environment, 130/143 interrupted by SIGINT/SIGTERM.");
  sub->add_option("space", opt->space, "the search space (TOML)")->required();
  sub->add_option("--bucket", opt->bucket,
                  "the bucket to tune (may be left out when the space has only one)");
  sub->add_option("--log", opt->log, "the trial log (JSON Lines); created if missing")->required();
  sub->add_option("--budget", opt->budget_s,
                  "wall-clock budget in seconds (default: the space's [search] budget_s)")
      ->check(seconds(/*zero_allowed=*/true));
  sub->add_option("--timeout", opt->timeout_s,
                  "seconds before one run is killed (default: the space's [search] timeout_s)")
      ->check(seconds(/*zero_allowed=*/false));
  sub->add_flag("--maximize", opt->maximize, "the command reports a score: higher is better");
  sub->add_option("--arch", opt->arch, "the architecture to record in the log header");
  sub->add_flag("--json", opt->json, "print the best config and every trial as JSON on stdout");
  sub->add_option("command", opt->command, "the command and its arguments, after --")->required();
  sub->callback([&run, opt] { run = [opt] { return run_exec(*opt); }; });
}

}  // namespace tune::cli
