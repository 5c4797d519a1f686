// Fuzz target: the input of `tuner export --format t4`, a trial log read a line at a time
// (read_export_log) into the streaming T4 writer. Whatever reads must export to a document
// that is valid JSON, holds one result per trial that is not a runoff trial, and says how many
// runoff trials it left out; a log read as the whole text (parse_export_log) finds the same
// trials and warnings.
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include <tuner/core/base/log_lines.hpp>
#include <tuner/core/record/t4_export.hpp>

#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::istringstream in(text);
  tune::LogLines lines("fuzz.trials.jsonl", in);
  std::stringstream results;
  tune::T4Writer writer(results);
  std::size_t trials = 0, runoff = 0;
  std::vector<std::string> warnings;
  std::optional<tune::diagnostic> problem = tune::read_export_log(
      lines, [&](const tune::LogHeader& h) { return writer.begin("fuzz.trials.jsonl", h); },
      [&](tune::Trial&& t) {
        ++trials;
        if (t.phase == tune::Phase::runoff) ++runoff;
        writer.add(t);
      },
      [&](std::string&& w) { warnings.push_back(std::move(w)); });
  tune::result<tune::ExportLog> whole = tune::parse_export_log("fuzz.trials.jsonl", text);
  tune::fuzz::check(whole.has_value() == !problem.has_value(),
                    "the streamed and the whole reading disagree on the header");
  if (problem) {
    tune::fuzz::check(!problem->message.empty(), "a diagnostic without a message");
    return 0;
  }
  tune::fuzz::check(whole->trials.size() == trials && whole->warnings == warnings,
                    "the streamed and the whole reading find other trials");
  std::ostringstream out;
  writer.finish(results, out);
  const nlohmann::json doc = nlohmann::json::parse(out.str(), nullptr, false);
  tune::fuzz::check(!doc.is_discarded(), "the export is not JSON: " + out.str());
  tune::fuzz::check(doc["results"].size() == trials - runoff, "the export lost a result");
  tune::fuzz::check(doc["metadata"]["runoff_trials_left_out"] == runoff,
                    "the export miscounts the runoff trials");
  // The document is what dump_json writes of itself: the streamed form is the canonical one.
  tune::fuzz::check(doc.dump(2) + "\n" == out.str(),
                    "the streamed export is not the document's own text: " + out.str());
  return 0;
}
