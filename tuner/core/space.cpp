#include <tuner/core/space.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <system_error>

#include <fmt/core.h>
#include <toml++/toml.h>
#include <nlohmann/json.hpp>

#include <tuner/core/hash.hpp>
#include <tuner/core/input_limits.hpp>
#include <tuner/core/text.hpp>

namespace tune {

const ParamValue* Bucket::shape_value(std::string_view shape_name) const {
  for (const auto& [n, v] : shape)
    if (n == shape_name) return &v;
  return nullptr;
}

SourcePos detail::PlacedExpr::at(int column) const {
  if (places.empty()) return {};
  const auto i = static_cast<std::size_t>(std::max(column, 1) - 1);
  return places[std::min(i, places.size() - 1)];
}

namespace {

using json = nlohmann::ordered_json;

constexpr std::string_view reserved_names[] = {"schema", "kernel", "prune", "require", "params_as"};
constexpr std::string_view top_level_keys[] = {"schema",    "kernel", "prune",   "require",
                                               "params_as", "params", "configs", "buckets",
                                               "search",    "bench"};

bool is_identifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])) != 0) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
  });
}

bool is_kernel_name(std::string_view s) {
  if (s.empty() || s[0] == '.') return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '.' || c == '-';
  });
}

bool is_token_value(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '.' || c == ':' ||
           c == '+' || c == '-';
  });
}

constexpr std::string_view identifier_rule = "letters, digits and '_', not starting with a digit";
constexpr std::string_view token_rule =
    "letters, digits, '_', '.', ':', '+' and '-' (it becomes a -D token)";

/// How messages name a TOML node's kind.
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

/// A value as messages quote it: ints bare, strings in '...'.
std::string show(const ParamValue& v) {
  return v.is_int() ? std::to_string(v.as_int()) : "'" + v.as_string() + "'";
}

SourcePos pos_of(const toml::source_region& r) {
  return {static_cast<int>(r.begin.line), static_cast<int>(r.begin.column)};
}

bool before(const SourcePos& a, const SourcePos& b) {
  return a.line != b.line ? a.line < b.line : a.column < b.column;
}

struct Entry {
  std::string key;
  SourcePos key_pos;
  const toml::node* node;
};

/// A table's entries in source order (TOML++ tables are sorted maps).
std::vector<Entry> in_order(const toml::table& t) {
  std::vector<Entry> out;
  for (auto&& [k, v] : t)
    out.push_back({std::string(k.str()), pos_of(k.source()), &v});
  std::stable_sort(out.begin(), out.end(),
                   [](const Entry& a, const Entry& b) { return before(a.key_pos, b.key_pos); });
  return out;
}

/// The byte offset of a 1-based (line, column-in-characters) position in `doc`.
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

std::size_t utf8_length(std::uint32_t cp) {
  return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
}

/// For a TOML string value starting (at its opening quote) at `begin`, the file position of
/// each byte of the decoded string, plus one for the closing quote. Handles basic and literal
/// strings, single- and multi-line, escapes and line-ending backslashes.
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

}  // namespace

std::vector<std::string> Space::bucket_names() const {
  std::vector<std::string> names;
  for (const Bucket& b : buckets_)
    names.push_back(b.name);
  return names;
}

/// Reads and validates one space document into a Space; every check of space.hpp lives here.
struct SpaceParser {
  std::string_view doc;
  Space s;
  std::optional<diagnostic> err;

  bool error(SourcePos pos, std::string message) {
    err = diagnostic{s.path_, pos.line, pos.column, std::move(message)};
    return false;
  }
  bool error_at(const toml::node& n, std::string message) {
    return error(pos_of(n.source()), std::move(message));
  }

