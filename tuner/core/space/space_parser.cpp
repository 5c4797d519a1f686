// The reader of space files, part one: the entry points (Space::load, Space::parse), the top
// level, [params], [[configs]], require, the size limit and the enumeration. The other parts are
// listed in space_parser.hpp.
#include <tuner/core/space/space_parser.hpp>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>
#include <system_error>

#include <fmt/core.h>

#include <tuner/core/base/cxx_names.hpp>
#include <tuner/core/base/input_limits.hpp>
#include <tuner/core/base/safe_file.hpp>
#include <tuner/core/base/text.hpp>

namespace tune {

namespace detail {

namespace {

constexpr std::string_view reserved_names[] = {"schema", "kernel", "prune", "require", "params_as"};
constexpr std::string_view top_level_keys[] = {"schema",    "kernel", "prune",   "require",
                                               "params_as", "params", "configs", "buckets",
                                               "search",    "bench",  "entry"};

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

constexpr std::string_view token_rule =
    "letters, digits, '_', '.', ':', '+' and '-' (it becomes a -D token)";

/// A value as messages quote it: ints bare, strings in '...'.
std::string show(const ParamValue& v) {
  return v.is_int() ? std::to_string(v.as_int()) : "'" + v.as_string() + "'";
}

}  // namespace

bool is_identifier(std::string_view s) {
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0])) != 0) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
  });
}

bool SpaceParser::error(SourcePos pos, std::string message) {
  err = diagnostic{s.path_, pos.line, pos.column, std::move(message)};
  return false;
}
bool SpaceParser::error_at(const toml::node& n, std::string message) {
  return error(pos_of(n.source()), std::move(message));
}

result<Space> SpaceParser::run() {
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
  s.space_hash_ = s.meaning_hash();
  return std::move(s);
}

const TomlEntry* SpaceParser::find_top(std::string_view key) const {
  for (const auto& e : top)
    if (e.key == key) return &e;
  return nullptr;
}

// The order matters twice: a step reads what earlier ones filled in (configs need the params,
// prune the buckets' shape names, require the prune expressions and the size check's configs
// outside the product), and a file with several problems reports the first step's.
bool SpaceParser::read(const toml::table& root) {
  top = in_order(root);
  return check_top_level_keys() && check_reserved() && read_schema() && read_kernel() &&
         read_params() && read_configs() && read_params_as() && read_entry() && read_buckets() &&
         read_prune() && read_search() && read_bench() && check_size() && enumerate() &&
         read_require();
}

bool SpaceParser::check_top_level_keys() {
  for (const auto& e : top) {
    if (std::find(std::begin(top_level_keys), std::end(top_level_keys), e.key) !=
        std::end(top_level_keys))
      continue;
    const std::string what = e.node->is_array_of_tables() ? fmt::format("table [[{}]]", e.key)
                             : e.node->is_table()         ? fmt::format("table [{}]", e.key)
                                                          : fmt::format("key '{}'", e.key);
    return error(e.key_pos,
                 fmt::format("unknown top-level {} (expected schema, kernel, prune, require, "
                             "params_as, [params], [[configs]], [[buckets]], [search], "
                             "[bench] or [entry]){}",
                             what, did_you_mean(e.key, top_level_keys)));
  }
  return true;
}

