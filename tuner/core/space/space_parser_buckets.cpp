// The reader of space files, part two: [[buckets]] (names, shapes, when) and the expressions
// of `when` and `prune`, parsed with their columns mapped to the file and type-checked against
// the params and shapes they read.
#include <tuner/core/space/space_parser.hpp>

#include <algorithm>

#include <fmt/core.h>

#include <tuner/core/base/cxx_names.hpp>
#include <tuner/core/base/text.hpp>

namespace tune::detail {

bool SpaceParser::read_buckets() {
  const TomlEntry* e = find_top("buckets");
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

bool SpaceParser::read_bucket(const toml::node& n, std::size_t index) {
  const toml::table* t = n.as_table();
  if (t == nullptr)
    return error_at(n,
                    fmt::format("[[buckets]] entry {} must be a table, got {}", index, kind_of(n)));
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
  if (!read_shape(t->get("shape"), b)) return false;
  std::optional<PlacedExpr> when;
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

// The bucket's `shape`: a table of named ints or strings; `{}` for none.
bool SpaceParser::read_shape(const toml::node* shape, Bucket& b) {
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
    if (is_predefined_macro(e.key))
      return error(e.key_pos, fmt::format("shape name '{}' in bucket '{}' is a macro of the C "
                                          "and C++ standard headers or of the compiler: the "
                                          "generated headers would clash with it; rename it",
                                          e.key, b.name));
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
  return true;
}

bool SpaceParser::place(const toml::node& n, std::string_view what, std::string_view where,
                        PlacedExpr& out) {
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

bool SpaceParser::check_when(const PlacedExpr& w, const Bucket& b) {
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
                 fmt::format("invalid when expression '{}' of bucket '{}': {}", one_line(e.text()),
                             b.name, kind.error().message));
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

bool SpaceParser::read_prune() {
  const TomlEntry* e = find_top("prune");
  if (e == nullptr) return true;
  const toml::array* a = e->node->as_array();
  if (a == nullptr)
    return error_at(*e->node,
                    fmt::format("'prune' must be a list of strings, got {}", kind_of(*e->node)));
  for (std::size_t i = 0; i < a->size(); ++i) {
    const toml::node& n = *a->get(i);
    if (!n.is_string())
      return error_at(n, fmt::format("prune entry {} must be a string, got {}", i + 1, kind_of(n)));
    PlacedExpr pe;
    if (!place(n, "prune", "", pe)) return false;
    if (!check_prune(pe)) return false;
    s.prune_.push_back(pe.expr.text());
    s.prune_pos_.push_back(pos_of(n.source()));
    s.prune_exprs_.push_back(std::move(pe));
  }
  return true;
}

bool SpaceParser::check_prune(const PlacedExpr& pe) {
  const Expr& e = pe.expr;
  std::vector<std::string> all_shape_names;
  for (const auto& b : s.buckets_)
    for (const auto& [n, v] : b.shape)
      if (std::find(all_shape_names.begin(), all_shape_names.end(), n) == all_shape_names.end())
        all_shape_names.push_back(n);
  for (const auto& name : e.names()) {
    if (param(name) != nullptr) continue;
    const SourcePos at = pe.at(e.name_column(name));
    if (std::find(all_shape_names.begin(), all_shape_names.end(), name) == all_shape_names.end()) {
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

}  // namespace tune::detail
