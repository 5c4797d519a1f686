#include <tuner/core/record/winners_header.hpp>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include <tuner/core/base/cxx_names.hpp>
#include <tuner/core/space/expr_cxx.hpp>

namespace tune {

namespace {

// ---- names ----------------------------------------------------------------------------------

/// Comment text on one line: newlines flattened, no trailing backslash (the header uses `//`
/// comments, which a trailing backslash would continue onto the next line).
std::string comment_text(std::string_view s) {
  std::string out;
  for (char c : s)
    out += (c == '\n' || c == '\r') ? ' ' : c;
  while (!out.empty() && out.back() == '\\')
    out.pop_back();
  return out;
}

/// One member of the header's Shape.
struct ShapeMember {
  std::string name;
  bool is_string = false;
};

/// The shape names of every bucket in first-use order, each with its one kind; a diagnostic for
/// a reserved name or a name of two kinds.
result<std::vector<ShapeMember>> shape_members(const KernelBuild& build) {
  const Manifest& m = build.manifest;
  std::vector<ShapeMember> members;
  for (const auto& b : build.space.buckets()) {
    for (const auto& [name, value] : b.shape) {
      if (is_reserved_cxx_name(name))
        return fail("", 0, 0,
                    fmt::format("shape name '{}' of {} cannot be a C++ member name in the header",
                                name, display_path(m, m.space)));
      const std::string& key = name;  // clang before 16 captures no structured binding
      auto it = std::find_if(members.begin(), members.end(),
                             [&key](const ShapeMember& s) { return s.name == key; });
      if (it == members.end())
        members.push_back({name, value.is_string()});
      else if (it->is_string != value.is_string())
        return fail("", 0, 0,
                    fmt::format("shape name '{}' is an int in one bucket and a string in another "
                                "in {}: the header's Shape needs one type",
                                name, display_path(m, m.space)));
    }
  }
  return members;
}

// ---- what the header declares -----------------------------------------------------------------

bool fits_int(const ParamValue& v) {
  return v.is_int() && v.as_int() >= std::numeric_limits<int>::min() &&
         v.as_int() <= std::numeric_limits<int>::max();
}

/// The header's names and types, decided before any text is written.
struct Layout {
  std::string ns;
  std::vector<std::string> bucket_ids;                // enumerators, in the space's order
  std::vector<std::pair<std::string, int>> arch_ids;  // enumerator and SM number, manifest order
  std::vector<ShapeMember> shape;
  std::set<std::string> wide;  // int params with a value outside int: long long everywhere
  const std::map<std::string, std::map<std::string, std::string>>* maps = nullptr;  // [entry.map]
  const HeaderMapping* mapping = nullptr;
};

/// Unique enumerators for the buckets: a name's identifier, numbered from 2 on a clash.
std::vector<std::string> bucket_ids(const Space& space) {
  std::vector<std::string> ids;
  std::set<std::string> used;
  for (const auto& b : space.buckets()) {
    const std::string id = cxx_identifier(b.name);
    std::string unique = id;
    for (int n = 2; used.count(unique); ++n)
      unique = fmt::format("{}{}", id, n);
    used.insert(unique);
    ids.push_back(unique);
  }
  return ids;
}

/// Each arch's enumerator and SM number (`sm_90a` gives 90).
std::vector<std::pair<std::string, int>> arch_ids(const Manifest& m) {
  std::vector<std::pair<std::string, int>> ids;
  for (const auto& a : m.archs) {
    int sm = 0;
    for (char c : a.substr(3))
      if (std::isdigit(static_cast<unsigned char>(c))) sm = sm * 10 + (c - '0');
    ids.emplace_back(cxx_identifier(a), sm);
  }
  return ids;
}

std::set<std::string> wide_params(const Space& space, const WinnersTable& table) {
  std::set<std::string> wide;
  for (const auto& p : space.params())
    for (const auto& v : p.values)
      if (v.is_int() && !fits_int(v)) wide.insert(p.name);
  for (const auto& w : table.archs)
    for (const auto& b : w.buckets)
      for (const auto& [name, value] : b.config->params())
        if (value.is_int() && !fits_int(value)) wide.insert(name);
  return wide;
}

/// Throws tune::error unless `table` has a config for every arch and bucket of `build`.
void check_table(const KernelBuild& build, const WinnersTable& table) {
  bool ok = table.archs.size() == build.manifest.archs.size();
  for (std::size_t a = 0; ok && a < table.archs.size(); ++a) {
    const auto& buckets = table.archs[a].buckets;
    ok = table.archs[a].arch == build.manifest.archs[a] &&
         buckets.size() == build.space.buckets().size() &&
         std::all_of(buckets.begin(), buckets.end(),
                     [](const BucketWinner& b) { return b.config.has_value(); });
  }
  if (!ok)
    throw error(
        fmt::format("winners_header: the winners of '{}' are incomplete or of another "
                    "build",
                    build.manifest.kernel));
}

// ---- where a winner comes from, as the header's comments and tune_origin say it -------------

std::string record_origin(const ArchWinners& w) {
  return fmt::format("{}record {} ({})", w.record_state == RecordState::stale ? "stale " : "",
                     w.record_label, w.record_date.value_or("undated"));
}

std::string summary(const ArchWinners& w) {
  switch (w.record_state) {
    case RecordState::fresh:
      return record_origin(w) + ", fresh";
    case RecordState::stale:
      return record_origin(w);
    default:
      return fmt::format("no record ({} is missing)", w.record_label);
  }
}

std::string origin(const ArchWinners& w, const BucketWinner& b) {
  return b.source == WinnerSource::record ? record_origin(w) : "fallback: first incumbent";
}

// ---- text -------------------------------------------------------------------------------------

template <class... Args>
void put(std::string& h, fmt::format_string<Args...> format, Args&&... args) {
  fmt::format_to(std::back_inserter(h), format, std::forward<Args>(args)...);
}

/// Checked int64 arithmetic for `select` (expr_cxx.hpp), guarded so that two winners headers
/// in one translation unit define it once.
constexpr std::string_view detail_helpers = R"(#ifndef TUNE_WINNERS_DETAIL_V1
#define TUNE_WINNERS_DETAIL_V1
/// Checked int64 arithmetic for the `when` predicates: the tuner's semantics (C on int64), where
/// an overflow or a division by zero is an error. An error clears `ok`; the value is then 0.
namespace tune_winners::detail {
constexpr std::int64_t add(std::int64_t a, std::int64_t b, bool& ok) {
  std::int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) ok = false;
  return ok ? r : 0;
}
constexpr std::int64_t sub(std::int64_t a, std::int64_t b, bool& ok) {
  std::int64_t r = 0;
  if (__builtin_sub_overflow(a, b, &r)) ok = false;
  return ok ? r : 0;
}
constexpr std::int64_t mul(std::int64_t a, std::int64_t b, bool& ok) {
  std::int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) ok = false;
  return ok ? r : 0;
}
constexpr std::int64_t div(std::int64_t a, std::int64_t b, bool& ok) {
  if (b == 0 || (b == -1 && a == INT64_MIN)) ok = false;
  return ok ? a / b : 0;
}
constexpr std::int64_t mod(std::int64_t a, std::int64_t b, bool& ok) {
  if (b == 0 || (b == -1 && a == INT64_MIN)) ok = false;
  return ok ? a % b : 0;
}
constexpr std::int64_t neg(std::int64_t a, bool& ok) {
  if (a == INT64_MIN) ok = false;
  return ok ? -a : 0;
}
}  // namespace tune_winners::detail
#endif
)";

