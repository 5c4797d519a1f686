#include <tuner/cli/json_summary.hpp>

#include <cstdio>

#include <unistd.h>

#include <tuner/core/record/verify.hpp>

namespace tune::cli {

StdoutToStderr::StdoutToStderr(bool active) {
  if (!active) return;
  std::fflush(stdout);
  saved_ = ::dup(STDOUT_FILENO);
  if (saved_ >= 0) ::dup2(STDERR_FILENO, STDOUT_FILENO);
}

StdoutToStderr::~StdoutToStderr() {
  if (saved_ < 0) return;
  std::fflush(stdout);
  ::dup2(saved_, STDOUT_FILENO);
  ::close(saved_);
}

nlohmann::json records_summary(const KernelBuild& build, const std::vector<std::string>& archs) {
  nlohmann::json out = nlohmann::json::array();
  for (const std::string& arch : archs) {
    const std::filesystem::path path = build.manifest.record_path(arch).value();
    nlohmann::json one = {{"arch", arch}, {"record", path.string()}};
    result<Verification> v = verify_kernel_record(build, arch, path);
    one["state"] = v ? std::string(to_string(v->state)) : "unreadable";
    one["errors"] = v ? nlohmann::json(v->errors) : nlohmann::json::array({v.error().str()});
    nlohmann::json entries = nlohmann::json::array();
    if (result<Record> record = Record::load(path))
      for (const RecordEntry& e : record->entries())
        entries.push_back({{"bucket", e.bucket},
                           {"config", e.config.id()},
                           {"median_ms", e.median_ms ? nlohmann::json(*e.median_ms) : nullptr},
                           {"samples", e.samples},
                           {"source", e.source}});
    one["entries"] = entries;
    out.push_back(one);
  }
  return out;
}

}  // namespace tune::cli
