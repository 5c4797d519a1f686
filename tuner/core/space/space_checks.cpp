#include <tuner/core/space/space_checks.hpp>

#include <fstream>
#include <string>

#include <fmt/core.h>

#include <tuner/core/base/safe_file.hpp>
#include <tuner/core/base/text.hpp>
#include <tuner/core/space/expr.hpp>

namespace tune {

namespace {

std::string shape_text(const Shape& shape) {
  if (shape.empty()) return "empty";
  std::vector<std::string> parts;
  for (const auto& [name, value] : shape)
    parts.push_back(name + "=" + value.canonical());
  return join(parts);
}

// A `when` that holds for `own` and not for `other`, reading one shape name both have, as the
// example of a fix (`N > 1000000`, `LAYOUT == 'row'`); empty when their shared names agree.
std::string separating_when(const Shape& own, const Shape& other) {
  for (const auto& [name, mine] : own)
    for (const auto& [other_name, theirs] : other) {
      if (other_name != name || mine == theirs) continue;
      if (mine.is_int() && theirs.is_int())
        return fmt::format("{} {} {}", name, mine.as_int() > theirs.as_int() ? ">" : "<",
                           theirs.as_int());
      if (mine.is_string()) return fmt::format("{} == '{}'", name, mine.as_string());
    }
  return "";
}

// Whether moving `bucket` right before `first` fixes the shadow: after the move `bucket` takes
// its own shape (it already does: its `when` must hold for it), and `first` still takes its own,
// which holds when `bucket` has a `when` that does not take the shape of `first`. A `when` that
// cannot read that shape (a name it lacks) would make select refuse it: not a fix either.
bool move_fixes(const Bucket& bucket, const Bucket& first) {
  if (!bucket.when) return false;
  result<Expr> when = Expr::parse(*bucket.when);  // it parsed when the space was read
  if (!when) return false;
  result<bool> takes = when->test([&](std::string_view name) -> const ParamValue* {
    for (const auto& [n, v] : first.shape)
      if (n == name) return &v;
    return nullptr;
  });
  return takes && !*takes;
}

// The bucket's own shape selects an earlier bucket: the diagnostic, or nullopt. A shape an
// earlier `when` cannot read (it names a shape value this bucket lacks) is left alone: select
// would refuse that shape at run time, so nothing is known here. The fix it suggests is one
// that works: moving the bucket only when its own `when` leaves the earlier bucket's shape
// alone (moving a bucket without `when` would only shadow the other one), else a `when` for
// the earlier bucket that tells the two shapes apart.
std::optional<diagnostic> shadow_problem(const Space& space, const Bucket& bucket) {
  result<const Bucket*> chosen = space.select(bucket.shape);
  if (!chosen || *chosen == nullptr || *chosen == &bucket) return std::nullopt;
  const Bucket& first = **chosen;
  const std::string apart = separating_when(first.shape, bucket.shape);
  std::string fix;
  if (move_fixes(bucket, first)) {
    fix =
        fmt::format(fmt::runtime(first.when ? "move '{}' before '{}', or narrow the 'when' of '{}'"
                                            : "move '{}' before '{}', or give '{}' a 'when'"),
                    bucket.name, first.name, first.name);
  } else if (apart.empty()) {
    fix = fmt::format(
        "the two shapes agree on every name they share ({} and {}): give '{}' a shape of its own "
        "or remove one of them",
        shape_text(first.shape), shape_text(bucket.shape), bucket.name);
  } else if (!first.when) {
    fix = fmt::format(
        "give '{}' a 'when' that holds for its own shape ({}) but not for that of '{}' ({}), "
        "for example when = \"{}\" (only the last bucket may go without a 'when')",
        first.name, shape_text(first.shape), bucket.name, shape_text(bucket.shape), apart);
  } else {
    fix = fmt::format(
        "narrow the 'when' of '{}' so that it no longer takes the shape of '{}' ({}), for "
        "example when = \"({}) && {}\"",
        first.name, bucket.name, shape_text(bucket.shape), *first.when, apart);
  }
  std::string message;
  if (!first.when)
    message = fmt::format(
        "bucket '{}' is never selected: bucket '{}' (line {}) before it has no 'when' and "
        "takes every shape: {}",
        bucket.name, first.name, first.pos.line, fix);
  else
    message = fmt::format(
        "bucket '{}' is shadowed: its own shape ({}) selects bucket '{}' (line {}, when '{}'), "
        "which comes first, so its winner would never run for the shape it is tuned on: {}",
        bucket.name, shape_text(bucket.shape), first.name, first.pos.line, *first.when, fix);
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
