// The tables of `tuner report` (tuner/cli/cmd_report.cpp) and what they share with its plots:
// reading a trial's fields, the configs by median, and which params matter. Trials are the
// JSON objects of a trial log (tuner/cli/log_reader.hpp), seen one at a time: the tables keep
// what each config needs, not the trials.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tune::cli {

/// A field of `obj` as text: strings as they are, other values as JSON, "-" when absent or null.
std::string field(const nlohmann::json& obj, const char* name);
/// A measured trial's median (finite, positive), else nullopt.
std::optional<double> median_of(const nlohmann::json& t);
/// Whether `a` beats `b`: lower times, or higher scores when the log maximizes.
bool better(double a, double b, bool maximize);
/// Milliseconds, four significant digits: `1.234 ms`.
std::string ms(double v);

/// The params every trial has with one value (name -> value as JSON), said once in the
/// section's header and left out of config labels; gathered a trial at a time.
class ConstantParams {
 public:
  void add(const nlohmann::json& trial);
  /// Empty for fewer than two configs (nothing to compare).
  std::map<std::string, std::string> result() const;

 private:
  std::map<std::string, std::string> constant_;
  std::set<std::string> ids_;
};
/// A trial's config as HTML: its params less the constant ones (its id when none is left), with
/// a break opportunity after each comma.
std::string config_label(const nlohmann::json& t,
                         const std::map<std::string, std::string>& constant);

/// What the tables keep of one config: its first measured trial (`config_id` and `params`) and
/// its best median (search and required trials), and the same among its trials with params.
struct ConfigDigest {
  std::optional<nlohmann::json> labelled;  ///< {config_id, params} of its first measured trial
  double best = 0;
  std::optional<nlohmann::json> params;  ///< the params of its first measured trial with them
  double params_best = 0;
};
/// Adds a trial to the digests of its config in `configs` (by config_id).
void add_config_trial(std::map<std::string, ConfigDigest>& configs, const nlohmann::json& t,
                      bool maximize);

/// "Configs by median": the 30 best measured configs as rows of a table with a bar each.
std::string bars(const std::map<std::string, ConfigDigest>& configs, bool maximize,
                 const std::map<std::string, std::string>& constant);
/// "Which params matter": per varying param, each value's median over the measured configs
/// that have it, their best and a bar; params ordered by spread, widest first, values by median.
/// Green marks the best config's value (`best_params`, its params; none when null), as green
/// marks the best config in "configs by median": one colour, one meaning.
std::string importance(const std::map<std::string, ConfigDigest>& configs, bool maximize,
                       const std::map<std::string, std::string>& constant,
                       const nlohmann::json& best_params);

/// `text` with its first letter in upper case, to start a sentence.
std::string capitalized(std::string text);

/// "Runoff": the runoff's decision as a sentence (who was kept, and why), then its statistics,
/// formatted (medians in ms, the difference in %, the p-value to three digits); statistics that
/// do not read as a runoff's are listed as they are.
std::string runoff_table(const nlohmann::json& runoff);

/// The record's entry of a log's bucket, when the log lies in its kernel's build folder
/// (`<build>/tune/<kernel>/<arch>/<bucket>.trials.jsonl`, the manifest two folders up) and the
/// record reads: {"record", "config" (null when it has no entry of the bucket), "source",
/// "median_ms", "samples", "origin", "forced"}; null otherwise.
nlohmann::json record_entry(const std::string& log_path, const nlohmann::json& header);

/// The record's entry as the page's header says it: `records/k.json: BM=64, pinned (never
/// measured)`.
std::string record_text(const nlohmann::json& entry);

}  // namespace tune::cli
