// The names header of a kernel's harness: the params and shape names of its space as C++
// constants, written at configure time (`tuner warm --list-candidates --names-header`), so that
// a harness that reads a misspelt name does not compile (docs/harness.md).
//
// Example:
//   write_file_if_changed(out, names_header(space, "gemm", "spaces/gemm.toml"));
//   // in the harness: ctx.params().int_(tune::kernel::gemm::param::BM)
#pragma once

#include <string>
#include <string_view>

#include <tuner/core/space/space.hpp>

namespace tune {

/// The names header of a kernel (`<build>/tune/<kernel>/include/tune/kernel/<kernel>.hpp`,
/// written at configure time for its harness): in namespace `tune::kernel::<kernel as an
/// identifier>`, one `inline constexpr std::string_view` per param (namespace `param`) and per
/// shape name of any bucket (namespace `shape`), so that `ctx.params().int_(param::BLOCK)`
/// misspelt is a compile error. A name that is a C++ keyword gets a '_' after it (the value is
/// the name itself). `space_display` names the space in the header's comment.
std::string names_header(const Space& space, std::string_view kernel,
                         std::string_view space_display);

}  // namespace tune
