// Text helpers every message shares: near-miss suggestions, joined and quoted lists, and the
// trimming and shortening of text that comes from outside (a child's output, a long value).
// Messages follow one style (lowercase, values quoted, the near miss offered):
//   no bucket 'm<=521' in the space of 'gemm', did you mean 'm<=512'? (it has 'm<=512', 'm>512')
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace tune {

/// The Levenshtein distance between `a` and `b` (bytes).
std::size_t edit_distance(std::string_view a, std::string_view b);

/// The candidate nearest to `name` within a small edit distance (none for names under 2
/// characters, one edit up to 4 characters, two from 5), or "" when none is near enough.
std::string nearest(std::string_view name, const std::vector<std::string_view>& candidates);

/// ", did you mean 'x'?" for the nearest candidate, else "".
std::string did_you_mean(std::string_view name, const std::vector<std::string_view>& candidates);

/// As above, for any range of strings.
template <class Range>
std::string did_you_mean(std::string_view name, const Range& candidates) {
  std::vector<std::string_view> views;
  for (const auto& c : candidates)
    views.emplace_back(c);
  return did_you_mean(name, views);
}

/// The items joined with `sep`.
template <class Range>
std::string join(const Range& items, std::string_view sep = ", ") {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += sep;
    out += item;
  }
  return out;
}

/// `'a', 'b', 'c'`: how messages list names.
std::string quoted_list(const std::vector<std::string>& items);

/// `text` without leading and trailing white space.
std::string trim(std::string_view text);

/// The last line of `text` that holds more than white space, trimmed; "" when none does.
std::string last_line(std::string_view text);

/// `text` cut to at most `max` bytes, with "..." after a cut.
std::string shorten(std::string text, std::size_t max = 300);

/// `text` as valid UTF-8: each maximal run of bytes that cannot be part of a well-formed UTF-8
/// sequence (a Latin-1 byte in compiler output, a sequence cut by `shorten`) becomes one U+FFFD.
/// JSON holds only UTF-8: json_text.hpp's dump_json passes every string it writes through here.
std::string valid_utf8(std::string_view text);

/// `text` safe to print on a terminal, on one line: valid UTF-8 (as valid_utf8) with each C0
/// control character (an escape sequence's ESC, a carriage return, a line feed, a tab) written
/// as `\xNN`, a C1 control as `\u00NN`, and the bidi controls and the line and paragraph
/// separators (U+061C, U+200E, U+200F, U+2028..U+202E, U+2066..U+2069) as `\uNNNN`, so that text
/// read from a file, a log, a store or a location cannot move the cursor, recolour or retitle
/// the terminal, reverse the rest of a line or break a table's row. The one escaping function
/// for every text from outside that tune prints.
std::string printable(std::string_view text);

/// A warning as one line of output: as it is when it already says where it comes from and that
/// it is a warning (`<log>:2: warning: skipped ...`, a reader's), else `warning: <warning>`;
/// so that a caller adding its own prefix (`large: `) never says `warning:` twice.
std::string warning_line(std::string_view warning);

/// `text` on one line: each run of white space that holds a line break becomes one space (a
/// multi-line TOML string quoted in a message).
std::string one_line(std::string_view text);

}  // namespace tune
