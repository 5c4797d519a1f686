// A check for fuzz targets: on failure prints what broke and aborts, which libFuzzer and the
// replay driver both report as a crash (with the input saved by libFuzzer).
#pragma once

#include <cstddef>
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

/// Aborts unless `shown` (text as printable() made it) is safe on a terminal: no C0 control
/// (a line feed and a tab included), no DEL, no C1 control, no bidi control or line separator
/// (U+061C, U+200E, U+200F, U+2028..U+202E, U+2066..U+2069).
inline void check_terminal_safe(const std::string& shown, const std::string& what) {
  for (std::size_t i = 0; i < shown.size(); ++i) {
    const auto c = static_cast<unsigned char>(shown[i]);
    const auto next = [&](std::size_t k) {
      return i + k < shown.size() ? static_cast<unsigned char>(shown[i + k]) : 0u;
    };
    check(c >= 0x20 && c != 0x7F, what + ": a C0 control or DEL reaches the terminal");
    check(!(c == 0xC2 && next(1) <= 0x9F), what + ": a C1 control reaches the terminal");
    check(!(c == 0xD8 && next(1) == 0x9C), what + ": U+061C reaches the terminal");
    const unsigned cp = 0x2000u + ((next(1) & 0x3Fu) << 6) + (next(2) & 0x3Fu);
    check(!(c == 0xE2 && next(1) == 0x80 &&
            (cp == 0x200E || cp == 0x200F || (cp >= 0x2028 && cp <= 0x202E))),
          what + ": a bidi control or a line separator reaches the terminal");
    check(!(c == 0xE2 && next(1) == 0x81 && cp >= 0x2066 && cp <= 0x2069),
          what + ": a bidi isolate reaches the terminal");
  }
}

}  // namespace tune::fuzz
