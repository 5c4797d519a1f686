// Where things are in a space file's TOML source: the entries of a table in declaration order,
// the kind of a node as messages name it, and the file position of each byte of a string value,
// so that a column inside a prune or when expression maps back to the file.
#include <tuner/core/space/space_parser.hpp>

#include <algorithm>
#include <cstdint>
#include <cstdlib>

namespace tune::detail {

namespace {

bool before(const SourcePos& a, const SourcePos& b) {
  return a.line != b.line ? a.line < b.line : a.column < b.column;
}

std::size_t utf8_length(std::uint32_t cp) {
  return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
}

}  // namespace

std::string_view kind_of(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::integer:
      return "an int";
    case toml::node_type::string:
      return "a string";
    case toml::node_type::floating_point:
      return "a float";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::date:
      return "a date";
    case toml::node_type::time:
      return "a time";
    case toml::node_type::date_time:
      return "a date-time";
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "a list";
    default:
      return "nothing";
  }
}

SourcePos pos_of(const toml::source_region& r) {
  return {static_cast<int>(r.begin.line), static_cast<int>(r.begin.column)};
}

std::vector<TomlEntry> in_order(const toml::table& t) {
  std::vector<TomlEntry> out;
  for (auto&& [k, v] : t)
    out.push_back({std::string(k.str()), pos_of(k.source()), &v});
  std::stable_sort(out.begin(), out.end(), [](const TomlEntry& a, const TomlEntry& b) {
    return before(a.key_pos, b.key_pos);
  });
  return out;
}

std::size_t offset_of(std::string_view doc, SourcePos pos) {
  std::size_t p = 0;
  for (int line = 1; line < pos.line && p < doc.size(); ++p)
    if (doc[p] == '\n') ++line;
  for (int col = 1; col < pos.column && p < doc.size();) {
    ++p;
    while (p < doc.size() && (static_cast<unsigned char>(doc[p]) & 0xC0) == 0x80)
      ++p;
    ++col;
  }
  return p;
}

std::vector<SourcePos> place_string(std::string_view doc, SourcePos begin) {
  std::vector<SourcePos> places;
  std::size_t p = offset_of(doc, begin);
  int line = begin.line;
  int col = begin.column;
  auto step = [&] {
    const char b = doc[p++];
    if (b == '\n') {
      ++line;
      col = 1;
    } else if (p >= doc.size() || (static_cast<unsigned char>(doc[p]) & 0xC0) != 0x80) {
      ++col;
    }
  };
  if (p >= doc.size()) return places;
  const char quote = doc[p];
  if (quote != '"' && quote != '\'') return places;
  const bool multi = doc.substr(p, 3) == std::string_view(quote == '"' ? "\"\"\"" : "'''");
  for (int i = 0; i < (multi ? 3 : 1); ++i)
    step();
  if (multi) {  // a newline right after the opening delimiter is trimmed
    if (doc.substr(p, 2) == "\r\n") {
      step();
      step();
    } else if (p < doc.size() && doc[p] == '\n') {
      step();
    }
  }
  const std::string_view closing =
      multi ? (quote == '"' ? "\"\"\"" : "'''") : (quote == '"' ? "\"" : "'");
  while (p < doc.size() && doc.substr(p, closing.size()) != closing) {
    const SourcePos here{line, col};
    if (multi && doc.substr(p, 2) == "\r\n") {  // TOML++ decodes a CRLF to one '\n'
      places.push_back(here);
      step();
      step();
      continue;
    }
    if (quote == '"' && doc[p] == '\\' && p + 1 < doc.size()) {
      const char e = doc[p + 1];
      if (e == 'u' || e == 'U') {
        const std::size_t digits = e == 'u' ? 4 : 8;
        std::uint32_t cp = 0;
        const std::string hex(doc.substr(p + 2, digits));
        cp = static_cast<std::uint32_t>(std::strtoul(hex.c_str(), nullptr, 16));
        for (std::size_t i = 0; i < utf8_length(cp); ++i)
          places.push_back(here);
        for (std::size_t i = 0; i < 2 + digits && p < doc.size(); ++i)
          step();
        continue;
      }
      if (multi && (e == ' ' || e == '\t' || e == '\n' || e == '\r')) {
        // line-ending backslash: it and all whitespace up to the next content vanish
        step();
        while (p < doc.size() &&
               (doc[p] == ' ' || doc[p] == '\t' || doc[p] == '\n' || doc[p] == '\r'))
          step();
        continue;
      }
      places.push_back(here);
      step();
      step();
      continue;
    }
    places.push_back(here);
    step();
  }
  places.push_back({line, col});
  return places;
}

}  // namespace tune::detail