/// The top comment, the includes, the helpers, the namespace and the kernel's name.
void put_preamble(std::string& h, const KernelBuild& build, const WinnersTable& table,
                  const Layout& layout) {
  const Manifest& m = build.manifest;
  put(h, "// Generated by `tuner header` from {}: do not edit.\n", comment_text(m.path.string()));
  put(h, "// Kernel '{}', space {} (space hash {}).\n", comment_text(m.kernel),
      comment_text(display_path(m, m.space)), build.space.space_hash());
  for (const auto& w : table.archs)
    put(h, "// {}: {}\n", w.arch, comment_text(summary(w)));
  put(h, "#pragma once\n\n#include <cstdint>\n#include <optional>\n#include <string_view>\n");
  // What the mapped C++ text of string params names (`Layout::Col`) is declared in.
  for (const std::string& inc : layout.mapping->includes)
    put(h, "#include {}\n", inc.starts_with('<') ? inc : "\"" + inc + "\"");
  put(h, "\n{}", detail_helpers);
  put(h,
      "\nnamespace {} {{\n\n"
      "/// The kernel's name.\ninline constexpr std::string_view kernel = {};\n\n",
      layout.ns, cxx_string_literal(m.kernel));
}

/// `enum class Bucket` and `name(Bucket)`.
void put_buckets(std::string& h, const Space& space, const Layout& layout) {
  h += "/// The buckets (shape classes) of the space, in its order.\nenum class Bucket {\n";
  for (std::size_t i = 0; i < layout.bucket_ids.size(); ++i)
    put(h, "  {},  // '{}'\n", layout.bucket_ids[i], comment_text(space.buckets()[i].name));
  h += "};\n\n/// A bucket's name as the space and the records spell it.\n"
       "constexpr std::string_view name(Bucket b) {\n  switch (b) {\n";
  for (std::size_t i = 0; i < layout.bucket_ids.size(); ++i)
    put(h, "    case Bucket::{}:\n      return {};\n", layout.bucket_ids[i],
        cxx_string_literal(space.buckets()[i].name));
  h += "  }\n  return {};\n}\n\n";
}

