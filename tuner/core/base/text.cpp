#include <tuner/core/base/text.hpp>

#include <algorithm>
#include <cctype>
#include <utility>

#include <fmt/core.h>

namespace tune {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0u : 1u)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string nearest(std::string_view name, const std::vector<std::string_view>& candidates) {
  std::string best;
  // Short names are too easily near anything: none under 2 characters, one edit up to 4.
  std::size_t best_d = name.size() >= 5 ? 2 : name.size() >= 2 ? 1 : 0;
  bool found = false;
  for (std::string_view c : candidates) {
    const std::size_t d = edit_distance(name, c);
    if (d > 0 && d <= best_d && (!found || d < best_d)) {
      best = std::string(c);
      best_d = d;
      found = true;
    }
  }
  return best;
}

std::string did_you_mean(std::string_view name, const std::vector<std::string_view>& candidates) {
  const std::string near = nearest(name, candidates);
  return near.empty() ? std::string() : fmt::format(", did you mean '{}'?", near);
}

std::string quoted_list(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items)
    out += (out.empty() ? "'" : ", '") + item + "'";
  return out;
}

std::string trim(std::string_view s) {
  const char* ws = " \t\r\n\f\v";
  const std::size_t b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  const std::size_t e = s.find_last_not_of(ws);
  return std::string(s.substr(b, e - b + 1));
}

std::string last_line(std::string_view text) {
  std::size_t end = text.size();
  while (end > 0) {
    const std::size_t start = text.rfind('\n', end - 1);
    const std::size_t from = start == std::string_view::npos ? 0 : start + 1;
    std::string line = trim(text.substr(from, end - from));
    if (!line.empty()) return line;
    if (start == std::string_view::npos) break;
    end = start;
  }
  return {};
}

std::string shorten(std::string text, std::size_t max) {
  if (text.size() > max) text = text.substr(0, max) + "...";
  return text;
}

std::string one_line(std::string_view text) {
  std::string out;
  for (std::size_t i = 0; i < text.size();) {
    std::size_t j = i;
    bool newline = false;
    while (j < text.size() && std::isspace(static_cast<unsigned char>(text[j])) != 0)
      newline = text[j++] == '\n' || newline;
    if (newline) {
      if (!out.empty() && j < text.size()) out += ' ';
      i = j;
    } else {
      out += text[i++];
    }
  }
  return out;
}

namespace {

// The length of the well-formed UTF-8 sequence at `text[i]` (1 to 4) and true; or, when none
// begins there, the length of its maximal subpart (the lead byte and the continuation bytes that
// still fit it, at least 1) and false, which becomes one U+FFFD (Unicode's recommended
// practice; RFC 3629: no overlong forms, no surrogates, nothing above U+10FFFF).
std::pair<std::size_t, bool> utf8_sequence(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char c = byte(i);
  if (c < 0x80) return {1, true};
  std::size_t n = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // the range of the second byte
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return {1, false};
  }
  for (std::size_t k = 1; k < n; ++k) {
    const bool fits = i + k < text.size() && byte(i + k) >= (k == 1 ? lo : 0x80) &&
                      byte(i + k) <= (k == 1 ? hi : 0xBF);
    if (!fits) return {k, false};
  }
  return {n, true};
}

constexpr std::string_view replacement_character = "\xEF\xBF\xBD";

}  // namespace

std::string valid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size();) {
    const auto [n, ok] = utf8_sequence(text, i);
    if (ok)
      out.append(text.substr(i, n));
    else
      out += replacement_character;
    i += n;
  }
  return out;
}

std::string warning_line(std::string_view warning) {
  const std::size_t at = warning.find(": warning: ");
  // A location has no blank in it (`path:line`): a sentence that quotes a warning is not one.
  if (at != std::string_view::npos && at > 0 &&
      warning.substr(0, at).find_first_of(" \t") == std::string_view::npos)
    return std::string(warning);
  return "warning: " + std::string(warning);
}

namespace {

// The code point of the format control at `text[i]` that printable escapes (the bidi controls
// U+061C, U+200E, U+200F, U+202A..U+202E, U+2066..U+2069, and the line and paragraph separators
// U+2028, U+2029, which some terminals take as line breaks), or 0.
unsigned format_control(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t k) {
    return i + k < text.size() ? static_cast<unsigned char>(text[i + k]) : 0u;
  };
  if (byte(0) == 0xD8 && byte(1) == 0x9C) return 0x061C;
  if (byte(0) != 0xE2) return 0;
  const unsigned cp = 0x2000u + ((byte(1) & 0x3Fu) << 6) + (byte(2) & 0x3Fu);
  if (byte(1) == 0x80 && (cp == 0x200E || cp == 0x200F || (cp >= 0x2028 && cp <= 0x202E)))
    return cp;
  if (byte(1) == 0x81 && cp >= 0x2066 && cp <= 0x2069) return cp;
  return 0;
}

}  // namespace

std::string printable(std::string_view text) {
  const std::string valid = valid_utf8(text);
  std::string out;
  out.reserve(valid.size());
  for (std::size_t i = 0; i < valid.size(); ++i) {
    const auto c = static_cast<unsigned char>(valid[i]);
    const bool c0 = c < 0x20 || c == 0x7F;
    // U+0080..U+009F (C1 controls, CSI among them) are C2 80..C2 9F in UTF-8.
    const bool c1 =
        c == 0xC2 && i + 1 < valid.size() && static_cast<unsigned char>(valid[i + 1]) <= 0x9F;
    if (c0) {
      out += fmt::format("\\x{:02x}", c);
    } else if (c1) {
      out += fmt::format("\\u{:04x}", static_cast<unsigned char>(valid[++i]));
    } else if (const unsigned cp = format_control(valid, i)) {
      out += fmt::format("\\u{:04x}", cp);
      i += cp == 0x061C ? 1 : 2;
    } else {
      out += valid[i];
    }
  }
  return out;
}

}  // namespace tune