  result<Space> run() {
    toml::table root;
    try {
      root = toml::parse(doc, std::string_view(s.path_));
    } catch (const toml::parse_error& e) {
      std::string d(e.description());
      if (!d.empty()) d[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(d[0])));
      return fail(s.path_, static_cast<int>(e.source().begin.line),
                  static_cast<int>(e.source().begin.column), "invalid TOML: " + d);
    }
    if (!read(root)) return fail(*err);
    s.space_hash_ = hash();
    return std::move(s);
  }

  // ---- top level ----------------------------------------------------------------------

  SourcePos params_pos;
  std::vector<Entry> top;

  const Entry* find_top(std::string_view key) const {
    for (const auto& e : top)
      if (e.key == key) return &e;
    return nullptr;
  }

  bool read(const toml::table& root) {
    top = in_order(root);
    for (const auto& e : top) {
      if (std::find(std::begin(top_level_keys), std::end(top_level_keys), e.key) !=
          std::end(top_level_keys))
        continue;
      const std::string what = e.node->is_array_of_tables() ? fmt::format("table [[{}]]", e.key)
                               : e.node->is_table()         ? fmt::format("table [{}]", e.key)
                                                            : fmt::format("key '{}'", e.key);
      return error(e.key_pos,
                   fmt::format("unknown top-level {} (expected schema, kernel, prune, require, "
                               "params_as, [params], [[configs]], [[buckets]], [search] or "
                               "[bench]){}",
                               what, did_you_mean(e.key, top_level_keys)));
    }
    return check_reserved() && read_schema() && read_kernel() && read_params() && read_configs() &&
           read_params_as() && read_buckets() && read_prune() && read_search() && read_bench() &&
           check_size() && enumerate() && read_require();
  }

  // A reserved key under [params] usually means it was written after the table header; say so
  // before complaining that it is missing at the top.
  bool check_reserved() {
    const Entry* e = find_top("params");
    if (e == nullptr || !e->node->is_table()) return true;
    for (const auto& pe : in_order(*e->node->as_table()))
      if (std::find(std::begin(reserved_names), std::end(reserved_names), pe.key) !=
          std::end(reserved_names))
        return error(pe.key_pos,
                     fmt::format("'{}' is a top-level key, not a param: move it above the first "
                                 "table (in TOML every key after [params] belongs to [params])",
                                 pe.key));
    return true;
  }

  bool read_schema() {
    const Entry* e = find_top("schema");
    if (e == nullptr) return error({}, "missing 'schema = 1' at the top of the file");
    if (!e->node->is_integer())
      return error_at(*e->node, fmt::format("'schema' must be an int, got {}", kind_of(*e->node)));
    const auto v = e->node->value<std::int64_t>().value_or(0);
    if (v != 1)
      return error_at(*e->node,
                      fmt::format("unsupported schema {} (this tuner reads schema 1)", v));
    s.schema_ = 1;
    return true;
  }

  bool read_kernel() {
    const Entry* e = find_top("kernel");
    if (e == nullptr) return error({}, "missing 'kernel = \"<name>\"' at the top of the file");
    if (!e->node->is_string())
      return error_at(*e->node,
                      fmt::format("'kernel' must be a string, got {}", kind_of(*e->node)));
    s.kernel_ = e->node->value<std::string>().value_or("");
    if (!is_kernel_name(s.kernel_))
      return error_at(*e->node,
                      fmt::format("kernel name '{}' may hold only letters, digits, '_', '.' and "
                                  "'-', and may not start with '.'",
                                  s.kernel_));
    return true;
  }

  bool read_params_as() {
    const Entry* e = find_top("params_as");
    if (e == nullptr) return true;
    if (!e->node->is_string())
      return error_at(*e->node,
                      fmt::format("'params_as' must be a string, got {}", kind_of(*e->node)));
    const auto v = e->node->value<std::string>();
    if (*v == "defines")
      s.params_as_ = ParamsAs::defines;
    else if (*v == "constexpr")
      s.params_as_ = ParamsAs::constexpr_header;
    else
      return error_at(*e->node, fmt::format("unknown params_as '{}' (expected 'defines' or "
                                            "'constexpr')",
                                            *v));
    return true;
  }

  // ---- params -------------------------------------------------------------------------

  const Param* param(std::string_view name) const {
    for (const auto& p : s.params_)
      if (p.name == name) return &p;
    return nullptr;
  }
  std::vector<std::string> param_names() const {
    std::vector<std::string> out;
    for (const auto& p : s.params_)
      out.push_back(p.name);
    return out;
  }

  bool read_params() {
    const Entry* e = find_top("params");
    if (e == nullptr) return error({}, "missing [params] (the space is the product of its lists)");
    params_pos = e->key_pos;
    const toml::table* t = e->node->as_table();
    if (t == nullptr)
      return error(e->key_pos, fmt::format("'params' must be a table, got {}", kind_of(*e->node)));
    params_pos = pos_of(t->source());
    for (const auto& pe : in_order(*t)) {
      if (!is_identifier(pe.key))
        return error(pe.key_pos, fmt::format("param name '{}' is not a C identifier ({})", pe.key,
                                             identifier_rule));
      const toml::array* list = pe.node->as_array();
      if (list == nullptr)
        return error_at(*pe.node, fmt::format("param '{}' must be a list of ints or strings, got "
                                              "{} (write {} = [...])",
                                              pe.key, kind_of(*pe.node), pe.key));
      if (list->empty())
        return error_at(*pe.node, fmt::format("param '{}' has no values (expected a non-empty "
                                              "list of ints or strings)",
                                              pe.key));
      Param p;
      p.name = pe.key;
      p.pos = pe.key_pos;
      for (std::size_t i = 0; i < list->size(); ++i) {
        const toml::node& v = *list->get(i);
        std::optional<ParamValue> value;
        if (v.is_integer())
          value = ParamValue(*v.value<std::int64_t>());
        else if (v.is_string())
          value = ParamValue(*v.value<std::string>());
        else
          return error_at(v, fmt::format("param '{}' value {} is {}, expected an int or a string",
                                         pe.key, i + 1, kind_of(v)));
        if (!p.values.empty() && value->is_int() != p.values[0].is_int())
          return error_at(v, fmt::format("param '{}' mixes kinds: value 1 is {}, value {} is {} "
                                         "(a param holds only ints or only strings)",
                                         pe.key, kind_of(*list->get(0)), i + 1, kind_of(v)));
        if (value->is_string() && !is_token_value(value->as_string()))
          return error_at(v, fmt::format("param '{}' value '{}' may hold only {}", pe.key,
                                         value->as_string(), token_rule));
        if (std::find(p.values.begin(), p.values.end(), *value) != p.values.end())
          return error_at(v, fmt::format("param '{}' lists {} twice", pe.key, show(*value)));
        p.values.push_back(std::move(*value));
      }
      s.params_.push_back(std::move(p));
    }
    if (s.params_.empty()) return error(params_pos, "[params] declares no params");
    return true;
  }

  /// Reads a [[configs]] or require entry: exactly the declared params, each of its kind.
  bool read_config(const toml::node& n, std::string_view what, Config& out) {
    const toml::table* t = n.as_table();
    if (t == nullptr)
      return error_at(n, fmt::format("{} must be a table of params, got {}", what, kind_of(n)));
    std::vector<std::string> missing;
    std::vector<std::string> extra;
    for (const auto& p : s.params_)
      if (!t->contains(p.name)) missing.push_back(p.name);
    for (const auto& e : in_order(*t))
      if (param(e.key) == nullptr) extra.push_back(e.key);
    if (!missing.empty() || !extra.empty()) {
      std::vector<std::string> parts;
      if (!missing.empty()) parts.push_back("missing " + quoted_list(missing));
      if (!extra.empty()) parts.push_back("not params: " + quoted_list(extra));
      return error_at(n, fmt::format("{} does not name exactly the declared params ({}): {}", what,
                                     join(param_names()), join(parts, "; ")));
    }
    Config::Map m;
    for (const auto& e : in_order(*t)) {
      const Param& p = *param(e.key);
      const bool want_int = p.values[0].is_int();
      if (want_int ? !e.node->is_integer() : !e.node->is_string())
        return error_at(*e.node,
                        fmt::format("{}: '{}' is {}, but param '{}' holds {}", what, e.key,
                                    kind_of(*e.node), e.key, want_int ? "ints" : "strings"));
      ParamValue v = want_int ? ParamValue(*e.node->value<std::int64_t>())
                              : ParamValue(*e.node->value<std::string>());
      if (v.is_string() && !is_token_value(v.as_string()))
        return error_at(*e.node, fmt::format("{}: value '{}' of '{}' may hold only {}", what,
                                             v.as_string(), e.key, token_rule));
      m.emplace(e.key, std::move(v));
    }
    out = Config(std::move(m));
    return true;
  }

  bool read_configs() {
    const Entry* e = find_top("configs");
    if (e == nullptr) return true;
    const toml::array* a = e->node->as_array();
    if (a == nullptr)
      return error(e->key_pos,
                   fmt::format("'configs' must be [[configs]] tables, got {}", kind_of(*e->node)));
    for (std::size_t i = 0; i < a->size(); ++i) {
      Config c;
      if (!read_config(*a->get(i), fmt::format("[[configs]] entry {}", i + 1), c)) return false;
      s.explicit_.push_back(std::move(c));
    }
    return true;
  }

  // ---- buckets ------------------------------------------------------------------------

  bool read_buckets() {
    const Entry* e = find_top("buckets");
    if (e == nullptr) {
      Bucket b;
      b.name = "default";
      s.buckets_.push_back(std::move(b));
      s.when_exprs_.emplace_back();
      return true;
    }
    const toml::array* a = e->node->as_array();
    if (a == nullptr)
      return error(e->key_pos,
                   fmt::format("'buckets' must be [[buckets]] tables, got {}", kind_of(*e->node)));
    if (a->empty()) return error(e->key_pos, "'buckets' is empty (declare at least one bucket)");
    for (std::size_t i = 0; i < a->size(); ++i)
      if (!read_bucket(*a->get(i), i + 1)) return false;
    return true;
  }

  bool read_bucket(const toml::node& n, std::size_t index) {
    const toml::table* t = n.as_table();
    if (t == nullptr)
      return error_at(
          n, fmt::format("[[buckets]] entry {} must be a table, got {}", index, kind_of(n)));
    constexpr std::string_view keys[] = {"name", "when", "shape"};
    for (const auto& e : in_order(*t))
      if (std::find(std::begin(keys), std::end(keys), e.key) == std::end(keys))
        return error(e.key_pos, fmt::format("unknown key '{}' in [[buckets]] (expected name, "
                                            "when, shape){}",
                                            e.key, did_you_mean(e.key, keys)));
    Bucket b;
    b.pos = pos_of(t->source());
    const toml::node* name = t->get("name");
    if (name == nullptr)
      return error(b.pos, fmt::format("[[buckets]] entry {} has no 'name'", index));
    if (!name->is_string())
      return error_at(*name, fmt::format("bucket name must be a string, got {}", kind_of(*name)));
    b.name = *name->value<std::string>();
    if (b.name.empty()) return error_at(*name, "bucket name is empty");
    for (const auto& other : s.buckets_)
      if (other.name == b.name)
        return error_at(*name, fmt::format("duplicate bucket '{}' (first declared at line {})",
                                           b.name, other.pos.line));
    const toml::node* shape = t->get("shape");
    if (shape == nullptr)
      return error(b.pos, fmt::format("bucket '{}' has no 'shape' (the shape the tune measures; "
                                      "shape = {{}} for none)",
                                      b.name));
    const toml::table* st = shape->as_table();
    if (st == nullptr)
      return error_at(*shape, fmt::format("shape of bucket '{}' must be a table like "
                                          "{{ M = 512 }}, got {}",
                                          b.name, kind_of(*shape)));
    for (const auto& e : in_order(*st)) {
      if (!is_identifier(e.key))
        return error(e.key_pos, fmt::format("shape name '{}' in bucket '{}' is not a C identifier "
                                            "({})",
                                            e.key, b.name, identifier_rule));
      if (param(e.key) != nullptr)
        return error(e.key_pos, fmt::format("shape name '{}' in bucket '{}' is also a param "
                                            "(prune expressions would read the param): rename it",
                                            e.key, b.name));
      if (e.node->is_integer())
        b.shape.emplace_back(e.key, ParamValue(*e.node->value<std::int64_t>()));
      else if (e.node->is_string())
        b.shape.emplace_back(e.key, ParamValue(*e.node->value<std::string>()));
      else
        return error_at(*e.node, fmt::format("shape value '{}' of bucket '{}' is {}, expected an "
                                             "int or a string",
                                             e.key, b.name, kind_of(*e.node)));
    }
    std::optional<detail::PlacedExpr> when;
    if (const toml::node* w = t->get("when")) {
      if (!w->is_string())
        return error_at(
            *w, fmt::format("'when' of bucket '{}' must be a string, got {}", b.name, kind_of(*w)));
      b.when = *w->value<std::string>();
      when.emplace();
      if (!place(*w, "when", fmt::format(" of bucket '{}'", b.name), *when)) return false;
      if (!check_when(*when, b)) return false;
    }
    s.buckets_.push_back(std::move(b));
    s.when_exprs_.push_back(std::move(when));
    return true;
  }

  /// Parses a string node as an expression, mapping its columns to the file. `what` names it
  /// in messages ("prune", "when"), `where` follows the quoted text (" of bucket 'a'").
  bool place(const toml::node& n, std::string_view what, std::string_view where,
             detail::PlacedExpr& out) {
    const std::string text = *n.value<std::string>();
    out.places = place_string(doc, pos_of(n.source()));
    if (out.places.size() != text.size() + 1) {  // cannot map: point at the string itself
      out.places.assign(text.size() + 1, pos_of(n.source()));
    }
    auto parsed = Expr::parse(text);
    if (!parsed)
      return error(out.at(parsed.error().column),
                   fmt::format("invalid {} expression '{}'{}: {}", what, one_line(text), where,
                               parsed.error().message));
    out.expr = std::move(*parsed);
    return true;
  }

  bool check_when(const detail::PlacedExpr& w, const Bucket& b) {
    const Expr& e = w.expr;
    for (const auto& name : e.names()) {
      const SourcePos at = w.at(e.name_column(name));
      if (param(name) != nullptr)
        return error(at, fmt::format("when expression '{}' of bucket '{}' reads the param '{}' "
                                     "(a when may read only shape names)",
                                     one_line(e.text()), b.name, name));
      if (b.shape_value(name) == nullptr) {
        std::vector<std::string> shape_names;
        for (const auto& [n, v] : b.shape)
          shape_names.push_back(n);
        return error(at, fmt::format("when expression '{}' of bucket '{}' reads '{}', which is not "
                                     "a shape name of the bucket (its shape names: {}){}",
                                     one_line(e.text()), b.name, name,
                                     shape_names.empty() ? "none" : join(shape_names),
                                     did_you_mean(name, shape_names)));
      }
    }
    auto kind = e.check([&](std::string_view n) -> std::optional<ValueKind> {
      const ParamValue* v = b.shape_value(n);
      if (v == nullptr) return std::nullopt;
      return v->is_int() ? ValueKind::integer : ValueKind::string;
    });
    if (!kind)
      return error(w.at(kind.error().column),
                   fmt::format("invalid when expression '{}' of bucket '{}': {}",
                               one_line(e.text()), b.name, kind.error().message));
    if (*kind != ValueKind::integer)
      return error(w.at(1), fmt::format("when expression '{}' of bucket '{}' is a string, "
                                        "expected a condition",
                                        one_line(e.text()), b.name));
    auto holds = e.test([&](std::string_view n) { return b.shape_value(n); });
    if (!holds)
      return error(w.at(holds.error().column),
                   fmt::format("{}, for the shape of bucket '{}'", holds.error().message, b.name));
    if (!*holds)
      return error(w.at(1), fmt::format("the shape of bucket '{}' does not satisfy its when '{}'",
                                        b.name, one_line(e.text())));
    return true;
  }

  // ---- prune --------------------------------------------------------------------------

  bool read_prune() {
    const Entry* e = find_top("prune");
    if (e == nullptr) return true;
    const toml::array* a = e->node->as_array();
    if (a == nullptr)
      return error_at(*e->node,
                      fmt::format("'prune' must be a list of strings, got {}", kind_of(*e->node)));
    for (std::size_t i = 0; i < a->size(); ++i) {
      const toml::node& n = *a->get(i);
      if (!n.is_string())
        return error_at(n,
                        fmt::format("prune entry {} must be a string, got {}", i + 1, kind_of(n)));
      detail::PlacedExpr pe;
      if (!place(n, "prune", "", pe)) return false;
      if (!check_prune(pe)) return false;
      s.prune_.push_back(pe.expr.text());
      s.prune_pos_.push_back(pos_of(n.source()));
      s.prune_exprs_.push_back(std::move(pe));
    }
    return true;
  }

  bool check_prune(const detail::PlacedExpr& pe) {
    const Expr& e = pe.expr;
    std::vector<std::string> all_shape_names;
    for (const auto& b : s.buckets_)
      for (const auto& [n, v] : b.shape)
        if (std::find(all_shape_names.begin(), all_shape_names.end(), n) == all_shape_names.end())
          all_shape_names.push_back(n);
    for (const auto& name : e.names()) {
      if (param(name) != nullptr) continue;
      const SourcePos at = pe.at(e.name_column(name));
      if (std::find(all_shape_names.begin(), all_shape_names.end(), name) ==
          all_shape_names.end()) {
        std::vector<std::string> known = param_names();
        known.insert(known.end(), all_shape_names.begin(), all_shape_names.end());
        return error(at, fmt::format("prune expression '{}' reads '{}', which is neither a param "
                                     "nor a shape name (params: {}; shape names: {}){}",
                                     one_line(e.text()), name, join(param_names()),
                                     all_shape_names.empty() ? "none" : join(all_shape_names),
                                     did_you_mean(name, known)));
      }
      for (const auto& b : s.buckets_) {
        if (b.shape_value(name) != nullptr) continue;
        std::vector<std::string> shape_names;
        for (const auto& [n, v] : b.shape)
          shape_names.push_back(n);
        return error(at, fmt::format("prune expression '{}' reads '{}', which bucket '{}' has no "
                                     "shape value for (its shape names: {})",
                                     one_line(e.text()), name, b.name,
                                     shape_names.empty() ? "none" : join(shape_names)));
      }
    }
    const bool reads_shape = std::any_of(e.names().begin(), e.names().end(),
                                         [&](const std::string& n) { return !param(n); });
    for (const auto& b : s.buckets_) {
      auto kind = e.check([&](std::string_view n) -> std::optional<ValueKind> {
        const ParamValue* v = nullptr;
        if (const Param* p = param(n))
          v = &p->values[0];
        else
          v = b.shape_value(n);
        if (v == nullptr) return std::nullopt;
        return v->is_int() ? ValueKind::integer : ValueKind::string;
      });
      const std::string where =
          reads_shape && s.buckets_.size() > 1 ? fmt::format(" (in bucket '{}')", b.name) : "";
      if (!kind)
        return error(pe.at(kind.error().column),
                     fmt::format("invalid prune expression '{}'{}: {}", one_line(e.text()), where,
                                 kind.error().message));
      if (*kind != ValueKind::integer)
        return error(pe.at(1), fmt::format("prune expression '{}' is a string, expected a "
                                           "condition",
                                           one_line(e.text())));
      if (!reads_shape) break;  // the same for every bucket
    }
    return true;
  }

  // ---- search and bench ---------------------------------------------------------------

  template <std::size_t N>
  const toml::table* settings_table(std::string_view name, const std::string_view (&keys)[N]) {
    const Entry* e = find_top(name);
    if (e == nullptr) return nullptr;
    const toml::table* t = e->node->as_table();
    if (t == nullptr) {
      error(e->key_pos, fmt::format("'{}' must be a table, got {}", name, kind_of(*e->node)));
      return nullptr;
    }
    for (const auto& k : in_order(*t))
      if (std::find(std::begin(keys), std::end(keys), k.key) == std::end(keys)) {
        error(k.key_pos, fmt::format("unknown key '{}' in [{}] (expected {}){}", k.key, name,
                                     join(keys), did_you_mean(k.key, keys)));
        return nullptr;
      }
    return t;
  }

  /// A number (int or float) from `t[key]`, checked against `min` (exclusive when `strict`).
  bool number(const toml::table& t, std::string_view table, std::string_view key, bool strict,
              std::string_view unit, std::optional<double>& out) {
    const toml::node* n = t.get(key);
    if (n == nullptr) return true;
    const std::string_view rule = strict ? "a positive" : "a non-negative";
    if (!n->is_number())
      return error_at(*n, fmt::format("'{}' in [{}] must be {} number of {}, got {}", key, table,
                                      rule, unit, kind_of(*n)));
    const double v =
        n->is_integer() ? static_cast<double>(*n->value<std::int64_t>()) : *n->value<double>();
    if (!(strict ? v > 0 : v >= 0) || !std::isfinite(v))
      return error_at(*n, fmt::format("'{}' in [{}] must be {} number of {}, got {}", key, table,
                                      rule, unit, v));
    out = v;
    return true;
  }

  bool read_search() {
    constexpr std::string_view keys[] = {"strategy", "budget_s", "timeout_s"};
    const toml::table* t = settings_table("search", keys);
    if (err) return false;
    if (t == nullptr) return true;
    if (const toml::node* n = t->get("strategy")) {
      if (!n->is_string())
        return error_at(
            *n, fmt::format("'strategy' in [search] must be a string, got {}", kind_of(*n)));
      const std::string v = *n->value<std::string>();
      if (v != "grid")
        return error_at(*n, fmt::format("unknown search strategy '{}' (expected 'grid')", v));
      s.search_.strategy = v;
    }
    return number(*t, "search", "budget_s", true, "seconds", s.search_.budget_s) &&
           number(*t, "search", "timeout_s", true, "seconds", s.search_.timeout_s);
  }

  bool reps(const toml::table& t, std::string_view key, int& out) {
    const toml::node* n = t.get(key);
    if (n == nullptr) return true;
    if (!n->is_integer())
      return error_at(
          *n, fmt::format("'{}' in [bench] must be a positive int, got {}", key, kind_of(*n)));
    const std::int64_t v = *n->value<std::int64_t>();
    if (v < 1 || v > std::numeric_limits<int>::max())
      return error_at(*n, fmt::format("'{}' in [bench] must be a positive int, got {}", key, v));
    out = static_cast<int>(v);
    return true;
  }

  bool read_bench() {
    constexpr std::string_view keys[] = {"warmup_ms", "rep_ms", "min_reps", "max_reps", "clear_l2"};
    const toml::table* t = settings_table("bench", keys);
    if (err) return false;
    if (t == nullptr) return true;
    std::optional<double> warmup;
    std::optional<double> rep;
    if (!number(*t, "bench", "warmup_ms", false, "milliseconds", warmup) ||
        !number(*t, "bench", "rep_ms", true, "milliseconds", rep) ||
        !reps(*t, "min_reps", s.bench_.min_reps) || !reps(*t, "max_reps", s.bench_.max_reps))
      return false;
    if (warmup) s.bench_.warmup_ms = *warmup;
    if (rep) s.bench_.rep_ms = *rep;
    if (s.bench_.min_reps > s.bench_.max_reps) {
      const toml::node* n = t->get("min_reps") != nullptr ? t->get("min_reps") : t->get("max_reps");
      return error_at(*n, fmt::format("'min_reps' ({}) exceeds 'max_reps' ({}) in [bench]",
                                      s.bench_.min_reps, s.bench_.max_reps));
    }
    if (const toml::node* n = t->get("clear_l2")) {
      if (!n->is_boolean())
        return error_at(
            *n, fmt::format("'clear_l2' in [bench] must be true or false, got {}", kind_of(*n)));
      s.bench_.clear_l2 = *n->value<bool>();
    }
    return true;
  }

  // ---- enumeration --------------------------------------------------------------------

  bool in_product(const Config& c) const {
    for (const auto& p : s.params_) {
      const ParamValue* v = c.find(p.name);
      if (v == nullptr || std::find(p.values.begin(), p.values.end(), *v) == p.values.end())
        return false;
    }
    return true;
  }

  std::vector<const Config*> outside_;  // explicit configs outside the product, first use

  bool check_size() {
    std::set<std::string> seen;
    for (const auto& c : s.explicit_)
      if (!in_product(c) && seen.insert(c.id()).second) outside_.push_back(&c);
    std::uint64_t product = 1;
    bool overflow = false;
    for (const auto& p : s.params_)
      overflow = overflow || __builtin_mul_overflow(product, p.values.size(), &product);
    std::uint64_t total = 0;
    overflow = overflow || __builtin_add_overflow(product, outside_.size(), &total);
    if (overflow)
      return error(params_pos,
                   fmt::format("the space has more than {} configs, over the limit of "
                               "{}: narrow [params] or split the space",
                               std::numeric_limits<std::uint64_t>::max(), max_space_configs));
    if (total > max_space_configs)
      return error(params_pos, fmt::format("the space has {} configs, over the limit of {}: "
                                           "narrow [params] or split the space",
                                           total, max_space_configs));
    return true;
  }

  bool enumerate() {
    std::size_t total = outside_.size();
    std::size_t product = 1;
    for (const auto& p : s.params_)
      product *= p.values.size();
    total += product;
    s.configs_.reserve(total);
    // Odometer over the params, the last declared varying fastest.
    std::vector<std::size_t> idx(s.params_.size(), 0);
    for (std::size_t n = 0; n < product; ++n) {
      Config::Map m;
      for (std::size_t i = 0; i < idx.size(); ++i)
        m.emplace(s.params_[i].name, s.params_[i].values[idx[i]]);
      s.configs_.emplace_back(std::move(m));
      for (std::size_t i = idx.size(); i-- > 0;) {
        if (++idx[i] < s.params_[i].values.size()) break;
        idx[i] = 0;
      }
    }
    for (const Config* c : outside_)
      s.configs_.push_back(*c);
    return true;
  }

  // ---- require ------------------------------------------------------------------------

  bool read_require() {
    const Entry* e = find_top("require");
    if (e == nullptr) return true;
    const toml::array* a = e->node->as_array();
    if (a == nullptr)
      return error_at(*e->node, fmt::format("'require' must be a list of configs like "
                                            "[{{ {} = ... }}], got {}",
                                            s.params_[0].name, kind_of(*e->node)));
    std::set<std::string> ids;
    for (std::size_t i = 0; i < a->size(); ++i) {
      const toml::node& n = *a->get(i);
      Config c;
      if (!read_config(n, fmt::format("require entry {}", i + 1), c)) return false;
      const std::string id = c.id();
      if (!in_product(c) &&
          std::none_of(outside_.begin(), outside_.end(), [&](const Config* x) { return *x == c; }))
        return error_at(n, fmt::format("incumbent '{}' is not in the space (neither in the "
                                       "[params] product nor a [[configs]] entry)",
                                       id));
      for (std::size_t b = 0; b < s.buckets_.size(); ++b) {
        auto rejected = s.first_rejecting(c, b);
        if (!rejected) {
          err = rejected.error();
          return false;
        }
        if (*rejected >= 0)
          return error_at(n, fmt::format("incumbent '{}' is pruned from bucket '{}' by '{}'", id,
                                         s.buckets_[b].name,
                                         one_line(s.prune_[static_cast<std::size_t>(*rejected)])));
      }
      if (ids.insert(id).second) s.require_.push_back(std::move(c));
    }
    return true;
  }

  // ---- the space hash -----------------------------------------------------------------

  static json value_json(const ParamValue& v) {
    return v.is_int() ? json(v.as_int()) : json(v.as_string());
  }
  static json config_json(const Config& c) {
    json j = json::object();
    for (const auto& [n, v] : c.params())
      j[n] = value_json(v);
    return j;
  }
  static json optional_json(const std::optional<double>& v) { return v ? json(*v) : json(); }

  std::string hash() const {
    json j;
    j["schema"] = s.schema_;
    json params = json::array();
    for (const auto& p : s.params_) {
      json values = json::array();
      for (const auto& v : p.values)
        values.push_back(value_json(v));
      params.push_back(json::array({p.name, values}));
    }
    j["params"] = params;
    json configs = json::array();
    for (const auto& c : s.explicit_)
      configs.push_back(config_json(c));
    j["configs"] = configs;
    json prune = json::array();
    for (const auto& pe : s.prune_exprs_)
      prune.push_back(pe.expr.canonical());
    j["prune"] = prune;
    json require = json::array();
    for (const auto& c : s.require_)
      require.push_back(c.id());
    j["require"] = require;
    json buckets = json::array();
    for (std::size_t i = 0; i < s.buckets_.size(); ++i) {
      const Bucket& b = s.buckets_[i];
      json shape = json::array();
      for (const auto& [n, v] : b.shape)
        shape.push_back(json::array({n, value_json(v)}));
      json bj;
      bj["name"] = b.name;
      bj["when"] = s.when_exprs_[i] ? json(s.when_exprs_[i]->expr.canonical()) : json();
      bj["shape"] = shape;
      buckets.push_back(bj);
    }
    j["buckets"] = buckets;
    j["params_as"] = s.params_as_ == ParamsAs::defines ? "defines" : "constexpr";
    j["search"] = {{"strategy", s.search_.strategy},
                   {"budget_s", optional_json(s.search_.budget_s)},
                   {"timeout_s", optional_json(s.search_.timeout_s)}};
    j["bench"] = {{"warmup_ms", s.bench_.warmup_ms},
                  {"rep_ms", s.bench_.rep_ms},
                  {"min_reps", s.bench_.min_reps},
                  {"max_reps", s.bench_.max_reps},
                  {"clear_l2", s.bench_.clear_l2}};
    return sha256_hex("tune-space/1\n" + j.dump());
  }
};

