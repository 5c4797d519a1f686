#include <tuner/cuda/harness.hpp>

#include <cmath>

#include <fmt/format.h>

namespace tune {

Values::Values(std::vector<std::pair<std::string, ParamValue>> values, std::string what)
    : values_(std::move(values)), what_(std::move(what)) {}

bool Values::has(std::string_view name) const {
  for (const auto& [n, v] : values_) {
    if (n == name) return true;
  }
  return false;
}

namespace {

// `<file>:<line>: `, the harness's line that asked for a value (the file's name only: the
// message is the same on every machine).
std::string asked_at(const std::source_location& where) {
  std::string_view file = where.file_name();
  if (const std::size_t slash = file.rfind('/'); slash != std::string_view::npos)
    file.remove_prefix(slash + 1);
  if (file.empty()) return "";
  return fmt::format("{}:{}: ", file, where.line());
}

}  // namespace

const ParamValue& Values::find(std::string_view name, const std::source_location& where) const {
  for (const auto& [n, v] : values_) {
    if (n == name) return v;
  }
  std::string names;
  for (const auto& [n, v] : values_)
    names += (names.empty() ? "" : ", ") + n;
  throw harness_error(fmt::format("{}{} has no value '{}' (it has: {})", asked_at(where), what_,
                                  name, names.empty() ? "none" : names));
}

std::int64_t Values::int_(std::string_view name, std::source_location where) const {
  const ParamValue& v = find(name, where);
  if (!v.is_int())
    throw harness_error(
        fmt::format("{}{}: '{}' is a string, not an int", asked_at(where), what_, name));
  return v.as_int();
}

const std::string& Values::str(std::string_view name, std::source_location where) const {
  const ParamValue& v = find(name, where);
  if (!v.is_string())
    throw harness_error(
        fmt::format("{}{}: '{}' is an int, not a string", asked_at(where), what_, name));
  return v.as_string();
}

namespace {

std::vector<std::pair<std::string, ParamValue>> config_values(const Config& config) {
  std::vector<std::pair<std::string, ParamValue>> out;
  for (const auto& [name, value] : config.params())
    out.emplace_back(name, value);
  return out;
}

}  // namespace

SetupContext::SetupContext(Context& context, std::shared_ptr<Module> module, std::string entry,
                           std::string bucket, const Shape& shape, const Config& config,
                           CUstream stream, std::uint64_t seed)
    : context_(context),
      module_(std::move(module)),
      entry_(std::move(entry)),
      bucket_(std::move(bucket)),
      config_(config),
      shape_(shape, fmt::format("shape of bucket '{}'", bucket_)),
      params_(config_values(config), fmt::format("config '{}'", config.id())),
      stream_(stream),
      rng_(seed) {}

void SetupContext::sync() const {
  TUNE_CU(driver().cuStreamSynchronize(stream_));
}

BucketContext::BucketContext(Context& context, std::string bucket, const Shape& shape,
                             CUstream stream, std::uint64_t seed)
    : BucketContext(context, nullptr, std::move(bucket), shape, stream, seed) {}

BucketContext::BucketContext(Context& context, std::shared_ptr<Module> module, std::string bucket,
                             const Shape& shape, CUstream stream, std::uint64_t seed)
    : context_(context),
      module_(std::move(module)),
      bucket_(std::move(bucket)),
      shape_(shape, fmt::format("shape of bucket '{}'", bucket_)),
      stream_(stream),
      rng_(seed) {}

Module& BucketContext::module() const {
  if (!module_)
    throw error(fmt::format("the context of bucket '{}' has no module (it was built without one)",
                            bucket_));
  return *module_;
}

void BucketContext::sync() const {
  TUNE_CU(driver().cuStreamSynchronize(stream_));
}

std::vector<std::function<void()>> BucketContext::take_resets() {
  std::vector<std::function<void()>> resets;
  for (const auto& snapshot : snapshots_)
    resets.push_back(snapshot());
  resets.insert(resets.end(), poisons_.begin(), poisons_.end());
  snapshots_.clear();
  poisons_.clear();
  return resets;
}

namespace detail {

std::string check_failure_message(std::string_view what, const CheckFailure& f) {
  // NaN prints as 'nan' whatever its sign bit (poison is -nan).
  auto value = [](double v) { return std::isnan(v) ? std::abs(v) : v; };
  const std::string off =
      f.mismatches > 0
          ? fmt::format("{} of {} values off by more than the tolerance, the first at index {}",
                        f.mismatches, f.count, f.first_mismatch)
          : fmt::format("none of {} values off by more than the tolerance on its own", f.count);
  return fmt::format(
      "'{}' is wrong: relative error {:.1e} exceeds {:.0e} (worst at index {}: got {}, expected "
      "{}; {})",
      what, f.rel, f.tolerance, f.worst, value(f.got), value(f.expected), off);
}

void throw_check_failure(std::string_view what, const CheckFailure& failure) {
  throw check_error(check_failure_message(what, failure));
}

std::string equal_failure_message(std::string_view what, std::size_t count, std::size_t differences,
                                  const std::vector<Difference>& first) {
  std::string listed;
  for (const Difference& d : first)
    listed += fmt::format("{}at index {} got {}, expected {}", listed.empty() ? "" : "; ", d.index,
                          d.got, d.expected);
  return fmt::format(
      "'{}' is wrong: {} of {} values differ from the reference{}: {}", what, differences, count,
      differences > first.size() ? fmt::format(", the first {}", first.size()) : "", listed);
}

}  // namespace detail

}  // namespace tune
