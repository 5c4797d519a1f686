// `tuner slurm submit --manifest M --shards N [--arch A] [--dir D] [--partition P] [--time T]
// [--sbatch-option O]...`: runs a kernel's tune on a Slurm cluster without a scheduler of our
// own. It writes two batch scripts into D (default `<log_dir>/slurm`) and submits them with
// sbatch: `shards.sbatch`, a job array of N tasks, one shard each (`tuner run --shard
// $SLURM_ARRAY_TASK_ID/N --out D/shards`) on one GPU (`--gres=gpu:1`; Slurm sets
// CUDA_VISIBLE_DEVICES), and `merge.sbatch`, the merge (`tuner merge --from D/shards`) on one GPU,
// which waits for every shard (`--dependency=afterok:<array>`). The job ids go into D/slurm.json.
// Shared storage is assumed: the build tree, the kernel cache and D are seen by every node, as on
// any cluster with a shared home or project file system.
//
// `tuner slurm status --manifest M [--arch A] [--dir D]`: each shard (done, or its state in the
// queue, or failed), and the merge (its state, or its exit status). Exit codes: submit 0
// submitted, 2 bad usage or input, 3 sbatch failed or missing; status 0 the merge wrote the
// record, 1 not yet or failed (the lines say which), 2 nothing submitted, 3 squeue missing.
#include <cctype>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <tuner/cli/cli_checks.hpp>
#include <tuner/cli/commands.hpp>
#include <tuner/cli/kernel_choice.hpp>
#include <tuner/core/base/atomic_file.hpp>
#include <tuner/core/base/hash.hpp>
#include <tuner/core/base/text.hpp>
#include <tuner/core/process/subprocess.hpp>
#include <tuner/core/scale/shard.hpp>

