#include <tuner/core/space/space_checks.hpp>

#include <fstream>
#include <string>

#include <fmt/core.h>

#include <tuner/core/base/safe_file.hpp>
#include <tuner/core/base/text.hpp>

namespace tune {

namespace {

std::string shape_text(const Shape& shape) {
  if (shape.empty()) return "empty";
  std::vector<std::string> parts;
  for (const auto& [name, value] : shape)
    parts.push_back(name + "=" + value.canonical());
  return join(parts);
}

// The bucket's own shape selects an earlier bucket: the diagnostic, or nullopt. A shape an
// earlier `when` cannot read (it names a shape value this bucket lacks) is left alone: select
// would refuse that shape at run time, so nothing is known here.
std::optional<diagnostic> shadow_problem(const Space& space, const Bucket& bucket) {
  result<const Bucket*> chosen = space.select(bucket.shape);
  if (!chosen || *chosen == nullptr || *chosen == &bucket) return std::nullopt;
  const Bucket& first = **chosen;
  std::string message;
  if (!first.when)
    message = fmt::format(
        "bucket '{}' is never selected: bucket '{}' (line {}) before it has no 'when' and "
        "takes every shape: move '{}' before '{}', or give '{}' a 'when'",
        bucket.name, first.name, first.pos.line, bucket.name, first.name, first.name);
  else
    message = fmt::format(
        "bucket '{}' is shadowed: its own shape ({}) selects bucket '{}' (line {}, when '{}'), "
        "which comes first, so its winner would never run for the shape it is tuned on: "
        "move '{}' before '{}', or narrow the 'when' of '{}'",
        bucket.name, shape_text(bucket.shape), first.name, first.pos.line, *first.when, bucket.name,
        first.name, first.name);
  return diagnostic{space.path(), bucket.pos.line, bucket.pos.column, message};
}

// The line of the top-level `kernel = ...` key in the space file; 0 when it cannot be read (a
// space parsed from text). Space keeps no position for it; the key is on a line of its own.
int kernel_line(const std::string& path) {
  if (not_regular_problem(path)) return 0;
  std::ifstream in(path);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    std::string t = trim(line);
    if (t.rfind("kernel", 0) == 0 && trim(t.substr(6)).rfind('=', 0) == 0) return n;
  }
  return 0;
}

}  // namespace

result<std::vector<diagnostic>> space_declaration_problems(const Space& space,
                                                           std::string_view declared_kernel) {
  std::vector<diagnostic> out;
  if (!declared_kernel.empty() && space.kernel() != declared_kernel)
    out.push_back({space.path(), kernel_line(space.path()), kernel_line(space.path()) > 0 ? 1 : 0,
                   fmt::format("the space is of kernel '{}', but it is declared as kernel '{}' "
                               "(tune_add_kernel({})): set kernel = \"{}\" in the space, or "
                               "declare the kernel as '{}'",
                               space.kernel(), declared_kernel, declared_kernel, declared_kernel,
                               space.kernel())});
  bool any_config = false;
  for (const Bucket& bucket : space.buckets()) {
    result<std::vector<Config>> configs = space.configs(bucket);
    if (!configs) return fail(configs.error());
    any_config = any_config || !configs->empty();
    if (configs->empty())
      out.push_back({space.path(), bucket.pos.line, bucket.pos.column,
                     fmt::format("bucket '{}' keeps no config after pruning, so it can never "
                                 "have a winner: loosen the 'prune' expressions for its shape "
                                 "({}) or add a [[configs]] entry that passes them",
                                 bucket.name, shape_text(bucket.shape))});
    if (auto shadow = shadow_problem(space, bucket)) out.push_back(*shadow);
  }
  if (!any_config && space.buckets().size() > 1)
    out.push_back({space.path(), 0, 0,
                   "the space has no candidate at all: every config of every bucket is pruned"});
  return out;
}

}  // namespace tune
