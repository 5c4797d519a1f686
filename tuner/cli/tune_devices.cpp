// `TUNE_DEVICES=0,1,... cmake --build build --target tune` (or `all`): `tuner tune` measures a
// stale architecture on several GPUs of this host at once. It first asks one worker per device
// which device it is (devices of different kinds are refused: a record is per architecture and
// device kind), then runs one `tuner run --shard K/N --device D` per device, in parallel, each
// into `<log_dir>/devices`, their lines prefixed `[gpu D]`, and finally the merge (tuner merge)
// with the runoff on the first listed device. The shards' logs stay, so an interrupted tune
// resumes where each shard stopped.
#include <signal.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <fmt/core.h>

#include <tuner/cli/commands.hpp>
#include <tuner/core/base/text.hpp>
#include <tuner/core/process/stop_signals.hpp>
#include <tuner/core/process/subprocess.hpp>
#include <tuner/core/scale/shard.hpp>
#include <tuner/core/scale/shard_merge.hpp>
#include <tuner/core/tune/kernel_tune.hpp>

namespace tune::cli {

namespace fs = std::filesystem;

namespace {

// Every GPU of this host: the devices CUDA_VISIBLE_DEVICES shows when it is set, counted as the
// driver reads it (visible_device_count: up to its first entry that is not a device; they are
// numbered from 0), else what `nvidia-smi -L` lists.
result<std::vector<int>> all_devices() {
  std::size_t n = 0;
  if (const char* visible = std::getenv("CUDA_VISIBLE_DEVICES"); visible != nullptr) {
    n = visible_device_count(visible);
    if (n == 0)
      return fail("", 0, 0,
                  fmt::format("TUNE_DEVICES=all: CUDA_VISIBLE_DEVICES='{}' shows no GPU (CUDA "
                              "stops at its first entry that is not a device index or UUID)",
                              printable(shorten(visible, 200))));
  } else {
    Captured c;
    try {
      c = run_captured({"nvidia-smi", "-L"}, {{}, 30.0, 0, {}});
    } catch (const std::exception& e) {
      return fail("", 0, 0,
                  fmt::format("TUNE_DEVICES=all: cannot list the GPUs ({}); list them instead, "
                              "e.g. TUNE_DEVICES=0,1",
                              e.what()));
    }
    for (std::size_t pos = 0; (pos = c.out.find("GPU ", pos)) != std::string::npos; ++pos)
      if (pos == 0 || c.out[pos - 1] == '\n') ++n;
  }
  if (n == 0) return fail("", 0, 0, "TUNE_DEVICES=all: this host has no GPU");
  std::vector<int> out;
  for (std::size_t i = 0; i < n; ++i)
    out.push_back(static_cast<int>(i));
  return out;
}

// The kinds of `devices`, asked of one worker each; a refusal's exit code, or exit_ok.
int check_kinds(const KernelBuild& build, const std::string& arch, const std::vector<int>& devices,
                const std::string& target) {
  const Manifest& manifest = build.manifest;
  const std::string& bucket = build.space.buckets().front().name;
  std::vector<std::string> kinds;
  bool mixed = false;
  std::string first;
  for (int d : devices) {
    try {
      const WorkerHello hello =
          worker_hello(process_launcher(worker_command(manifest, bucket, arch, d)), 120);
      kinds.push_back(fmt::format("{} '{}'", d, hello.device));
      if (kinds.size() == 1) first = hello.device;
      mixed = mixed || hello.device != first;
    } catch (const std::exception& e) {
      fmt::print(stderr, "{}: error: device {}: {}\n", target, d, e.what());
      return exit_environment;
    }
  }
  if (mixed) {
    fmt::print(stderr,
               "{}: error: TUNE_DEVICES lists devices of different kinds ({}); a record is per "
               "device kind: list devices of one kind\n",
               target, join(kinds, ", "));
    return exit_bad_input;
  }
  fmt::print(stderr, "{}: {} devices of one kind: {}\n", target, devices.size(), join(kinds, ", "));
  return exit_ok;
}

// One shard per device, in parallel; the first failure's exit code, or exit_ok.
int run_shards(const Manifest& manifest, const std::string& arch, const std::vector<int>& devices,
               const fs::path& out, const std::string& target) {
  const int n = static_cast<int>(devices.size());
  std::vector<std::unique_ptr<Subprocess>> shards;
  SpawnOptions spawn;
  spawn.merge_stderr = true;
  for (int k = 1; k <= n; ++k) {
    const int d = devices[static_cast<std::size_t>(k - 1)];
    shards.push_back(std::make_unique<Subprocess>(
        std::vector<std::string>{fs::read_symlink("/proc/self/exe").string(), "run", "--manifest",
                                 manifest.path.string(), "--arch", arch, "--shard",
                                 ShardSpec{k, n}.str(), "--device", std::to_string(d), "--out",
                                 out.string()},
        spawn));
  }
  std::vector<bool> done(shards.size(), false);
  std::size_t left = shards.size();
  bool stopping = false;
  while (left > 0) {
    if (StopSignals::received() && !stopping) {
      stopping = true;  // each shard stops its worker and keeps its log consistent
      for (auto& s : shards)
        if (s->running()) ::kill(s->pid(), SIGTERM);
    }
    for (std::size_t i = 0; i < shards.size(); ++i) {
      if (done[i]) continue;
      std::string line;
      const Subprocess::Read r = shards[i]->read_line(line, 0.05);
      if (r == Subprocess::Read::line) {
        fmt::print(stderr, "[gpu {}] {}\n", devices[i], line);
        std::fflush(stderr);
      } else if (r == Subprocess::Read::eof) {
        done[i] = true;
        --left;
      }
    }
  }
  int status = exit_ok;
  for (std::size_t i = 0; i < shards.size(); ++i) {
    const ExitStatus s = shards[i]->wait();
    if (s.success()) continue;
    fmt::print(stderr, "{}: error: shard {} on device {} failed ({})\n", target,
               ShardSpec{static_cast<int>(i + 1), n}.str(), devices[i], s.describe());
    if (status == exit_ok) status = s.signaled ? exit_interrupted(s.signal) : s.code;
  }
  if (const int sig = StopSignals::received()) return exit_interrupted(sig);
  return status;
}

}  // namespace

result<std::vector<int>> devices_from_env() {
  const char* env = std::getenv("TUNE_DEVICES");
  if (env == nullptr || trim(env).empty()) return std::vector<int>{};
  if (trim(env) == "all") return all_devices();
  result<std::vector<int>> list = parse_device_list(env);
  if (!list) return fail("", 0, 0, "TUNE_DEVICES: " + list.error().message);
  return list;
}

int tune_on_devices(const KernelBuild& build, const std::string& arch,
                    const std::vector<int>& devices) {
  const Manifest& manifest = build.manifest;
  const std::string target = "tune." + manifest.kernel;
  if (int rc = check_kinds(build, arch, devices, target); rc != exit_ok) return rc;
  const fs::path out = manifest.log_dir / "devices";
  // Summaries of an earlier split would not merge with this one; the logs stay, so each shard
  // of the same split resumes.
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(out / arch, ec))
    if (e.path().extension() == ".json") fs::remove(e.path());
  std::vector<std::string> listed;
  for (int d : devices)
    listed.push_back(std::to_string(d));
  fmt::print(stderr, "{}: measuring {} ({}) on devices {}, one shard each\n", target,
             manifest.kernel, arch, join(listed, ","));
  std::fflush(stderr);
  if (int rc = run_shards(manifest, arch, devices, out, target); rc != exit_ok) return rc;
  MergeOptions merge;
  merge.manifest = manifest.path.string();
  merge.arch = arch;
  merge.from = {out.string()};
  merge.device = devices.front();
  return merge_kernel(merge);
}

}  // namespace tune::cli
