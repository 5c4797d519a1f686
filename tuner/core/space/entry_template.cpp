#include <tuner/core/space/entry_template.hpp>

#include <algorithm>
#include <cctype>

#include <fmt/core.h>

#include <tuner/core/base/text.hpp>
#include <tuner/core/space/space.hpp>

namespace tune {
namespace {

bool is_ident_start(char c) {
  return std::isalpha(static_cast<unsigned char>(c)) || c == '_';
}
bool is_ident_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
}

diagnostic at_column(std::size_t index, std::string message) {
  return diagnostic{"", 0, static_cast<int>(index) + 1, std::move(message)};
}

// The parts of a qualified name (`a::b::k`), or nothing when it is not one.
std::vector<std::string> name_parts(std::string_view name) {
  std::vector<std::string> parts;
  std::size_t pos = 0;
  while (true) {
    std::size_t end = name.find("::", pos);
    std::string_view part = name.substr(pos, end == std::string_view::npos ? end : end - pos);
    if (part.empty() || !is_ident_start(part[0]) ||
        !std::all_of(part.begin(), part.end(), is_ident_char))
      return {};
    parts.emplace_back(part);
    if (end == std::string_view::npos) return parts;
    pos = end + 2;
  }
}

}  // namespace

std::optional<std::pair<std::size_t, std::string>> template_text_problem(std::string_view text,
                                                                         bool placeholders) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n' || c == '\r') return std::pair{i, std::string("a line break")};
    if (c < 0x20 || c == 0x7f)
      return std::pair{i, fmt::format("the control character \\x{:02x}", c)};
    if (c == '#') return std::pair{i, std::string("'#' (a preprocessor directive)")};
    if (c == ';') return std::pair{i, std::string("';' (a statement)")};
    if ((c == '{' || c == '}') && !placeholders)
      return std::pair{i, fmt::format("'{}' (a body)", static_cast<char>(c))};
    if (c == '/' && i + 1 < text.size() && (text[i + 1] == '/' || text[i + 1] == '*'))
      return std::pair{i, std::string("a comment")};
    if (c == '*' && i + 1 < text.size() && text[i + 1] == '/')
      return std::pair{i, std::string("a comment")};
  }
  return std::nullopt;
}

namespace {

using Problem = std::optional<std::pair<std::size_t, std::string>>;

Problem at(std::size_t i, std::string what) {
  return std::pair{i, std::move(what)};
}

// The end of the quoted literal that starts at `open` (`"` or `'`), past its closing quote, or
// npos when it is not closed.
std::size_t literal_end(std::string_view text, std::size_t open) {
  for (std::size_t i = open + 1; i < text.size(); ++i) {
    if (text[i] == '\\')
      ++i;
    else if (text[i] == text[open])
      return i + 1;
  }
  return std::string_view::npos;
}

// The end of the pp-number that starts at `i` (`1'000`, `0x1p-3f`, `64u`).
std::size_t number_end(std::string_view text, std::size_t i) {
  for (++i; i < text.size(); ++i) {
    const char c = text[i];
    const char before = text[i - 1];
    if (is_ident_char(c) || c == '.') continue;
    if (c == '\'' && i + 1 < text.size() && is_ident_char(text[i + 1])) continue;
    if ((c == '+' || c == '-') &&
        (before == 'e' || before == 'E' || before == 'p' || before == 'P'))
      continue;
    break;
  }
  return i;
}

}  // namespace

std::optional<std::pair<std::size_t, std::string>> map_text_problem(std::string_view text) {
  if (Problem p = template_text_problem(text, false)) return p;
  // Brackets open at each point: '(' and '[' always; '<' outside '(' and '[' (inside them
  // '<' and '>' compare, as C++ reads a template argument).
  std::vector<std::pair<char, std::size_t>> open;
  const auto in_parens = [&open] { return !open.empty() && open.back().first != '<'; };
  for (std::size_t i = 0; i < text.size();) {
    const char c = text[i];
    if (c == ' ' || c == '\t') {
      ++i;
    } else if (is_ident_start(c)) {
      std::size_t end = i;
      while (end < text.size() && is_ident_char(text[end]))
        ++end;
      const std::string_view word = text.substr(i, end - i);
      if (word == "_Pragma" || word == "__pragma" || word == "asm" || word == "__asm" ||
          word == "__asm__")
        return at(i, fmt::format("'{}' (a directive or an assembly statement)", word));
      if (end < text.size() && (text[end] == '"' || text[end] == '\'') &&
          word.find('R') != std::string_view::npos)
        return at(i, "a raw string literal");
      i = end;
    } else if (std::isdigit(static_cast<unsigned char>(c)) ||
               (c == '.' && i + 1 < text.size() &&
                std::isdigit(static_cast<unsigned char>(text[i + 1])))) {
      i = number_end(text, i);
    } else if (c == '"' || c == '\'') {
      const std::size_t end = literal_end(text, i);
      if (end == std::string_view::npos)
        return at(i, fmt::format("an unterminated {} literal", c == '"' ? "string" : "character"));
      i = end;
    } else if (c == '(' || c == '[') {
      open.emplace_back(c, i++);
    } else if (c == ')' || c == ']') {
      const char want = c == ')' ? '(' : '[';
      if (open.empty() || open.back().first != want)
        return at(i, fmt::format("an unbalanced '{}'", c));
      open.pop_back();
      ++i;
    } else if (c == '<' && !in_parens()) {
      // `<<` and `<=` compare or shift: no argument list starts with either.
      if (i + 1 < text.size() && (text[i + 1] == '<' || text[i + 1] == '=')) {
        i += 2;
      } else {
        open.emplace_back('<', i++);
      }
    } else if (c == '>' && !in_parens()) {
      if (i > 0 && text[i - 1] == '-') {  // `->`
        ++i;
        continue;
      }
      if (open.empty())
        return at(i, "a '>' that closes no '<' (it would end the template argument list)");
      open.pop_back();
      ++i;
    } else if (c == ',' && open.empty()) {
      return at(i, "a ',' outside brackets (a second template argument)");
    } else if (std::string_view("+-*/%^&|~!=<>?:.,").find(c) != std::string_view::npos) {
      ++i;
    } else {
      return at(i, fmt::format("'{}', which is not C++ punctuation here", c));
    }
  }
  if (!open.empty())
    return at(open.back().second, fmt::format("an unclosed '{}'", open.back().first));
  return std::nullopt;
}

