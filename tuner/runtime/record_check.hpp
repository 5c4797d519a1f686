// The run-time half of record verification (docs/embed.md "Records at run time"), for programs
// that ship records as data. A record is read with tune::Record::load (record.hpp) and its
// winners with get(bucket); this checks what only the running program can know: the record's
// schema, that it is the record of the kernel and architecture the program runs, and the
// device and driver it was tuned on. Source and cache-key verification needs the sources and
// nvcc, so it stays a build-time check (the record.<kernel> test).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <tuner/core/base/result.hpp>
#include <tuner/core/record/record.hpp>

namespace tune::runtime {

/// What the running program expects of a record.
struct RunTimeContext {
  std::string kernel;                 ///< the kernel the program launches
  std::string arch;                   ///< the device's architecture, `sm_90`
  std::optional<std::string> device;  ///< the device's name, `NVIDIA H200`, when known
  std::optional<std::string> driver;  ///< the driver's version, when known
};

/// A record that applies to the running program, and the drift worth a warning.
struct RunTimeRecord {
  Record record;
  std::vector<std::string> warnings;  ///< device or driver drift: timings may differ
};

/// Loads the record at `path` and checks it against `context`: a diagnostic naming the file
/// for a record that does not parse, another schema, another kernel or another architecture
/// (bad input: the program would run a winner tuned for something else); device and driver
/// drift become warnings.
result<RunTimeRecord> load_for_run_time(const std::filesystem::path& path,
                                        const RunTimeContext& context);

/// As above, for a record already loaded (`label` names it in messages).
result<RunTimeRecord> check_for_run_time(Record record, const RunTimeContext& context,
                                         const std::string& label);

}  // namespace tune::runtime
