// A check for fuzz targets: on failure prints what broke and aborts, which libFuzzer and the
// replay driver both report as a crash (with the input saved by libFuzzer).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>

namespace tune::fuzz {

/// Aborts with `what` when `ok` is false.
inline void check(bool ok, const std::string& what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz check failed: %s\n", what.c_str());
  std::abort();
}

}  // namespace tune::fuzz
