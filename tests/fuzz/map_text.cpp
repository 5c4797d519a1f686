// Fuzz target: the C++ text of a template entry's `[entry.map.<PARAM>]` values, which warm pastes
// into a generated translation unit (`&tile_gemm<64, TEXT>`). map_text_problem must refuse what
// is more than one template argument: text it accepts holds no line break or other control
// character, no '#', ';', brace or comment, no `_Pragma`, no ',' outside brackets, and its
// '(' ')' and '[' ']' balance; a refusal points inside the text.
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <tuner/core/space/entry_template.hpp>

#include "fuzz_check.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto problem = tune::map_text_problem(text);
  if (problem) {
    tune::fuzz::check(problem->first < text.size(), "a problem past the end of the text");
    tune::fuzz::check(!problem->second.empty(), "a problem without a name");
    return 0;
  }
  tune::fuzz::check(text.find_first_of("#;{}") == std::string_view::npos,
                    "a directive, a statement or a body accepted");
  tune::fuzz::check(
      text.find("//") == std::string_view::npos && text.find("/*") == std::string_view::npos,
      "a comment accepted");
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    tune::fuzz::check(u >= 0x20 && u != 0x7F, "a control character accepted");
  }
  // Outside literals, identifiers and numbers: brackets balance, and no word is _Pragma.
  const auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  std::vector<char> open;
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (std::isdigit(static_cast<unsigned char>(c)) != 0) {  // a number: 1'000, 0x1p-3
      for (++i; i < text.size(); ++i) {
        const char d = text[i];
        const char b = text[i - 1];
        if (word(d) || d == '.') continue;
        if (d == '\'' && i + 1 < text.size() && word(text[i + 1])) continue;
        if ((d == '+' || d == '-') && (b == 'e' || b == 'E' || b == 'p' || b == 'P')) continue;
        break;
      }
      continue;
    }
    if (word(c)) {
      const std::size_t start = i;
      while (i < text.size() && word(text[i]))
        ++i;
      // `_Pragma` as a word (`_Pragmax8` is another identifier, a string may say it).
      tune::fuzz::check(text.substr(start, i - start) != "_Pragma", "_Pragma accepted");
      continue;
    }
    if (c == '"' || c == '\'') {
      for (++i; i < text.size() && text[i] != c; ++i)
        if (text[i] == '\\') ++i;
      tune::fuzz::check(i < text.size(), "an unterminated literal accepted");
      ++i;
      continue;
    }
    if (c == '(' || c == '[') open.push_back(c);
    if (c == ')' || c == ']') {
      tune::fuzz::check(!open.empty() && open.back() == (c == ')' ? '(' : '['),
                        "an unbalanced bracket accepted");
      open.pop_back();
    }
    ++i;
  }
  tune::fuzz::check(open.empty(), "an unclosed bracket accepted");
  return 0;
}