result<Space> Space::parse(std::string_view toml_text, std::string path) {
  if (auto d = size_problem(path, toml_text.size(), max_space_bytes, "a space file"))
    return fail(*d);
  SpaceParser p;
  p.doc = toml_text;
  p.s.path_ = std::move(path);
  return p.run();
}

result<Space> Space::load(const std::filesystem::path& path) {
  std::error_code ec;
  const std::string label = path.string();
  if (!std::filesystem::exists(path, ec)) return fail(label, 0, 0, "no such file");
  if (std::filesystem::is_directory(path, ec))
    return fail(label, 0, 0, "is a directory, expected a space file");
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (!ec)
    if (auto d = size_problem(label, size, max_space_bytes, "a space file")) return fail(*d);
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in && !in.eof()) return fail(label, 0, 0, "cannot read the file");
  return parse(text.str(), label);
}

diagnostic Space::at(SourcePos pos, std::string message) const {
  return diagnostic{path_, pos.line, pos.column, std::move(message)};
}

const Bucket* Space::bucket(std::string_view name) const {
  for (const auto& b : buckets_)
    if (b.name == name) return &b;
  return nullptr;
}

result<const Bucket*> Space::find_bucket(std::string_view name) const {
  if (const Bucket* b = bucket(name)) return b;
  const std::vector<std::string> names = bucket_names();
  return fail(path_, 0, 0,
              fmt::format("no bucket '{}' in the space of '{}'{} (it has {})", name, kernel_,
                          did_you_mean(name, names), quoted_list(names)));
}