// A reserved key under [params] usually means it was written after the table header; say so
// before complaining that it is missing at the top.
bool SpaceParser::check_reserved() {
  const TomlEntry* e = find_top("params");
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

bool SpaceParser::read_schema() {
  const TomlEntry* e = find_top("schema");
  if (e == nullptr) return error({}, "missing 'schema = 1' at the top of the file");
  if (!e->node->is_integer())
    return error_at(*e->node, fmt::format("'schema' must be an int, got {}", kind_of(*e->node)));
  const auto v = e->node->value<std::int64_t>().value_or(0);
  if (v != 1)
    return error_at(*e->node, fmt::format("unsupported schema {} (this tuner reads schema 1)", v));
  s.schema_ = 1;
  return true;
}

bool SpaceParser::read_kernel() {
  const TomlEntry* e = find_top("kernel");
  if (e == nullptr) return error({}, "missing 'kernel = \"<name>\"' at the top of the file");
  if (!e->node->is_string())
    return error_at(*e->node, fmt::format("'kernel' must be a string, got {}", kind_of(*e->node)));
  s.kernel_ = e->node->value<std::string>().value_or("");
  if (!is_kernel_name(s.kernel_))
    return error_at(*e->node,
                    fmt::format("kernel name '{}' may hold only letters, digits, '_', '.' and "
                                "'-', and may not start with '.'",
                                s.kernel_));
  return true;
}

bool SpaceParser::read_params_as() {
  const TomlEntry* e = find_top("params_as");
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

const Param* SpaceParser::param(std::string_view name) const {
  for (const auto& p : s.params_)
    if (p.name == name) return &p;
  return nullptr;
}
std::vector<std::string> SpaceParser::param_names() const {
  std::vector<std::string> out;
  for (const auto& p : s.params_)
    out.push_back(p.name);
  return out;
}

bool SpaceParser::read_params() {
  const TomlEntry* e = find_top("params");
  if (e == nullptr) return error({}, "missing [params] (the space is the product of its lists)");
  params_pos = e->key_pos;
  const toml::table* t = e->node->as_table();
  if (t == nullptr)
    return error(e->key_pos, fmt::format("'params' must be a table, got {}", kind_of(*e->node)));
  params_pos = pos_of(t->source());
  for (const auto& pe : in_order(*t))
    if (!read_param(pe)) return false;
  if (s.params_.empty()) return error(params_pos, "[params] declares no params");
  return true;
}

// One param: a non-empty list of distinct values, all ints or all strings.
bool SpaceParser::read_param(const TomlEntry& pe) {
  if (!is_identifier(pe.key))
    return error(pe.key_pos, fmt::format("param name '{}' is not a C identifier ({})", pe.key,
                                         identifier_rule));
  if (is_predefined_macro(pe.key))
    return error(pe.key_pos, fmt::format("param name '{}' is a macro of the C and C++ standard "
                                         "headers or of the compiler: the kernel's -D{}=... "
                                         "and the generated headers would clash with it; "
                                         "rename it",
                                         pe.key, pe.key));
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
  return true;
}

bool SpaceParser::read_config(const toml::node& n, std::string_view what, Config& out) {
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
      return error_at(*e.node, fmt::format("{}: '{}' is {}, but param '{}' holds {}", what, e.key,
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

bool SpaceParser::read_configs() {
  const TomlEntry* e = find_top("configs");
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

bool SpaceParser::in_product(const Config& c) const {
  for (const auto& p : s.params_) {
    const ParamValue* v = c.find(p.name);
    if (v == nullptr || std::find(p.values.begin(), p.values.end(), *v) == p.values.end())
      return false;
  }
  return true;
}

bool SpaceParser::check_size() {
  std::set<std::string> seen;
  for (const auto& c : s.explicit_)
    if (!in_product(c) && seen.insert(c.id()).second) outside.push_back(&c);
  std::uint64_t product = 1;
  bool overflow = false;
  for (const auto& p : s.params_)
    overflow = overflow || __builtin_mul_overflow(product, p.values.size(), &product);
  std::uint64_t total = 0;
  overflow = overflow || __builtin_add_overflow(product, outside.size(), &total);
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

bool SpaceParser::enumerate() {
  std::size_t total = outside.size();
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
  for (const Config* c : outside)
    s.configs_.push_back(*c);
  return true;
}

// ---- require ------------------------------------------------------------------------

bool SpaceParser::read_require() {
  const TomlEntry* e = find_top("require");
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
        std::none_of(outside.begin(), outside.end(), [&](const Config* x) { return *x == c; }))
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

}  // namespace detail

result<Space> Space::parse(std::string_view toml_text, std::string path) {
  if (auto d = size_problem(path, toml_text.size(), max_space_bytes, "a space file"))
    return fail(*d);
  detail::SpaceParser p;
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
  if (auto d = not_regular_problem(path)) return fail(*d);  // /dev/zero would never end
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (!ec)
    if (auto d = size_problem(label, size, max_space_bytes, "a space file")) return fail(*d);
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in && !in.eof()) return fail(label, 0, 0, "cannot read the file");
  return parse(text.str(), label);
}

}  // namespace tune