/// `enum class Arch`, `name(Arch)` and `arch_for_sm`.
void put_archs(std::string& h, const Manifest& m, const Layout& layout) {
  h += "/// The architectures tuned for, in the manifest's order.\nenum class Arch {\n";
  for (const auto& [id, sm] : layout.arch_ids)
    put(h, "  {},\n", id);
  h += "};\n\n/// An architecture's name (`sm_90`).\nconstexpr std::string_view name(Arch a) {\n"
       "  switch (a) {\n";
  for (std::size_t i = 0; i < layout.arch_ids.size(); ++i)
    put(h, "    case Arch::{}:\n      return {};\n", layout.arch_ids[i].first,
        cxx_string_literal(m.archs[i]));
  h += "  }\n  return {};\n}\n\n"
       "/// The architecture of a compute capability (90 for 9.0): its own, else the highest one\n"
       "/// of its major version below it (8.6 runs sm_80's code; `sm_90a` serves 9.0 only), else\n"
       "/// nullopt: another major version is reported, never guessed.\n"
       "constexpr std::optional<Arch> arch_for_sm(int sm) {\n";
  for (const auto& [id, sm] : layout.arch_ids)
    put(h, "  if (sm == {}) return Arch::{};\n", sm, id);
  // The same-major fallback, highest first (the first arch of an SM number, as above).
  std::map<int, std::string, std::greater<>> family;
  for (std::size_t i = 0; i < m.archs.size(); ++i)
    if (!m.archs[i].ends_with('a'))
      family.try_emplace(layout.arch_ids[i].second, layout.arch_ids[i].first);
  for (const auto& [sm, id] : family)
    put(h, "  if (sm / 10 == {} && sm > {}) return Arch::{};\n", sm / 10, sm, id);
  h += "  return std::nullopt;\n}\n\n";
}

/// `struct Shape`.
void put_shape(std::string& h, const Layout& layout) {
  h += "/// A runtime shape: the shape names of every bucket.\nstruct Shape {\n";
  for (const auto& s : layout.shape)
    if (s.is_string)
      put(h, "  std::string_view {}{{}};\n", s.name);
    else
      put(h, "  std::int64_t {} = 0;\n", s.name);
  h += "};\n\n";
}

