#include <tuner/core/base/json_position.hpp>

#include <set>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <tuner/core/base/text.hpp>

namespace tune {

TextPosition text_position(std::string_view text, std::size_t offset) {
  TextPosition p;
  if (offset > text.size()) offset = text.size();
  for (std::size_t i = 0; i < offset; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      ++p.line;
      p.column = 1;
    } else if ((c & 0xC0) != 0x80) {
      ++p.column;  // a continuation byte belongs to the character before it
    }
  }
  return p;
}

namespace {

// A cursor over JSON text that already parsed: skips values without building them.
struct Scanner {
  std::string_view t;
  std::size_t i = 0;

  void ws() {
    while (i < t.size() && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r'))
      ++i;
  }
  bool string(std::string* out) {
    if (i >= t.size() || t[i] != '"') return false;
    for (++i; i < t.size(); ++i) {
      if (t[i] == '\\') {
        if (out != nullptr && i + 1 < t.size()) out->push_back(t[i + 1]);  // names: close enough
        ++i;
      } else if (t[i] == '"') {
        ++i;
        return true;
      } else if (out != nullptr) {
        out->push_back(t[i]);
      }
    }
    return false;
  }
  // Skips one value; a container by counting brackets outside strings, so a deep document
  // costs no stack.
  bool skip() {
    ws();
    if (i >= t.size()) return false;
    if (t[i] == '"') return string(nullptr);
    if (t[i] == '{' || t[i] == '[') {
      int depth = 0;
      while (i < t.size()) {
        const char c = t[i];
        if (c == '"') {
          if (!string(nullptr)) return false;
          continue;
        }
        if (c == '{' || c == '[') ++depth;
        if ((c == '}' || c == ']') && --depth == 0) {
          ++i;
          return true;
        }
        ++i;
      }
      return false;
    }
    while (i < t.size() && std::string_view(",}] \t\r\n").find(t[i]) == std::string_view::npos)
      ++i;
    return true;
  }
  // Moves to the value of `key` in the object at the cursor; false when it has none.
  bool member(std::string_view key) {
    ws();
    if (i >= t.size() || t[i] != '{') return false;
    ++i;
    for (;;) {
      ws();
      if (i >= t.size() || t[i] == '}') return false;
      std::string name;
      if (!string(&name)) return false;
      ws();
      if (i >= t.size() || t[i] != ':') return false;
      ++i;
      ws();
      if (name == key) return true;
      if (!skip()) return false;
      ws();
      if (i < t.size() && t[i] == ',') ++i;
    }
  }
  // Moves to element `n` of the array at the cursor; false when it is shorter.
  bool element(std::size_t n) {
    ws();
    if (i >= t.size() || t[i] != '[') return false;
    ++i;
    for (std::size_t k = 0;; ++k) {
      ws();
      if (i >= t.size() || t[i] == ']') return false;
      if (k == n) return true;
      if (!skip()) return false;
      ws();
      if (i < t.size() && t[i] == ',') ++i;
    }
  }
};

}  // namespace

std::optional<std::size_t> json_value_offset(std::string_view text, std::string_view path) {
  Scanner s{text};
  s.ws();
  std::size_t p = 0;
  while (p < path.size()) {
    const std::size_t here = s.i;
    bool found = false;
    if (path[p] == '[') {
      const std::size_t close = path.find(']', p);
      if (close == std::string_view::npos) break;
      std::size_t n = 0;
      for (std::size_t k = p + 1; k < close; ++k)
        n = n * 10 + static_cast<std::size_t>(path[k] - '0');
      found = s.element(n);
      p = close + 1;
    } else {
      if (path[p] == '.') ++p;
      const std::size_t end = path.find_first_of(".[", p);
      const std::string_view key =
          path.substr(p, end == std::string_view::npos ? path.npos : end - p);
      found = s.member(key);
      p = end == std::string_view::npos ? path.size() : end;
    }
    if (!found) {
      s.i = here;  // the longest prefix that exists
      break;
    }
  }
  if (s.i >= text.size()) return std::nullopt;
  return s.i;
}

std::optional<std::pair<std::size_t, std::string>> json_duplicate_key(std::string_view text) {
  struct Frame {
    bool object = false;
    bool expect_key = false;
    std::set<std::string> keys;
  };
  std::vector<Frame> stack;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') {
      const std::size_t start = i;
      for (++i; i < text.size() && text[i] != '"'; ++i)
        if (text[i] == '\\') ++i;
      if (stack.empty() || !stack.back().object || !stack.back().expect_key) continue;
      stack.back().expect_key = false;
      const nlohmann::json key = nlohmann::json::parse(text.substr(start, i + 1 - start), nullptr,
                                                       /*allow_exceptions=*/false);
      if (!key.is_string()) return std::nullopt;  // not valid JSON: the parser says so
      if (!stack.back().keys.insert(key.get<std::string>()).second)
        return std::pair{start, key.get<std::string>()};
    } else if (c == '{' || c == '[') {
      stack.push_back({c == '{', c == '{', {}});
    } else if (c == '}' || c == ']') {
      if (!stack.empty()) stack.pop_back();
    } else if (c == ',' && !stack.empty() && stack.back().object) {
      stack.back().expect_key = true;
    }
  }
  return std::nullopt;
}

std::optional<std::pair<std::size_t, std::string>> duplicate_key_problem(std::string_view text) {
  std::optional<std::pair<std::size_t, std::string>> dup = json_duplicate_key(text);
  if (!dup) return std::nullopt;
  return std::pair{dup->first,
                   fmt::format("key '{}' appears twice in one object: keep one of them (a reader "
                               "would silently take the last)",
                               printable(one_line(dup->second)))};
}

}  // namespace tune
