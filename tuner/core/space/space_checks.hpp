// Declarations that parse but can never work, found before anything is compiled: the configure
// asks for them (`tuner warm --list-candidates`, cmake/TuneKernel.cmake), so that a kernel whose
// space cannot give a record stops the configure, naming the file, the place and the fix,
// instead of failing every warm, tune and record test later.
//
// They are not rules of Space::load: `tuner space` and `tuner exec` still read such a space,
// since looking at one is how its author finds out what is wrong.
#pragma once

#include <string_view>
#include <vector>

#include <tuner/core/base/result.hpp>
#include <tuner/core/space/space.hpp>

namespace tune {

/// What makes `space` unusable for a kernel declared as `declared_kernel` (empty: not checked),
/// in file order:
/// - the space's `kernel` is another name (every record of it would belong to another kernel);
/// - a bucket that keeps no config after pruning (it can never have a winner), and so a space
///   with no candidate at all;
/// - a bucket that the buckets before it shadow: its own shape, the one its winner is tuned on,
///   selects an earlier bucket (one without `when` takes every shape), so at run time the
///   winner is not used for that shape.
result<std::vector<diagnostic>> space_declaration_problems(const Space& space,
                                                           std::string_view declared_kernel);

}  // namespace tune