/// `select`: the buckets' `when` in order, up to the first bucket without one. A diagnostic
/// for a `when` that cannot be translated.
std::optional<diagnostic> put_select(std::string& h, const Space& space, const Layout& layout) {
  h += "/// The bucket of a runtime shape: the first whose `when` holds (a bucket without one\n"
       "/// takes every shape). nullopt when no bucket takes it, or when a `when` fails to\n"
       "/// evaluate (division by zero, overflow): reported, never guessed.\n"
       "constexpr std::optional<Bucket> select([[maybe_unused]] const Shape& s) {\n";
  auto kind = [&](std::string_view name) -> std::optional<ValueKind> {
    for (const auto& s : layout.shape)
      if (s.name == name) return s.is_string ? ValueKind::string : ValueKind::integer;
    return std::nullopt;
  };
  for (std::size_t i = 0; i < layout.bucket_ids.size(); ++i) {
    const Bucket& b = space.buckets()[i];
    if (!b.when) {
      put(h, "  return Bucket::{};  // '{}': no when\n}}\n\n", layout.bucket_ids[i],
          comment_text(b.name));
      return std::nullopt;
    }
    result<Expr> e = Expr::parse(*b.when);
    if (!e) return diagnostic{"", 0, 0, fmt::format("bucket '{}': {}", b.name, e.error().str())};
    result<std::string> cxx = expr_to_cxx(*e, kind);
    if (!cxx)
      return diagnostic{"", 0, 0, fmt::format("bucket '{}': {}", b.name, cxx.error().message)};
    put(h, R"(  {{  // '{}': {}
    bool ok = true;
    const std::int64_t v = {};
    if (!ok) return std::nullopt;
    if (v != 0) return Bucket::{};
  }}
)",
        comment_text(b.name), comment_text(*b.when), *cxx, layout.bucket_ids[i]);
  }
  h += "  return std::nullopt;\n}\n\n";
  return std::nullopt;
}

/// A winner's member: `int` for an int param whose values all fit one, else `long long`, so
/// that a param has one type in every winner; strings as `const char*`.
void put_value(std::string& h, const std::string& name, const ParamValue& v, bool wide,
               const Layout& layout) {
  if (v.is_string()) {
    // A string param the space maps to C++ text ([entry.map.NAME]) is that text: a value of
    // its own type, or a type alias for a param named in HeaderMapping::type_params.
    if (auto map = layout.maps->find(name);
        layout.mapping->map_strings && map != layout.maps->end()) {
      const std::string& text = map->second.at(v.as_string());
      if (layout.mapping->type_params.count(name) > 0)
        put(h, "  using {} = {};  // \"{}\"\n", name, text, comment_text(v.as_string()));
      else
        put(h, "  static constexpr auto {} = {};  // \"{}\"\n", name, text,
            comment_text(v.as_string()));
      return;
    }
  }
  if (!v.is_int()) {
    put(h, "  static constexpr const char* {} = {};\n", name, cxx_string_literal(v.as_string()));
    return;
  }
  const std::int64_t i = v.as_int();
  put(h, "  static constexpr {} {} = {};\n", wide ? "long long" : "int", name,
      i == std::numeric_limits<std::int64_t>::min() ? std::string("(-9223372036854775807LL - 1)")
                                                    : std::to_string(i) + (wide ? "LL" : ""));
}

/// `template <Arch, Bucket> struct Winner` and one specialization per arch and bucket.
void put_winners(std::string& h, const Space& space, const WinnersTable& table,
                 const Layout& layout) {
  h += "/// The winning config of an architecture and bucket: one static constexpr member per\n"
       "/// param, `tune_id` (the config id) and `tune_origin` (where it came from).\n"
       "template <Arch A, Bucket B>\nstruct Winner;\n\n";
  for (std::size_t a = 0; a < table.archs.size(); ++a) {
    const ArchWinners& w = table.archs[a];
    for (std::size_t i = 0; i < layout.bucket_ids.size(); ++i) {
      const Config& c = *w.buckets[i].config;
      const std::string from = origin(w, w.buckets[i]);
      put(h, "// {} '{}': {} ({})\ntemplate <>\nstruct Winner<Arch::{}, Bucket::{}> {{\n", w.arch,
          comment_text(space.buckets()[i].name), comment_text(c.id()), comment_text(from),
          layout.arch_ids[a].first, layout.bucket_ids[i]);
      for (const auto& [name, value] : c.params())
        put_value(h, name, value, layout.wide.count(name) > 0, layout);
      put(h,
          "  static constexpr const char* tune_id = {};\n"
          "  static constexpr const char* tune_origin = {};\n}};\n\n",
          cxx_string_literal(c.id()), cxx_string_literal(from));
    }
  }
}