std::size_t Space::bucket_index(const Bucket& bucket) const {
  for (std::size_t i = 0; i < buckets_.size(); ++i)
    if (&buckets_[i] == &bucket || buckets_[i].name == bucket.name) return i;
  throw error(fmt::format("bucket '{}' is not a bucket of {}", bucket.name, path_));
}

result<int> Space::first_rejecting(const Config& config, std::size_t b) const {
  const Bucket& bucket = buckets_[b];
  std::vector<const ParamValue*> values;
  for (std::size_t i = 0; i < prune_exprs_.size(); ++i) {
    const Expr& e = prune_exprs_[i].expr;
    values.clear();
    for (const auto& name : e.names()) {
      const ParamValue* v = config.find(name);
      values.push_back(v != nullptr ? v : bucket.shape_value(name));
    }
    auto kept = e.test_bound(values);
    if (!kept)
      return fail(at(prune_exprs_[i].at(kept.error().column),
                     fmt::format("{}, for config {} in bucket '{}'", one_line(kept.error().message),
                                 config.id(), bucket.name)));
    if (!*kept) return static_cast<int>(i);
  }
  return -1;
}

result<bool> Space::keeps(const Config& config, const Bucket& bucket) const {
  auto r = first_rejecting(config, bucket_index(bucket));
  if (!r) return fail(r.error());
  return *r < 0;
}

