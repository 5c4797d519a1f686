// Fuzz target: the trial-log reader. The bytes are written to a scratch file and opened with
// TrialLog::open, for the header the first line holds when it is one (so the trial lines are
// read) or for a fixed header otherwise. An opened log must reopen with the same trials, and
// every trial read must survive a round trip through its JSON line.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include <tuner/core/search/trial_log.hpp>

#include "fuzz_check.hpp"

namespace {

const std::filesystem::path& scratch_log() {
  static const std::filesystem::path path = [] {
    const char* tmp = std::getenv("TMPDIR");
    std::string dir =
        std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/tune-fuzz-trial-log-XXXXXX";
    tune::fuzz::check(::mkdtemp(dir.data()) != nullptr, "cannot create a scratch directory");
    return std::filesystem::path(dir) / "trials.jsonl";
  }();
  return path;
}

tune::LogHeader header_for(std::string_view text) {
  tune::LogHeader fixed;
  fixed.tuner = "fuzz/default";
  fixed.space_hash = "0123abcd";
  const std::string_view first = text.substr(0, text.find('\n'));
  nlohmann::json j = nlohmann::json::parse(first, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return fixed;
  tune::result<tune::LogHeader> h = tune::header_from_json(j);
  return h ? *h : fixed;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::filesystem::path& path = scratch_log();
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    tune::fuzz::check(static_cast<bool>(out), "cannot write the scratch log");
  }
  const tune::LogHeader header = header_for(text);
  std::size_t trials = 0;
  {
    tune::result<tune::TrialLog> log = tune::TrialLog::open(path, header);
    if (!log) {
      tune::fuzz::check(!log.error().message.empty(), "a diagnostic without a message");
      return 0;
    }
    trials = log->trials().size();
    for (const tune::Trial& t : log->trials()) {
      tune::result<tune::Trial> back =
          tune::trial_from_json(nlohmann::json::parse(tune::to_json_line(t)));
      tune::fuzz::check(back.has_value() && back->id() == t.id(),
                        "a trial does not survive its JSON line: " + tune::to_json_line(t));
    }
  }
  // The open repaired what it could (a torn header or last line): reading again finds the same.
  tune::result<tune::TrialLog> again = tune::TrialLog::open(path, header);
  tune::fuzz::check(again.has_value() && again->trials().size() == trials,
                    "reopening the log read other trials");
  return 0;
}