constexpr std::string_view dispatch_by_sm = R"(/// As above, by compute capability (90 for sm_90).
template <class F>
constexpr bool dispatch(int sm, Bucket b, F&& f) {
  const std::optional<Arch> a = arch_for_sm(sm);
  return a ? dispatch(*a, b, static_cast<F&&>(f)) : false;
}

/// The shape's bucket, then its winner on `sm`: false when the architecture was not tuned
/// for or no bucket takes the shape.
template <class F>
constexpr bool dispatch(int sm, const Shape& s, F&& f) {
  const std::optional<Bucket> b = select(s);
  return b ? dispatch(sm, *b, static_cast<F&&>(f)) : false;
}

)";

/// The three `dispatch` overloads and the end of the namespace.
void put_dispatch(std::string& h, const Layout& layout) {
  h += "/// Calls `f(Winner<A, B>{})` for the architecture and bucket; returns false (and calls\n"
       "/// nothing) for an architecture that was not tuned for.\n"
       "template <class F>\nconstexpr bool dispatch(Arch a, Bucket b, F&& f) {\n"
       "  switch (a) {\n";
  for (const auto& [arch, sm] : layout.arch_ids) {
    put(h, "    case Arch::{}:\n      switch (b) {{\n", arch);
    for (const auto& bucket : layout.bucket_ids)
      put(h,
          "        case Bucket::{0}:\n          f(Winner<Arch::{1}, Bucket::{0}>{{}});\n"
          "          return true;\n",
          bucket, arch);
    h += "      }\n      return false;\n";
  }
  h += "  }\n  return false;\n}\n\n";
  h += dispatch_by_sm;
  put(h, "}}  // namespace {}\n", layout.ns);
}

}  // namespace

std::optional<diagnostic> header_name_problem(const KernelBuild& build) {
  const Manifest& m = build.manifest;
  for (const auto& p : build.space.params())
    if (is_reserved_cxx_name(p.name) || p.name == "tune_id" || p.name == "tune_origin")
      return diagnostic{"", 0, 0,
                        fmt::format("param '{}' of {} cannot be a C++ member name in the header",
                                    p.name, display_path(m, m.space))};
  result<std::vector<ShapeMember>> shape = shape_members(build);
  if (!shape) return shape.error();
  return std::nullopt;
}

result<std::string> winners_header(const KernelBuild& build, const WinnersTable& table,
                                   std::string_view name_space, const HeaderMapping& mapping) {
  if (std::optional<diagnostic> bad = header_name_problem(build)) return fail(*bad);
  for (const std::string& p : mapping.type_params)
    if (!build.space.entry_maps().contains(p))
      return fail("", 0, 0,
                  fmt::format("type param '{}' has no [entry.map.{}] in {}: only a string param "
                              "the space maps to C++ text can be a type",
                              p, p, display_path(build.manifest, build.manifest.space)));
  check_table(build, table);
  const Manifest& m = build.manifest;
  Layout layout;
  layout.ns =
      name_space.empty() ? "tune_winners::" + cxx_identifier(m.kernel) : std::string(name_space);
  layout.bucket_ids = bucket_ids(build.space);
  layout.arch_ids = arch_ids(m);
  layout.shape = shape_members(build).value();
  layout.wide = wide_params(build.space, table);
  layout.maps = &build.space.entry_maps();
  layout.mapping = &mapping;

  std::string h;
  put_preamble(h, build, table, layout);
  put_buckets(h, build.space, layout);
  put_archs(h, m, layout);
  put_shape(h, layout);
  if (std::optional<diagnostic> bad = put_select(h, build.space, layout)) return fail(*bad);
  put_winners(h, build.space, table, layout);
  put_dispatch(h, layout);
  return h;
}

}  // namespace tune
