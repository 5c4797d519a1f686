#include <tuner/runtime/record_check.hpp>

#include <fmt/core.h>

namespace tune::runtime {

result<RunTimeRecord> load_for_run_time(const std::filesystem::path& path,
                                        const RunTimeContext& context) {
  result<Record> r = Record::load(path);
  if (!r) return fail(r.error());
  return check_for_run_time(std::move(*r), context, path.string());
}

result<RunTimeRecord> check_for_run_time(Record record, const RunTimeContext& context,
                                         const std::string& label) {
  auto bad = [&](std::string message) { return fail(label, 0, 0, std::move(message)); };
  if (record.schema_version != record_schema_version)
    return bad(
        fmt::format("record schema_version {} is not {}, the one this program reads: "
                    "re-tune or ship a record of this version",
                    record.schema_version, record_schema_version));
  if (record.kernel != context.kernel)
    return bad(
        fmt::format("the record is of kernel '{}', not '{}'", record.kernel, context.kernel));
  if (record.arch != context.arch)
    return bad(fmt::format("the record was tuned for {}, the device is {}: ship a record of {}",
                           record.arch, context.arch, context.arch));
  RunTimeRecord out{std::move(record), {}};
  const RecordContext& tuned = out.record.context;
  if (context.device && tuned.device && *context.device != *tuned.device)
    out.warnings.push_back(fmt::format("tuned on device '{}', running on '{}': timings may differ",
                                       *tuned.device, *context.device));
  if (context.driver && tuned.driver && *context.driver != *tuned.driver)
    out.warnings.push_back(fmt::format("tuned with driver {}, running with {}: timings may differ",
                                       *tuned.driver, *context.driver));
  return out;
}

}  // namespace tune::runtime
