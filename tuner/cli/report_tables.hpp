// The tables of `tuner report` (tuner/cli/cmd_report.cpp) and what they share with its plots:
// reading a trial's fields, the configs by median, and which params matter. Trials are the
// JSON objects of a trial log (tuner/cli/log_reader.hpp).
#pragma once

#include <map>
#include <optional>
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
/// section's header and left out of config labels; empty for fewer than two configs.
std::map<std::string, std::string> constant_params(const std::vector<nlohmann::json>& trials);
/// A trial's config as HTML: its params less the constant ones (its id when none is left), with
/// a break opportunity after each comma.
std::string config_label(const nlohmann::json& t,
                         const std::map<std::string, std::string>& constant);
/// "Configs by median": the 30 best measured configs as rows of a table with a bar each.
std::string bars(const std::vector<nlohmann::json>& trials, bool maximize,
                 const std::map<std::string, std::string>& constant);
/// "Which params matter": per varying param, each value's median over the measured configs
/// that have it, their best and a bar; params ordered by spread, widest first.
std::string importance(const std::vector<nlohmann::json>& trials, bool maximize,
                       const std::map<std::string, std::string>& constant);

}  // namespace tune::cli