namespace tune::cli {

namespace fs = std::filesystem;

namespace {

struct SlurmOptions {
  std::string manifest;
  std::string arch;
  std::string dir;
  int shards = 0;
  std::string partition;
  std::string time;
  std::vector<std::string> sbatch_options;
};

// A word for sh, in single quotes.
std::string quoted(const std::string& s) {
  std::string out = "'";
  for (char c : s)
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string header(const std::string& name, const std::string& output, const SlurmOptions& opt) {
  std::string h = fmt::format(
      "#!/bin/sh\n#SBATCH --job-name={}\n#SBATCH --gres=gpu:1\n"
      "#SBATCH --output={}\n",
      name, output);
  if (!opt.partition.empty()) h += fmt::format("#SBATCH --partition={}\n", opt.partition);
  if (!opt.time.empty()) h += fmt::format("#SBATCH --time={}\n", opt.time);
  for (const std::string& o : opt.sbatch_options)
    h += fmt::format("#SBATCH {}\n", o);
  return h;
}

// sbatch --parsable: the job id (before a ';cluster'), or a message.
result<std::string> submit(std::vector<std::string> argv) {
  Captured c;
  try {
    c = run_captured(argv, {{}, 120.0, 0, {}});
  } catch (const std::exception& e) {
    throw error(fmt::format("{}: is this a Slurm submit host?", e.what()));
  }
  if (!c.status.success())
    return fail("", 0, 0,
                fmt::format("sbatch failed ({}): {}", c.status.describe(),
                            last_line(c.err.empty() ? c.out : c.err)));
  std::string id = trim(c.out);
  id = id.substr(0, id.find(';'));
  if (id.empty()) return fail("", 0, 0, "sbatch printed no job id");
  return id;
}

int run_submit(const SlurmOptions& opt) {
  std::optional<ChosenKernel> chosen = load_chosen_kernel(opt.manifest, opt.arch, ArchChoice::one);
  if (!chosen) return exit_bad_input;
  const Manifest& manifest = chosen->build.manifest;
  const std::string& arch = chosen->archs.front();
  const fs::path dir = opt.dir.empty() ? manifest.log_dir / "slurm" : fs::absolute(opt.dir);
  const fs::path shards = dir / "shards";
  fs::create_directories(shards / arch);
  // Summaries of an earlier submission would count as done; the logs stay, so shards resume.
  for (const auto& e : fs::directory_iterator(shards / arch))
    if (e.path().extension() == ".json") fs::remove(e.path());
  fs::remove(dir / "merge.status");
  const std::string tuner = fs::read_symlink("/proc/self/exe").string();
  const std::string name = fmt::format("tune.{}.{}", manifest.kernel, arch);
  const std::string shard_script =
      header(name + ".shards", (dir / "shard-%a.out").string(), opt) +
      fmt::format("#SBATCH --array=1-{}\n", opt.shards) +
      fmt::format(
          "# Shard $SLURM_ARRAY_TASK_ID of {} of '{}' ({}), written by tuner slurm submit\n",
          opt.shards, manifest.kernel, arch) +
      fmt::format(
          "exec {} run --manifest {} --arch {} --shard \"$SLURM_ARRAY_TASK_ID/{}\" --out {}\n",
          quoted(tuner), quoted(manifest.path.string()), arch, opt.shards, quoted(shards.string()));
  const std::string merge_script =
      header(name + ".merge", (dir / "merge.out").string(), opt) +
      fmt::format("# The merge of the {} shards of '{}' ({}), written by tuner slurm submit\n",
                  opt.shards, manifest.kernel, arch) +
      fmt::format("{} merge --manifest {} --arch {} --from {}\n", quoted(tuner),
                  quoted(manifest.path.string()), arch, quoted(shards.string())) +
      fmt::format("status=$?\necho \"$status\" > {}\nexit \"$status\"\n",
                  quoted((dir / "merge.status").string()));
  write_file_atomic(dir / "shards.sbatch", shard_script);
  write_file_atomic(dir / "merge.sbatch", merge_script);

  result<std::string> array = submit({"sbatch", "--parsable", (dir / "shards.sbatch").string()});
  if (!array) {
    fmt::print(stderr, "tuner slurm: error: {}\n", array.error().message);
    return exit_environment;
  }
  result<std::string> merge = submit(
      {"sbatch", "--parsable", "--dependency=afterok:" + *array, (dir / "merge.sbatch").string()});
  if (!merge) {
    fmt::print(stderr, "tuner slurm: error: {} (the shards are submitted as job {})\n",
               merge.error().message, *array);
    return exit_environment;
  }
  const nlohmann::json j{{"schema_version", 1},  {"kernel", manifest.kernel}, {"arch", arch},
                         {"shards", opt.shards}, {"array_job", *array},       {"merge_job", *merge},
                         {"dir", dir.string()}};
  write_file_atomic(dir / "slurm.json", j.dump(2) + "\n");
  fmt::print(
      "{}: submitted {} shards as job array {} (one GPU each) and the merge as job {} "
      "(after them); 'tuner slurm status --manifest {}{}' reports them\n",
      name, opt.shards, *array, *merge, manifest.path.string(),
      opt.dir.empty() ? "" : " --dir " + dir.string());
  return exit_ok;
}

// The queue's jobs of `id` (array tasks expanded): id -> "STATE" or "STATE (reason)".
std::map<std::string, std::string> queued(const std::string& id) {
  Captured c = run_captured({"squeue", "-h", "-r", "-j", id, "-o", "%i|%T|%r"}, {{}, 60.0, 0, {}});
  std::map<std::string, std::string> out;
  if (!c.status.success()) return out;  // a job no longer known is no longer queued
  for (std::size_t pos = 0; pos < c.out.size();) {
    std::size_t end = c.out.find('\n', pos);
    if (end == std::string::npos) end = c.out.size();
    const std::string line = c.out.substr(pos, end - pos);
    pos = end + 1;
    const std::size_t a = line.find('|');
    const std::size_t b = line.find('|', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    std::string state = line.substr(a + 1, b - a - 1);
    const std::string reason = line.substr(b + 1);
    for (char& ch : state)
      ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    out[line.substr(0, a)] =
        reason.empty() || reason == "None" ? state : state + " (" + reason + ")";
  }
  return out;
}

int run_status(const SlurmOptions& opt) {
  std::optional<KernelBuild> build = load_build(opt.manifest);
  if (!build) return exit_bad_input;
  const Manifest& manifest = build->manifest;
  const fs::path dir = opt.dir.empty() ? manifest.log_dir / "slurm" : fs::absolute(opt.dir);
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(read_file(dir / "slurm.json"));
  } catch (const std::exception&) {
    fmt::print(stderr,
               "tuner slurm: error: nothing submitted from {}: run 'tuner slurm submit --manifest "
               "{} --shards N' first\n",
               dir.string(), manifest.path.string());
    return exit_bad_input;
  }
  const std::string arch = j.value("arch", "");
  const int n = j.value("shards", 0);
  const std::string array = j.value("array_job", "");
  const std::string merge = j.value("merge_job", "");
  std::map<std::string, std::string> queue;
  try {
    queue = queued(array);
    for (auto& [k, v] : queued(merge))
      queue[k] = v;
  } catch (const std::exception& e) {
    fmt::print(stderr, "tuner slurm: error: {}\n", e.what());
    return exit_environment;
  }
  fmt::print("tune.{}.{}: job array {} ({} shards), merge job {}\n", manifest.kernel, arch, array,
             n, merge);
  for (int k = 1; k <= n; ++k) {
    const std::string task = fmt::format("{}_{}", array, k);
    std::string state;
    if (fs::exists(shard_summary_path(dir / "shards", arch, {k, n})))
      state = "done";
    else if (auto it = queue.find(task); it != queue.end())
      state = fmt::format("{} (job {})", it->second, task);
    else
      state = fmt::format("failed or cancelled (see {})",
                          (dir / fmt::format("shard-{}.out", k)).string());
    fmt::print("  shard {}/{}: {}\n", k, n, state);
  }
  int status = exit_negative;
  std::string state;
  std::error_code ec;
  if (auto it = queue.find(merge); it != queue.end()) {
    state = fmt::format("{} (job {})", it->second, merge);
  } else if (fs::exists(dir / "merge.status", ec)) {
    const std::string code = trim(read_file(dir / "merge.status"));
    if (code == "0") {
      state = "done: record written";
      status = exit_ok;
    } else {
      state = fmt::format("failed (exit status {}; see {})", code, (dir / "merge.out").string());
    }
  } else {
    state = fmt::format("did not run (see {})", (dir / "merge.out").string());
  }
  fmt::print("  merge: {}\n", state);
  return status;
}

}  // namespace

void add_slurm_command(CLI::App& app, Run& run) {
  auto opt = std::make_shared<SlurmOptions>();
  auto* sub = app.add_subcommand(
      "slurm", "run a kernel's tune as a Slurm job array of shards and a merge job");
  sub->require_subcommand(1);
  sub->footer(
      "Exit status: that of the subcommand ('tuner slurm submit --help', 'tuner slurm status "
      "--help'); 2 bad usage.");
  auto* submit_cmd = sub->add_subcommand(
      "submit", "write and submit the job array (one shard per GPU) and the dependent merge job");
  auto* status_cmd = sub->add_subcommand("status", "report the shards and the merge");
  for (CLI::App* c : {submit_cmd, status_cmd}) {
    c->add_option("--manifest", opt->manifest, "the kernel's manifest.json")->required();
    c->add_option("--dir", opt->dir,
                  "the folder of the scripts, job outputs and shard logs (default: "
                  "<log_dir>/slurm)");
  }
  submit_cmd
      ->add_option("--shards", opt->shards,
                   fmt::format("the number of shards (array tasks), at most {}", max_shards))
      ->required()
      ->check(whole_number(1, max_shards));
  submit_cmd->add_option("--arch", opt->arch,
                         "the architecture (default: the manifest's only one)");
  submit_cmd->add_option("--partition", opt->partition, "sbatch --partition");
  submit_cmd->add_option("--time", opt->time, "sbatch --time, per job");
  submit_cmd->add_option("--sbatch-option", opt->sbatch_options,
                         "one more #SBATCH line, e.g. --sbatch-option=--account=gpu; repeatable");
  submit_cmd->footer("Exit status: 0 submitted, 2 bad usage or input, 3 sbatch missing or failed.");
  status_cmd->footer(
      "Exit status: 0 the merge wrote the record, 1 not yet or failed, 2 nothing submitted, 3 "
      "squeue missing.");
  submit_cmd->callback([&run, opt] { run = [opt] { return run_submit(*opt); }; });
  status_cmd->callback([&run, opt] { run = [opt] { return run_status(*opt); }; });
}

}  // namespace tune::cli