result<std::vector<Config>> Space::configs(const Bucket& bucket) const {
  const std::size_t b = bucket_index(bucket);
  const Bucket& bk = buckets_[b];
  // Bind each expression's names once: a shape name to the bucket's value (fixed), a param to
  // its position among the config's sorted params (the same for every config of the space).
  struct Bound {
    const Expr* expr;
    std::vector<const ParamValue*> values;
    std::vector<std::pair<std::size_t, std::size_t>> from_config;  // (slot, rank in the map)
  };
  std::vector<std::string> sorted;
  for (const auto& p : params_)
    sorted.push_back(p.name);
  std::sort(sorted.begin(), sorted.end());
  std::vector<Bound> bound;
  for (const auto& pe : prune_exprs_) {
    Bound bd{&pe.expr, {}, {}};
    for (std::size_t i = 0; i < pe.expr.names().size(); ++i) {
      const std::string& name = pe.expr.names()[i];
      auto it = std::lower_bound(sorted.begin(), sorted.end(), name);
      if (it != sorted.end() && *it == name) {
        bd.values.push_back(nullptr);
        bd.from_config.emplace_back(i, static_cast<std::size_t>(it - sorted.begin()));
      } else {
        bd.values.push_back(bk.shape_value(name));
      }
    }
    bound.push_back(std::move(bd));
  }
  std::vector<Config> out;
  std::vector<const ParamValue*> by_rank(sorted.size());
  for (const Config& c : configs_) {
    std::size_t r = 0;
    for (const auto& [name, value] : c.params())
      by_rank[r++] = &value;
    bool keep = true;
    for (std::size_t i = 0; keep && i < bound.size(); ++i) {
      Bound& bd = bound[i];
      for (const auto& [slot, rank] : bd.from_config)
        bd.values[slot] = by_rank[rank];
      auto kept = bd.expr->test_bound(bd.values);
      if (!kept)
        return fail(at(prune_exprs_[i].at(kept.error().column),
                       fmt::format("{}, for config {} in bucket '{}'",
                                   one_line(kept.error().message), c.id(), bk.name)));
      keep = *kept;
    }
    if (keep) out.push_back(c);
  }
  return out;
}