bool is_template_entry(std::string_view entry) {
  return entry.find('<') != std::string_view::npos;
}

std::string EntryTemplate::instantiate(const Config& config) const {
  std::string out;
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    if (i % 2 == 0) {
      out += pieces[i];
      continue;
    }
    const ParamValue* v = config.find(pieces[i]);
    const std::string value = v == nullptr ? std::string() : v->plain();
    auto map = maps.find(pieces[i]);
    if (map != maps.end()) {
      auto it = map->second.find(value);
      out += it != map->second.end() ? it->second : value;
    } else {
      out += value;
    }
  }
  return out;
}

std::string EntryTemplate::unit_text(const Config& config, std::string_view source) const {
  // A host function taking the instance's address is enough for nvcc to compile the instance
  // into the device module; unlike an explicit instantiation it needs no parameter list.
  return fmt::format(
      "// Generated by tune for config {}: the template entry {} as one instance. Do not edit.\n"
      "#include \"{}\"\n"
      "void* tune_entry_instance() {{ return reinterpret_cast<void*>(&{}); }}\n",
      config.id(), text, source, instantiate(config));
}

std::string EntryTemplate::mangled_prefix() const {
  const std::vector<std::string> parts = name_parts(name);
  if (parts.size() == 1) return fmt::format("_Z{}{}I", parts[0].size(), parts[0]);
  std::string out = "_ZN";
  for (const auto& p : parts)
    out += std::to_string(p.size()) + p;
  return out + "I";
}

result<std::string> EntryTemplate::pick_symbol(const std::vector<std::string>& functions) const {
  const std::string prefix = mangled_prefix();
  std::vector<std::string> found;
  for (const auto& f : functions)
    if (f.rfind(prefix, 0) == 0) found.push_back(f);
  if (found.size() == 1) return found[0];
  if (found.empty())
    return fail("", 0, 0,
                fmt::format("the module has no instance of the template entry '{}' (entry "
                            "functions: {})",
                            name, functions.empty() ? "none" : quoted_list(functions)));
  return fail("", 0, 0,
              fmt::format("the module has {} instances of the template entry '{}' ({}): the "
                          "source may not instantiate the entry itself; keep SOURCE to the "
                          "template (the header that defines it) and move the code that launches "
                          "or instantiates it to another source file (docs/using.md, \"A library "
                          "that compiles its kernels with CMake's CUDA language\")",
                          found.size(), name, quoted_list(found)));
}

result<EntryTemplate> parse_entry_template(std::string_view text, const Space& space) {
  if (auto problem = template_text_problem(text, true))
    return fail(at_column(problem->first,
                          fmt::format("template entry holds {}: it is a C++ template argument "
                                      "list, nothing else",
                                      problem->second)));
  EntryTemplate t;
  t.text = std::string(text);
  const std::size_t open = text.find('<');
  std::size_t name_end = open == std::string_view::npos ? text.size() : open;
  while (name_end > 0 && text[name_end - 1] == ' ')
    --name_end;
  t.name = std::string(text.substr(0, name_end));
  if (name_parts(t.name).empty())
    return fail(at_column(0, fmt::format("template entry '{}' must start with a C++ template "
                                         "name such as 'tile_gemm' or 'ns::tile_gemm'",
                                         text)));
  if (open == std::string_view::npos || text.back() != '>')
    return fail(at_column(name_end, fmt::format("template entry '{}' needs its template "
                                                "arguments: write '{}<{{PARAM}}, ...>'",
                                                text, t.name)));
  std::vector<std::string> names;
  for (const Param& p : space.params())
    names.push_back(p.name);
  std::string literal;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '{') {
      literal += text[i];
      continue;
    }
    const std::size_t close = text.find('}', i);
    if (close == std::string_view::npos)
      return fail(at_column(i, fmt::format("unclosed '{{' in template entry '{}': write "
                                           "'{{PARAM}}'",
                                           text)));
    const std::string param(text.substr(i + 1, close - i - 1));
    if (std::find(names.begin(), names.end(), param) == names.end())
      return fail(at_column(
          i + 1, fmt::format("placeholder '{{{}}}' of template entry '{}' names no param of "
                             "'{}' (params: {}){}",
                             param, text, space.kernel(), quoted_list(names),
                             did_you_mean(param, names))));
    t.pieces.push_back(std::move(literal));
    literal.clear();
    t.pieces.push_back(param);
    i = close;
  }
  t.pieces.push_back(std::move(literal));
  for (const auto& [param, map] : space.entry_maps())
    t.maps[param] = map;
  return t;
}

}  // namespace tune