std::string Space::pruned_space_hash(const std::vector<Config>& pruned) {
  std::vector<std::string> ids;
  ids.reserve(pruned.size());
  for (const auto& c : pruned)
    ids.push_back(c.id());
  std::sort(ids.begin(), ids.end());
  std::uint64_t h = fnv1a64_offset;
  for (const auto& id : ids) {
    h = fnv1a64(id, h);
    h = fnv1a64(std::string_view("\0", 1), h);
  }
  return hex16(h);
}

result<const Bucket*> Space::select(const Shape& runtime_shape) const {
  auto lookup = [&](std::string_view name) -> const ParamValue* {
    for (const auto& [n, v] : runtime_shape)
      if (n == name) return &v;
    return nullptr;
  };
  std::vector<std::string> shape_text;
  for (const auto& [n, v] : runtime_shape)
    shape_text.push_back(n + "=" + v.canonical());
  for (std::size_t i = 0; i < buckets_.size(); ++i) {
    if (!when_exprs_[i]) return &buckets_[i];
    const auto& w = *when_exprs_[i];
    for (const auto& name : w.expr.names())
      if (lookup(name) == nullptr)
        return fail(at(
            w.at(w.expr.name_column(name)),
            fmt::format("the runtime shape ({}) has no value for '{}', which the when "
                        "of bucket '{}' reads",
                        shape_text.empty() ? "empty" : join(shape_text), name, buckets_[i].name)));
    auto holds = w.expr.test(lookup);
    if (!holds)
      return fail(at(w.at(holds.error().column),
                     fmt::format("{}, for the runtime shape ({}) in the when of bucket '{}'",
                                 holds.error().message, join(shape_text), buckets_[i].name)));
    if (*holds) return &buckets_[i];
  }
  return static_cast<const Bucket*>(nullptr);
}

}  // namespace tune
